package unigine

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/decodetest"
	"github.com/pierrec/lz4/v4"
)

// spatialNodes parses a collision block in full, as §3.2 lays it out (edge
// flags, node indices, nodes with axis and four compact ints, then their
// bounds and split distances), and returns the node count, checking that
// the block ends where the nodes do. It decodes every compact int, unlike
// Scan, which counts their last bytes. It accepts over-long ints: the real
// ms14 capsule's collision block writes 63 as "bf 00", which Scan's
// counting of last bytes skips as well.
func spatialNodes(t *testing.T, name string, b []byte) int {
	t.Helper()
	pos := 0
	next := func(what string) int {
		at := pos
		var mag int64
		shift := 6
		for k := 0; ; k++ {
			if pos >= len(b) || k == maxCompactLen {
				t.Fatalf("%s: collision %s at %d: bad compact int", name, what, at)
			}
			c := b[pos]
			pos++
			if k == 0 {
				mag = int64(c & 0x3f)
			} else {
				mag |= int64(c&0x7f) << shift
				shift += 7
			}
			if c&0x80 == 0 {
				break
			}
		}
		if b[at]&0x40 != 0 {
			return int(-mag)
		}
		return int(mag)
	}
	pos += next("edge count")
	for range next("node-index count") {
		next("node index")
	}
	nodes := next("node count")
	for range nodes {
		pos++ // axis
		for range 4 {
			next("node link")
		}
	}
	if end := pos + nodes*(6*4+4); end != len(b) {
		t.Fatalf("%s: collision block of %d bytes, its %d nodes end at %d", name, len(b), nodes, end)
	}
	return nodes
}

// surfaceHeader returns header.json's fields of surface i.
func surfaceHeader(t *testing.T, st *decode.Structure, i int) decode.Fields {
	t.Helper()
	ss, ok := st.Header.Get("surfaces").([]decode.Fields)
	if !ok || i >= len(ss) {
		t.Fatalf("header.json has no surface %d", i)
	}
	return ss[i]
}

// checkCounts compares header.json's per-surface counts with the raw model
// Read (Decode's parser) makes of the same file.
func checkCounts(t *testing.T, name string, b []byte) {
	t.Helper()
	src := memSource(name, b)
	st, err := Format{}.Scan(context.Background(), src)
	if err != nil {
		t.Fatalf("scan %s: %v", name, err)
	}
	f, err := Read(context.Background(), memSource(name, b))
	if err != nil {
		t.Fatalf("read %s: %v", name, err)
	}
	lay, _ := layoutOf(f.Magic)
	var verts, tris int
	for i, s := range f.Surfaces {
		sf := surfaceHeader(t, st, i)
		want := map[string]int{
			"coordinate_vertices": len(s.Targets[0].Positions),
			"triangle_vertices":   len(s.Targets[0].Tangents),
			"coordinate_indices":  len(s.CIndices),
			"triangle_indices":    len(s.TIndices),
			"triangles":           len(s.CIndices) / 3,
			"uv0":                 len(s.UV0),
			"uv1":                 len(s.UV1),
			"colors":              len(s.Colors),
			"uv_sets":             min(len(s.UV0), 1) + min(len(s.UV1), 1),
		}
		if lay.weights {
			want["weights"] = len(s.Weights)
		}
		if lay.collision {
			want["spatial_tree_nodes"] = spatialNodes(t, name, s.Collision)
		}
		for k, v := range want {
			if got, ok := sf.Get(k).(int); !ok || got != v {
				t.Errorf("%s surface %d: %s = %v, Read has %d", name, i, k, sf.Get(k), v)
			}
		}
		if lay.targets {
			ts, _ := sf.Get("morph_targets").([]decode.Fields)
			if len(ts) != len(s.Targets) {
				t.Fatalf("%s surface %d: %d morph targets, Read has %d", name, i, len(ts), len(s.Targets))
			}
			for k, tg := range s.Targets {
				if ts[k].Get("name") != tg.Name || ts[k].Get("vertices") != len(tg.Positions) || ts[k].Get("tangents") != len(tg.Tangents) {
					t.Errorf("%s surface %d target %d: %v, Read has %q with %d vertices, %d tangents",
						name, i, k, ts[k], tg.Name, len(tg.Positions), len(tg.Tangents))
				}
			}
		}
		verts += len(s.Targets[0].Positions)
		tris += len(s.CIndices) / 3
	}
	c, _ := st.Header.Get("counts").(decode.Fields)
	if c.Get("vertices") != verts || c.Get("triangles") != tris {
		t.Errorf("%s: counts %v, Read has %d vertices, %d triangles", name, c, verts, tris)
	}
}

func TestScanCountsFixtures(t *testing.T) {
	for _, fx := range fixtures {
		b, err := os.ReadFile(filepath.Join(fixtureDir, fx.name))
		if err != nil {
			t.Fatal(err)
		}
		checkCounts(t, fx.name, b)
	}
	// Every index width, in each format.
	for _, magic := range []string{MagicMS15, MagicSK10, MagicMS14, MagicMS11} {
		b, err := Encode(bigGridFile(magic, 300))
		if err != nil {
			t.Fatal(err)
		}
		checkCounts(t, "grid."+magic, b)
	}
	// UV1, colours, several surfaces, morph targets without tangents.
	f := characterFile()
	s := &f.Surfaces[0]
	s.UV1 = append([][2]float32(nil), s.UV0...)
	s.Colors = make([][4]uint8, len(s.Targets[0].Tangents))
	b, err := Encode(f)
	if err != nil {
		t.Fatal(err)
	}
	checkCounts(t, "uv1.mesh_skinned", b)
}

func TestScanCountsRealFiles(t *testing.T) {
	for _, p := range realFiles(t) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		checkCounts(t, filepath.Base(p), b)
	}
}

// TestScanReadsBlocksOnce: the scan reads every block's data exactly once,
// and a chunk still reads its own block only.
func TestScanReadsBlocksOnce(t *testing.T) {
	b, err := Encode(multiFile())
	if err != nil {
		t.Fatal(err)
	}
	cr := &countingReader{r: bytes.NewReader(b)}
	src := &decode.Source{Name: "multi.mesh", R: cr, Size: int64(len(b))}
	st, err := Format{}.Scan(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	reads := cr.reads
	for _, c := range st.Chunks {
		if !strings.HasSuffix(c.Name, ".geometry.bin") && !strings.HasSuffix(c.Name, ".collision.bin") {
			continue
		}
		data := [2]int64{c.Offset + blockHeaderSize, c.Offset + c.Length}
		n := 0
		for _, r := range reads {
			if r[0] <= data[0] && r[1] >= data[1] && r[1]-r[0] == data[1]-data[0] {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%s: its data [%d, %d) was read %d times by the scan: %v", c.Name, data[0], data[1], n, reads)
		}
		cr.reads = nil
		if _, err := c.Bytes(cr); err != nil {
			t.Fatal(err)
		}
		for _, r := range cr.reads {
			if r[0] < c.Offset || r[1] > c.Offset+c.Length {
				t.Errorf("%s [%d, %d) read [%d, %d)", c.Name, c.Offset, c.Offset+c.Length, r[0], r[1])
			}
		}
	}
}

// manySurfaces is a file of k equal compressed surfaces of an n×n grid.
func manySurfaces(k, n int) *File {
	f := &File{Magic: MagicMS15}
	for i := range k {
		g := withCollision(grid(n, 10))
		g.Name = fmt.Sprintf("tile%d", i)
		f.Surfaces = append(f.Surfaces, g)
	}
	f.Bounds = fileBounds(f.Surfaces)
	return f
}

// TestScanHoldsOneBlock: scanning eight equal surfaces allocates about one
// block's worth (the reused buffers), not eight.
func TestScanHoldsOneBlock(t *testing.T) {
	b, err := Encode(manySurfaces(8, 200))
	if err != nil {
		t.Fatal(err)
	}
	src := memSource("tiles.mesh", b)
	var m runtimeMem
	m.start()
	st, err := Format{}.Scan(context.Background(), src)
	alloc := m.stop()
	if err != nil {
		t.Fatal(err)
	}
	g, _ := surfaceHeader(t, st, 0).Get("geometry_block").(decode.Fields)
	raw, _ := g.Get("uncompressed_size").(int64)
	packed, _ := g.Get("compressed_size").(int64)
	if raw < 100_000 {
		t.Fatalf("block of %d bytes: too small to tell", raw)
	}
	// The collision blocks are read beside the geometry blocks, into
	// buffers of their own.
	c, _ := surfaceHeader(t, st, 7).Get("collision_block").(decode.Fields)
	craw, _ := c.Get("uncompressed_size").(int64)
	cpacked, _ := c.Get("compressed_size").(int64)
	if limit := uint64(raw+packed+craw+cpacked) + 256<<10; alloc > limit {
		t.Errorf("scan of 8 surfaces (blocks of %d bytes, %d compressed) allocated %d bytes, more than one geometry and one collision block's %d", raw, packed, alloc, limit)
	}
}

// TestScanBrokenBlock: a corrupt LZ4 block in the second surface gives the
// first surface's counts, the header's own fields, and a positioned error.
func TestScanBrokenBlock(t *testing.T) {
	f := manySurfaces(3, 40)
	b, err := Encode(f)
	if err != nil {
		t.Fatal(err)
	}
	st, err := Format{}.Scan(context.Background(), memSource("tiles.mesh", b))
	if err != nil {
		t.Fatal(err)
	}
	g, _ := surfaceHeader(t, st, 1).Get("geometry_block").(decode.Fields)
	off, _ := g.Get("offset").(int64)
	if g.Get("lz4") != true {
		t.Fatal("the fixture's block is stored, not LZ4")
	}
	// An LZ4 sequence's match offset of zero is invalid: make the first
	// sequence's literals run past the block's end instead.
	bad := bytes.Clone(b)
	bad[off+blockHeaderSize] = 0xf0
	for i := int64(1); i < 8; i++ {
		bad[off+blockHeaderSize+i] = 0xff
	}
	if _, err := lz4.UncompressBlock(bad[off+blockHeaderSize:off+blockHeaderSize+int64(binary.LittleEndian.Uint64(b[off+8:]))], make([]byte, binary.LittleEndian.Uint64(b[off:]))); err == nil {
		t.Fatal("the corrupted block still decompresses")
	}
	st, err = Format{}.Scan(context.Background(), memSource("tiles.mesh", bad))
	var fe *decode.FormatError
	if !errors.As(err, &fe) || fe.Section != geometrySection(1) || fe.Offset != off+blockHeaderSize {
		t.Fatalf("error %v, want surface 1's block data at %d", err, off+blockHeaderSize)
	}
	if st == nil {
		t.Fatal("no partial header")
	}
	first := surfaceHeader(t, st, 0)
	if first.Get("triangle_vertices") != 1600 || first.Get("spatial_tree_nodes") != 1 || first.Get("uv0") != 1600 {
		t.Errorf("surface 0's counts missing from the partial header: %v", first)
	}
	second := surfaceHeader(t, st, 1)
	if second.Get("triangle_vertices") != nil || second.Get("name") != "tile1" || second.Get("coordinate_vertices") != 1600 {
		t.Errorf("surface 1: %v", second)
	}
	if len(st.Chunks) != 8 { // header, 3 × (geometry, collision), offsets
		t.Errorf("%d chunks in the partial structure", len(st.Chunks))
	}

	// The first block, compressed, claiming 0 bytes uncompressed (LZ4's
	// decoder must not be handed a nil buffer for it).
	g, _ = surfaceHeader(t, st, 0).Get("geometry_block").(decode.Fields)
	off0, _ := g.Get("offset").(int64)
	bad = bytes.Clone(b)
	binary.LittleEndian.PutUint64(bad[off0:], 0)
	st, err = Format{}.Scan(context.Background(), memSource("tiles.mesh", bad))
	if !errors.As(err, &fe) || fe.Section != geometrySection(0) || st == nil || surfaceHeader(t, st, 0).Get("coordinate_vertices") != 1600 {
		t.Fatalf("error %v, want surface 0's block, with the header's counts kept", err)
	}

	// A block that decompresses but lies about a count inside it.
	f = manySurfaces(2, 40)
	f.Surfaces[1].Stored = true
	b, _ = Encode(f)
	st, _ = Format{}.Scan(context.Background(), memSource("tiles.mesh", b))
	g, _ = surfaceHeader(t, st, 1).Get("geometry_block").(decode.Fields)
	off, _ = g.Get("offset").(int64)
	tc := off + blockHeaderSize + 12*1600 // the tangent count after the positions
	bad = bytes.Clone(b)
	copy(bad[tc:], appendCompact(nil, 8191)) // more than the bytes left hold
	st, err = Format{}.Scan(context.Background(), memSource("tiles.mesh", bad))
	_, rerr := Read(context.Background(), memSource("tiles.mesh", bad))
	if !errors.As(err, &fe) || fe.Field != "surface.tangent_count" || fe.Offset < 12*1600 || rerr == nil || err.Error() != rerr.Error() {
		t.Fatalf("error %v, want the tangent count after %d within the block, as Read says: %v", err, 12*1600, rerr)
	}
	second = surfaceHeader(t, st, 1)
	if surfaceHeader(t, st, 0).Get("triangle_vertices") != 1600 || second.Get("triangle_vertices") != nil || second.Get("coordinate_vertices") != 1600 {
		t.Errorf("partial header: %v / %v", surfaceHeader(t, st, 0), second)
	}
}

// BenchmarkScanUnigine scans the ≈1M-triangle generated ms15 (the same file
// as BenchmarkConvertUnigine): header.json's cost, block reads and
// decompression included. SetBytes is the source size.
func BenchmarkScanUnigine(b *testing.B) {
	src, err := Encode(bigGridFile(MagicMS15, 708))
	if err != nil {
		b.Fatal(err)
	}
	decodetest.Loop(b, int64(len(src)), func() error {
		st, err := Format{}.Scan(context.Background(), memSource("bench.mesh", src))
		if err != nil {
			return err
		}
		if _, err := decode.HeaderJSON(st.Header); err != nil {
			return err
		}
		return nil
	})
}

// TestScanCollisionBeside: a large collision block, read beside its
// geometry block, gives the header.json and the error of one pass (as on
// one CPU): intact, with the collision block broken, with the geometry
// block broken (its error first), and with both.
func TestScanCollisionBeside(t *testing.T) {
	b, err := Encode(bigGridFile(MagicMS15, 400))
	if err != nil {
		t.Fatal(err)
	}
	st, err := Format{}.Scan(context.Background(), memSource("c.mesh", b))
	if err != nil {
		t.Fatal(err)
	}
	block := func(name string) (off int64) {
		f, _ := surfaceHeader(t, st, 0).Get(name).(decode.Fields)
		off, _ = f.Get("offset").(int64)
		if raw, _ := f.Get("uncompressed_size").(int64); name == "collision_block" && raw < minConcurrentCollision {
			t.Fatalf("collision block of %d bytes: not read beside", raw)
		}
		return off
	}
	geom, coll := block("geometry_block"), block("collision_block")
	breakAt := func(b []byte, off int64) []byte {
		bad := bytes.Clone(b)
		bad[off+blockHeaderSize] = 0xf0 // literals running past the block
		for i := int64(1); i < 8; i++ {
			bad[off+blockHeaderSize+i] = 0xff
		}
		return bad
	}
	for _, c := range []struct {
		name string
		b    []byte
	}{{"intact", b}, {"collision", breakAt(b, coll)}, {"geometry", breakAt(b, geom)}, {"both", breakAt(breakAt(b, coll), geom)}} {
		scan := func(procs int) (string, string) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			st, err := Format{}.Scan(context.Background(), memSource("c.mesh", c.b))
			j, jerr := decode.HeaderJSON(st.Header)
			if jerr != nil {
				t.Fatal(jerr)
			}
			return string(j), fmt.Sprint(err)
		}
		j1, e1 := scan(1)
		j2, e2 := scan(2)
		if j1 != j2 || e1 != e2 {
			t.Errorf("%s: beside: %s\n%s\none pass: %s\n%s", c.name, e2, j2, e1, j1)
		}
		if (c.name == "intact") != (e1 == "<nil>") {
			t.Errorf("%s: error %s", c.name, e1)
		}
	}
}
