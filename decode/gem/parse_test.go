package gem

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/decodetest"
)

func TestSniffAndStripExt(t *testing.T) {
	for _, c := range []struct {
		name string
		head string
		want bool
	}{
		{"a.ply", "EPLYBNDS", true},
		{"A.PLY", "BPLY", true},
		{"x.Ply", "PM01", true},
		{"bunny.ply", "ply\nformat ascii 1.0\n", false}, // Stanford
		{"a.ply", "EPL", false},
		{"a.plyx", "EPLY", false},
		{"a.mesh", "EPLY", false},
		{"a.ply", "XPLY", false},
	} {
		if got := (Format{}).Sniff(c.name, []byte(c.head)); got != c.want {
			t.Errorf("Sniff(%q, %q) = %v", c.name, c.head, got)
		}
	}
	for in, want := range map[string]string{"a.b.ply": "a.b", "X.PLY": "X", "noext": "noext", ".ply": ".ply", "a.obj": "a.obj"} {
		if got := (Format{}).StripExt(in); got != want {
			t.Errorf("StripExt(%q) = %q, want %q", in, got, want)
		}
	}
	if (Format{}).Name() != "gem-ply" {
		t.Error("name")
	}
}

// le builds little-endian bytes from a mix of values.
func le(parts ...any) []byte {
	var b []byte
	for _, p := range parts {
		switch v := p.(type) {
		case string:
			b = append(b, v...)
		case []byte:
			b = append(b, v...)
		case uint8:
			b = append(b, v)
		case uint16:
			b = binary.LittleEndian.AppendUint16(b, v)
		case uint32:
			b = binary.LittleEndian.AppendUint32(b, v)
		case int32:
			b = binary.LittleEndian.AppendUint32(b, uint32(v))
		case float32:
			b = binary.LittleEndian.AppendUint32(b, math.Float32bits(v))
		default:
			panic("le: unsupported type")
		}
	}
	return b
}

func parseOne(t *testing.T, magic string, chunk []byte) Chunk {
	t.Helper()
	f, err := Parse(context.Background(), "t.ply", append([]byte(magic), chunk...))
	if err != nil {
		t.Fatalf("Parse: %v", err)
	}
	if len(f.Chunks) != 1 {
		t.Fatalf("%d chunks", len(f.Chunks))
	}
	sp := f.Chunks[0].Where()
	if sp.Offset != 4 || sp.Length != int64(len(chunk)) {
		t.Errorf("span %+v, want offset 4 length %d", *sp, len(chunk))
	}
	return f.Chunks[0]
}

// TestChunkTable parses one hand-written chunk of each type and branch
// (bytes laid out from the specification, not by the encoder) and checks
// the parse, then that the encoder writes the same bytes back.
func TestChunkTable(t *testing.T) {
	cases := []struct {
		name  string
		magic string
		bytes []byte
		want  Chunk
	}{
		{"INDX", "EPLY", le("INDX", uint32(3), uint16(0), uint16(1), uint16(65535)),
			&Indices{Count: 3, Values: []uint32{0, 1, 65535}}},
		{"IND4", "BPLY", le("IND4", uint32(2), uint32(70000), uint32(1)),
			&Indices{Wide: true, Count: 2, Values: []uint32{70000, 1}}},
		{"VERT", "EPLY", le("VERT", uint32(2), uint16(3), uint16(5), []byte{1, 2, 3, 4, 5, 6}),
			&Vert{Count: 2, Size: 3, Flags: 5, Data: []byte{1, 2, 3, 4, 5, 6}}},
		{"BAS2", "BPLY", le("BAS2", float32(1), float32(2), float32(3), float32(4), float32(5), float32(6),
			float32(7), float32(8), float32(9), float32(10), float32(11), float32(12)),
			&Basis{Poly: [3][2]float32{{1, 2}, {3, 4}, {5, 6}}, Tex: [3][2]float32{{7, 8}, {9, 10}, {11, 12}}}},
		{"InfG", "BPLY", le("InfG", int32(-1), int32(2), int32(3), int32(-4), uint32(2), uint16(0x8001), uint16(5)),
			&InfoGrid{Start: [2]int32{-1, 2}, End: [2]int32{3, -4}, Count: 2, Faces: []uint16{0x8001, 5}}},
		{"BNDS", "EPLY", le("BNDS", float32(-1), float32(-2), float32(-3), float32(1), float32(2), float32(3)),
			&Bounds{Min: [3]float32{-1, -2, -3}, Max: [3]float32{1, 2, 3}}},
		{"ADJA", "EPLY", le("ADJA", int32(1), uint16(1), uint16(0xFFFF), uint16(2)),
			&Adjacency{Count: 1, Faces: [][3]uint16{{1, 0xFFFF, 2}}}},
		{"SHDW", "EPLY", le("SHDW", int32(3), []byte{1, 0, 1}), &Shadow{Count: 3, Casts: []byte{1, 0, 1}}},
		{"MROR", "EPLY", le("MROR"), &Mirror{}},
		{"MARK", "EPLY", le("MARK", uint32(2), []byte{9, 8}), &Markup{Size: 2, Data: []byte{9, 8}}},
		{"SKIN", "EPLY", le("SKIN", uint32(2), uint8(3), "abc", uint8(0)), &Skin{Bones: []string{"abc", ""}}},
		{"MESH one texture", "EPLY", le("MESH", uint32(0x152), uint32(0), uint32(1), uint32(0x4), uint8(5), "a.dds"),
			&Submesh{Kind: KindMESH, FVF: 0x152, FaceCount: 1, Flags: 4, Diffuse: "a.dds"}},
		{"MESH material + specular colour", "EPLY", le("MESH", uint32(0x112), uint32(1), uint32(2), uint32(0x604), []byte{1, 2, 3, 4}, uint8(1), "m"),
			&Submesh{Kind: KindMESH, FVF: 0x112, FaceStart: 1, FaceCount: 2, Flags: 0x604, SpecularColor: [4]byte{1, 2, 3, 4}, Material: "m"}},
		{"MESH specular + bump textures", "EPLY", le("MESH", uint32(0x112), uint32(0), uint32(1), uint32(0x300), []byte{1, 2, 3, 4},
			uint8(1), "d", uint8(1), "s", uint8(1), "b"),
			&Submesh{Kind: KindMESH, FVF: 0x112, FaceCount: 1, Flags: 0x300, SpecularColor: [4]byte{1, 2, 3, 4}, Diffuse: "d", Specular: "s", Bump: "b"}},
		{"MESH specular only", "EPLY", le("MESH", uint32(0x112), uint32(0), uint32(1), uint32(0x200), []byte{9, 9, 9, 9}, uint8(1), "d", uint8(1), "s"),
			&Submesh{Kind: KindMESH, FVF: 0x112, FaceCount: 1, Flags: 0x200, SpecularColor: [4]byte{9, 9, 9, 9}, Diffuse: "d", Specular: "s"}},
		{"MESH bump only", "EPLY", le("MESH", uint32(0x112), uint32(0), uint32(1), uint32(0x100), uint8(1), "d", uint8(1), "b"),
			&Submesh{Kind: KindMESH, FVF: 0x112, FaceCount: 1, Flags: 0x100, Diffuse: "d", Bump: "b"}},
		{"MESH two UV sets: two diffuse", "EPLY", le("MESH", uint32(0x212), uint32(0), uint32(1), uint32(0), uint8(1), "x", uint8(1), "y"),
			&Submesh{Kind: KindMESH, FVF: 0x212, FaceCount: 1, Diffuse: "x", Diffuse1: "y"}},
		{"MESH flag 0x1000: two diffuse", "EPLY", le("MESH", uint32(0x112), uint32(0), uint32(1), uint32(0x1000), uint8(1), "x", uint8(1), "y"),
			&Submesh{Kind: KindMESH, FVF: 0x112, FaceCount: 1, Flags: 0x1000, Diffuse: "x", Diffuse1: "y"}},
		{"MESH bone map under 0x800", "EPLY", le("MESH", uint32(0x1118), uint32(0), uint32(1), uint32(0xc14), uint8(1), "m", uint8(2), []byte{0, 3}),
			&Submesh{Kind: KindMESH, FVF: 0x1118, FaceCount: 1, Flags: 0xc14, Material: "m", BoneMap: []byte{0, 3}, HasBoneMap: true, BoneMapRule: "0x800"}},
		{"MESH 0x10 without a map (end of file follows)", "EPLY", le("MESH", uint32(0x1118), uint32(0), uint32(1), uint32(0x14), uint8(1), "t"),
			&Submesh{Kind: KindMESH, FVF: 0x1118, FaceCount: 1, Flags: 0x14, Diffuse: "t"}},
		{"MESH 0x10 with the original's map (end of file after it)", "EPLY", le("MESH", uint32(0x1118), uint32(0), uint32(1), uint32(0x14), uint8(1), "t", uint8(2), []byte{1, 2}),
			&Submesh{Kind: KindMESH, FVF: 0x1118, FaceCount: 1, Flags: 0x14, Diffuse: "t", BoneMap: []byte{1, 2}, HasBoneMap: true, BoneMapRule: "0x10"}},
		{"SBM1", "EPLY", le("SBM1", []byte{0x02, 0, 0, 0x31, 1, 0, 0xFF}, uint8(2), uint32(0xAABBCCDD), uint8(0xFF), int32(4), int32(5), uint32(0x41), uint8(2), "mm"),
			&Submesh{Kind: KindSBM1, Elements: []Element{{0x02, 0, 0}, {0x31, 1, 0}}, Tags: []Tag{{2, 0xAABBCCDD}}, FaceStart: 4, FaceCount: 5, Flags: 0x41, Material: "mm"}},
		{"SUBM under BPLY is AS2", "BPLY", le("SUBM", []byte{0x02, 0, 0, 0x12, 0, 0, 0x26, 0, 0, 0x31, 0, 0, 0xFF, 0xFF}, uint32(0), uint32(0x1176), uint32(0), uint32(0x1914), uint32(0x1404), uint8(8), "mtl0.mtl"),
			&Submesh{Kind: KindSUBMAS2, Elements: []Element{{0x02, 0, 0}, {0x12, 0, 0}, {0x26, 0, 0}, {0x31, 0, 0}}, FaceCount: 0x1176, Unknown: [2]uint32{0, 0x1914}, Flags: 0x1404, Material: "mtl0.mtl"}},
		{"SUBM under PM01 is GEM3", "PM01", le("SUBM", uint16(0x213), uint16(1), uint16(2), uint16(3), uint16(4), uint16(3), uint8(2), []byte{5, 6}, uint8(1), "g"),
			&Submesh{Kind: KindSUBMGEM3, VertexFormat: 0x213, FaceStart: 1, FaceCount: 2, VertexStart: 3, VertexCount: 4, Flags: 3, BoneMap: []byte{5, 6}, HasBoneMap: true, BoneMapRule: "skin", Material: "g"}},
		{"GEM3 SUBM without skin", "PM01", le("SUBM", uint16(0x13), uint16(0), uint16(1), uint16(0), uint16(3), uint16(1), uint8(0)),
			&Submesh{Kind: KindSUBMGEM3, VertexFormat: 0x13, FaceCount: 1, VertexCount: 3, Flags: 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := parseOne(t, c.magic, c.bytes)
			*got.Where() = Span{}
			if !reflect.DeepEqual(got, c.want) {
				t.Errorf("parsed\n %#v\nwant\n %#v", got, c.want)
			}
			enc, err := Encode(&File{Magic: c.magic, Chunks: []Chunk{got}})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(enc[4:], c.bytes) {
				t.Errorf("encoded % x\nwant      % x", enc[4:], c.bytes)
			}
		})
	}
}

// TestBoneMapReadings covers the 0x10 lookahead: a map is read under 0x10
// only when the bytes after it start a chunk, and a chunk right away means
// no map.
func TestBoneMapReadings(t *testing.T) {
	mesh := func(flags uint32, tail ...any) []byte {
		return le(append([]any{"EPLY", "MESH", uint32(0x1118), uint32(0), uint32(0), flags, uint8(1), "t"}, tail...)...)
	}
	// 0x10, a chunk follows at once: no map.
	f, err := Parse(context.Background(), "t.ply", mesh(0x14, "MROR"))
	if err != nil || f.Chunks[0].(*Submesh).HasBoneMap || len(f.Chunks) != 2 {
		t.Fatalf("0x10 then MROR: %v %+v", err, f)
	}
	// 0x10, map then chunk: the original's reading.
	f, err = Parse(context.Background(), "t.ply", mesh(0x14, uint8(1), uint8(4), "MROR"))
	if err != nil || f.Chunks[0].(*Submesh).BoneMapRule != "0x10" || len(f.Chunks) != 2 {
		t.Fatalf("0x10 map then MROR: %v", err)
	}
	// 0x10, neither reading fits: an error naming the field.
	_, err = Parse(context.Background(), "t.ply", mesh(0x14, uint8(1), uint8(4), "XXXX"))
	var fe *decode.FormatError
	if !errors.As(err, &fe) || fe.Field != "bone_map" || !strings.Contains(fe.Section, "MESH") {
		t.Fatalf("bad 0x10 bytes: %v", err)
	}
	// Neither 0x10 nor 0x800: no map, even when the bytes could be one.
	_, err = Parse(context.Background(), "t.ply", mesh(0x4, uint8(1), uint8(4), "MROR"))
	if !errors.As(err, &fe) || fe.Field != "fourcc" || fe.Offset != int64(len(mesh(0x4))) {
		t.Fatalf("no flag, stray bytes: %v", err)
	}
}

func TestUnknownFourCC(t *testing.T) {
	b := le("EPLY", "BNDS", make([]byte, 24), "ABCD", make([]byte, 8))
	st, err := Format{}.Scan(context.Background(), &decode.Source{Name: "u.ply", R: bytes.NewReader(b), Size: int64(len(b))})
	var fe *decode.FormatError
	if !errors.As(err, &fe) || fe.Offset != 32 || fe.Field != "fourcc" || !strings.Contains(fe.Error(), `"ABCD"`) || !strings.Contains(fe.Error(), "chunk 1") {
		t.Fatalf("unknown FourCC: %v", err)
	}
	if st == nil || len(st.Chunks) != 1 || st.Chunks[0].Name != "00_BNDS.bin" || st.Header.Get("bounds") == nil {
		t.Fatalf("partial structure missing: %+v", st)
	}
	if _, err := Parse(context.Background(), "u.ply", []byte("ply\nformat")); err == nil {
		t.Fatal("Stanford header parsed")
	}
}

// TestHugeClaims: headers claiming 2^31 elements fail at once, before any
// allocation, with an error naming the chunk, field and offset.
func TestHugeClaims(t *testing.T) {
	for _, c := range []struct {
		name  string
		b     []byte
		field string
	}{
		{"VERT 2^31 vertices", le("EPLY", "VERT", uint32(1<<31), uint16(32), uint16(0), make([]byte, 64)), "vertices"},
		{"INDX 2^31", le("EPLY", "INDX", uint32(1<<31), make([]byte, 64)), "indices"},
		{"IND4 2^32-1", le("BPLY", "IND4", uint32(math.MaxUint32), make([]byte, 64)), "indices"},
		{"ADJA 2^31-1", le("EPLY", "ADJA", int32(math.MaxInt32), make([]byte, 64)), "adjacencies"},
		{"ADJA negative", le("EPLY", "ADJA", int32(-1), make([]byte, 64)), "face_count"},
		{"SHDW", le("EPLY", "SHDW", int32(1<<30), make([]byte, 8)), "shadow_infos"},
		{"MARK", le("EPLY", "MARK", uint32(1<<31), make([]byte, 8)), "marks"},
		{"InfG", le("BPLY", "InfG", make([]byte, 16), uint32(1<<31), make([]byte, 8)), "faces"},
		{"SKIN 2^31 bones", le("EPLY", "SKIN", uint32(1<<31), make([]byte, 8)), "bone_names"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, mode := range []string{"decode", "scan"} {
				var err error
				allocs := testing.AllocsPerRun(1, func() {
					if mode == "decode" {
						_, err = Format{}.Decode(context.Background(), &decode.Source{Name: "h.ply", R: bytes.NewReader(c.b), Size: int64(len(c.b))})
					} else {
						_, err = Format{}.Scan(context.Background(), &decode.Source{Name: "h.ply", R: bytes.NewReader(c.b), Size: int64(len(c.b))})
					}
				})
				var fe *decode.FormatError
				if !errors.As(err, &fe) || fe.Field != c.field || fe.Offset == 0 || fe.Section == "" {
					t.Fatalf("%s: %v", mode, err)
				}
				if allocs > 100 {
					t.Errorf("%s: %v allocations", mode, allocs)
				}
			}
		})
	}
}

// allFixtureBytes returns the committed fixtures.
func allFixtureBytes(t testing.TB) map[string][]byte {
	out := map[string][]byte{}
	for _, fx := range fixtures() {
		b, err := os.ReadFile(fixturePath(fx.name))
		if err != nil {
			t.Fatal(err)
		}
		out[fx.name] = b
	}
	return out
}

// decodeBoth runs Scan and Decode and returns their errors; it must not panic.
func decodeBoth(name string, b []byte) (scanErr, decErr error) {
	src := &decode.Source{Name: name, R: bytes.NewReader(b), Size: int64(len(b))}
	_, scanErr = Format{}.Scan(context.Background(), src)
	_, decErr = Format{}.Decode(context.Background(), src)
	return
}

// TestTruncation cuts every fixture and real file at every chunk boundary
// (and just inside each chunk): Scan and Decode must fail with a
// FormatError that wraps ErrTruncated, or succeed when the cut leaves whole
// chunks that still make sense.
func TestTruncation(t *testing.T) {
	files := allFixtureBytes(t)
	if _, ok := decodetest.RealData(t, "gem"); ok {
		for _, p := range realFiles(t) {
			b, _ := os.ReadFile(p)
			files[p] = b
		}
	}
	for name, b := range files {
		f, err := Parse(context.Background(), name, b)
		if err != nil {
			t.Fatal(err)
		}
		for ci, c := range f.Chunks {
			sp := c.Where()
			// A cut may also be blamed on the chunk before: a MESH read by
			// the 0x10 rule needs to see the next chunk's FourCC.
			from := sp.Offset
			if ci > 0 {
				from = f.Chunks[ci-1].Where().Offset
			}
			for _, cut := range []int64{sp.Offset + 1, sp.Offset + 4, sp.Offset + 5, sp.Offset + sp.Length - 1} {
				if cut >= int64(len(b)) || cut <= sp.Offset {
					continue
				}
				se, de := decodeBoth(name, b[:cut])
				for _, err := range []error{se, de} {
					var fe *decode.FormatError
					if !errors.As(err, &fe) || fe.File != name {
						t.Fatalf("%s cut at %d (inside %s): %v", name, cut, c.FourCC(), err)
					}
					if fe.Offset < from || fe.Offset > cut {
						t.Errorf("%s cut at %d: error offset %d outside chunk at %d", name, cut, fe.Offset, sp.Offset)
					}
				}
			}
			// Cut at the boundary after this chunk: Scan succeeds with
			// the chunks before; Decode either succeeds or names what is
			// missing.
			end := sp.Offset + sp.Length
			if end < int64(len(b)) {
				se, de := decodeBoth(name, b[:end])
				if se != nil {
					t.Errorf("%s cut after chunk %d: Scan: %v", name, sp.Index, se)
				}
				var fe *decode.FormatError
				if de != nil && !errors.As(de, &fe) {
					t.Errorf("%s cut after chunk %d: Decode: %v is not a FormatError", name, sp.Index, de)
				}
			}
		}
	}
}

// TestCorruption flips random bytes of the fixtures: never a panic, and
// every error is a FormatError.
func TestCorruption(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for name, b := range allFixtureBytes(t) {
		for range 300 {
			c := bytes.Clone(b)
			for range 1 + r.IntN(4) {
				c[r.IntN(len(c))] = byte(r.UintN(256))
			}
			se, de := decodeBoth(name, c)
			for _, err := range []error{se, de} {
				var fe *decode.FormatError
				if err != nil && !errors.As(err, &fe) {
					t.Fatalf("%s: %v is not a FormatError", name, err)
				}
			}
		}
	}
}

// TestSceneErrors covers the checks between chunks: face ranges, index
// values, layouts too large for vertex_size, bone maps beyond SKIN,
// repeated VERT chunks, amplification by overlapping submeshes.
func TestSceneErrors(t *testing.T) {
	vert := le("VERT", uint32(3), uint16(12), uint16(0), make([]byte, 36))
	mesh := func(fvf, start, count, flags uint32, tail ...any) []byte {
		return le(append([]any{"MESH", fvf, start, count, flags, uint8(1), "m"}, tail...)...)
	}
	cases := []struct {
		name, field, section string
		b                    []byte
	}{
		{"faces past INDX", "face_start", "MESH", le("EPLY", mesh(0x2, 0, 2, 0x400), vert, "INDX", uint32(3), uint16(0), uint16(1), uint16(2))},
		{"index past VERT", "indices[2]", "INDX", le("EPLY", mesh(0x2, 0, 1, 0x400), vert, "INDX", uint32(3), uint16(0), uint16(1), uint16(3))},
		{"layout larger than vertex_size", "fvf", "MESH", le("EPLY", mesh(0x112, 0, 1, 0x400), vert, "INDX", uint32(3), uint16(0), uint16(1), uint16(2))},
		{"no position", "fvf", "MESH", le("EPLY", mesh(0x10, 0, 1, 0x400), vert, "INDX", uint32(3), uint16(0), uint16(1), uint16(2))},
		{"no VERT", "face_count", "MESH", le("EPLY", mesh(0x2, 0, 1, 0x400), "INDX", uint32(3), uint16(0), uint16(1), uint16(2))},
		{"bone map beyond SKIN", "bone_map", "MESH", le("EPLY", "SKIN", uint32(1), uint8(1), "a", mesh(0x2, 0, 1, 0xc00, uint8(1), uint8(2)), vert, "INDX", uint32(3), uint16(0), uint16(1), uint16(2))},
		{"second VERT", "fourcc", "VERT", le("EPLY", mesh(0x2, 0, 1, 0x400), vert, vert, "INDX", uint32(3), uint16(0), uint16(1), uint16(2))},
		{"overlapping submeshes", "face_count", "INDX", le("EPLY", mesh(0x2, 0, 1, 0x400), mesh(0x2, 0, 1, 0x400), mesh(0x2, 0, 1, 0x400),
			mesh(0x2, 0, 1, 0x400), mesh(0x2, 0, 1, 0x400), vert, "INDX", uint32(3), uint16(0), uint16(1), uint16(2))},
		{"unknown element type", "vertex_elements", "SBM1", le("EPLY", "SBM1", []byte{0x09, 0, 0, 0xFF, 0xFF}, uint32(0), uint32(1), uint32(0), uint8(0), vert, "INDX", uint32(3), uint16(0), uint16(1), uint16(2))},
		{"bone index beyond map", "vertices", "VERT", le("EPLY", mesh(0x1006, 0, 1, 0xc00, uint8(1), uint8(0)), "VERT", uint32(3), uint16(16), uint16(0),
			bytes.Repeat(le(float32(0), float32(0), float32(0), []byte{1, 0, 0, 0}), 3), "INDX", uint32(3), uint16(0), uint16(1), uint16(2))},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Format{}.Decode(context.Background(), &decode.Source{Name: "e.ply", R: bytes.NewReader(c.b), Size: int64(len(c.b))})
			var fe *decode.FormatError
			if !errors.As(err, &fe) || fe.Field != c.field || !strings.HasPrefix(fe.Section, c.section) || fe.File != "e.ply" {
				t.Fatalf("got %v, want a FormatError in %s field %s", err, c.section, c.field)
			}
			if fe.Offset <= 0 || fe.Offset >= int64(len(c.b)) {
				t.Errorf("offset %d outside the file", fe.Offset)
			}
		})
	}
}

// TestNonFinitePosition: a triangle with a NaN position is dropped, not an
// error, and the scene says so; a submesh left without triangles exports
// nothing.
func TestNonFinitePosition(t *testing.T) {
	b := le("EPLY", "MESH", uint32(0x2), uint32(0), uint32(2), uint32(0x400), uint8(1), "m",
		"VERT", uint32(4), uint16(12), uint16(0), le(float32(0), float32(0), float32(0)), le(float32(1), float32(0), float32(0)),
		le(float32(0), float32(1), float32(0)), bytes.Repeat([]byte{0xFF}, 12),
		"INDX", uint32(6), uint16(0), uint16(1), uint16(2), uint16(0), uint16(3), uint16(1))
	sc, err := Format{}.Decode(context.Background(), &decode.Source{Name: "n.ply", R: bytes.NewReader(b), Size: int64(len(b))})
	if err != nil {
		t.Fatal(err)
	}
	p := sc.Meshes[0].Primitives[0]
	want := []decode.Repair{{Mesh: "n", Primitive: "m", Attribute: "position", Vertices: 1, Action: decode.RepairDropTriangles, Triangles: 1}}
	if len(p.Indices) != 3 || len(p.Positions) != 3 || !reflect.DeepEqual(sc.Repairs, want) {
		t.Fatalf("%d indices, %d positions, repairs %+v; want 3, 3, %+v", len(p.Indices), len(p.Positions), sc.Repairs, want)
	}
}

// TestPaddingVerticesSkipped: unreferenced vertices (NaN garbage) never
// reach the scene, and the rest are numbered in order of first use.
func TestPaddingVerticesSkipped(t *testing.T) {
	nan := bytes.Repeat([]byte{0xFF}, 12)
	b := le("EPLY", "MESH", uint32(0x2), uint32(0), uint32(1), uint32(0x400), uint8(1), "m",
		"VERT", uint32(5), uint16(12), uint16(0), nan, le(float32(1), float32(2), float32(3)), nan,
		le(float32(4), float32(5), float32(6)), le(float32(7), float32(8), float32(9)),
		"INDX", uint32(3), uint16(4), uint16(1), uint16(3))
	sc, err := Format{}.Decode(context.Background(), &decode.Source{Name: "p.ply", R: bytes.NewReader(b), Size: int64(len(b))})
	if err != nil {
		t.Fatal(err)
	}
	p := sc.Meshes[0].Primitives[0]
	want := [][3]float32{{7, 9, 8}, {1, 3, 2}, {4, 6, 5}}
	if !reflect.DeepEqual(p.Positions, want) || !reflect.DeepEqual(p.Indices, []uint32{0, 1, 2}) {
		t.Errorf("positions %v indices %v, want %v [0 1 2]", p.Positions, p.Indices, want)
	}
}

func TestHalf(t *testing.T) {
	for _, f := range []float32{0, 1, -1, 0.5, 65504, -2.25, 1.0 / 1024, 6.1035156e-05, 5.9604645e-08} {
		if got := halfToFloat(floatToHalf(f)); got != f {
			t.Errorf("half(%v) = %v", f, got)
		}
	}
	if h := floatToHalf(1e6); h != 0x7C00 {
		t.Errorf("overflow → %x", h)
	}
	if !math.IsNaN(float64(halfToFloat(floatToHalf(float32(math.NaN()))))) {
		t.Error("NaN lost")
	}
	if got := halfToFloat(0x3555); math.Abs(float64(got)-0.33325195) > 1e-7 {
		t.Errorf("0x3555 = %v", got)
	}
}

func TestHeaderJSONStable(t *testing.T) {
	for name, b := range allFixtureBytes(t) {
		src := &decode.Source{Name: name, R: bytes.NewReader(b), Size: int64(len(b))}
		st, err := Format{}.Scan(context.Background(), src)
		if err != nil {
			t.Fatal(err)
		}
		j1, err := decode.HeaderJSON(st.Header)
		if err != nil {
			t.Fatal(err)
		}
		st2, _ := Format{}.Scan(context.Background(), src)
		j2, _ := decode.HeaderJSON(st2.Header)
		if !bytes.Equal(j1, j2) {
			t.Errorf("%s: header.json differs between scans", name)
		}
		// Scan matches a full parse chunk for chunk.
		f, _ := Parse(context.Background(), name, b)
		if len(f.Chunks) != len(st.Chunks) {
			t.Fatalf("%s: scan %d chunks, parse %d", name, len(st.Chunks), len(f.Chunks))
		}
		for k, c := range f.Chunks {
			if st.Chunks[k].Offset != c.Where().Offset || st.Chunks[k].Length != c.Where().Length ||
				!strings.HasSuffix(st.Chunks[k].Name, "_"+c.FourCC()+".bin") {
				t.Errorf("%s chunk %d: scan %+v, parse %+v", name, k, st.Chunks[k], *c.Where())
			}
			raw, err := st.Chunks[k].Bytes(bytes.NewReader(b))
			if err != nil || string(raw[:4]) != c.FourCC() {
				t.Errorf("%s chunk %d bytes: %v", name, k, err)
			}
		}
	}
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r     *bytes.Reader
	bytes int64
}

func (c *countingReader) ReadAt(p []byte, off int64) (int, error) {
	n, err := c.r.ReadAt(p, off)
	c.bytes += int64(n)
	return n, err
}

// TestScanIsCheap: Scan reads chunk headers and VERT's records (for
// "repairs"), not the index or other arrays, and decodes nothing from a
// sound file.
func TestScanIsCheap(t *testing.T) {
	b := gridFile(t, 128) // ≈ 1 MB, almost all VERT and IND4 payload
	cr := &countingReader{r: bytes.NewReader(b)}
	st, err := Format{}.Scan(context.Background(), &decode.Source{Name: "big.ply", R: cr, Size: int64(len(b))})
	if err != nil {
		t.Fatal(err)
	}
	f, err := Parse(context.Background(), "big.ply", b)
	if err != nil {
		t.Fatal(err)
	}
	var vert int64
	for _, c := range f.Chunks {
		if v, ok := c.(*Vert); ok {
			vert = int64(len(v.Data))
		}
	}
	if cr.bytes > vert+16<<10 {
		t.Errorf("Scan read %d of %d bytes (VERT's records are %d)", cr.bytes, len(b), vert)
	}
	if rs, ok := st.Header.Get("repairs").([]decode.Fields); !ok || len(rs) != 0 {
		t.Errorf("repairs %v, want an empty list", st.Header.Get("repairs"))
	}
	if n := st.Header.Get("counts").(decode.Fields).Get("triangles").(int); n != 2*128*128 {
		t.Errorf("triangles %d", n)
	}
}

// TestShortSource: a source shorter than its claimed size gives FormatErrors.
func TestShortSource(t *testing.T) {
	b := allFixtureBytes(t)["eply_multi_uv"]
	src := &decode.Source{Name: "s.ply", R: bytes.NewReader(b[:len(b)-10]), Size: int64(len(b))}
	se, de := func() (error, error) {
		_, se := Format{}.Scan(context.Background(), src)
		_, de := Format{}.Decode(context.Background(), src)
		return se, de
	}()
	for _, err := range []error{se, de} {
		var fe *decode.FormatError
		if !errors.As(err, &fe) || fe.File != "s.ply" {
			t.Errorf("short source: %v", err)
		}
	}
}

// TestSparseUsageIndex: a declaration using TEXCOORD and COLOR index 255
// alone makes one set each, not 256.
func TestSparseUsageIndex(t *testing.T) {
	b := le("EPLY", "SBM1", []byte{0x02, 0, 0, 0x31, 255, 0, 0x26, 255, 0, 0xFF, 0xFF}, uint32(0), uint32(1), uint32(0), uint8(0),
		"VERT", uint32(3), uint16(24), uint16(1), bytes.Repeat(le(float32(1), float32(2), float32(3), float32(0.5), float32(0.25), []byte{0, 0, 255, 255}), 3),
		"INDX", uint32(3), uint16(0), uint16(1), uint16(2))
	sc, err := Format{}.Decode(context.Background(), &decode.Source{Name: "s.ply", R: bytes.NewReader(b), Size: int64(len(b))})
	if err != nil {
		t.Fatal(err)
	}
	p := sc.Meshes[0].Primitives[0]
	if len(p.UVs) != 1 || len(p.Colors) != 1 || p.UVs[0][0] != [2]float32{0.5, 0.25} || p.Colors[0][0] != [4]float32{1, 0, 0, 1} {
		t.Errorf("UVs %v colours %v", p.UVs, p.Colors)
	}
}

// TestExpansionBudget: many submeshes over a few wide vertices would make a
// scene thousands of times the input; BuildScene refuses before allocating.
func TestExpansionBudget(t *testing.T) {
	els := []Element{{0x02, 0, 0}}
	for i := range 255 {
		els = append(els, Element{0x26, byte(i), 0})
	}
	size := 12 + 4*255
	f := &File{Magic: MagicEPLY}
	const faces = 1000
	for i := range 4 * faces {
		f.Chunks = append(f.Chunks, &Submesh{Kind: KindSBM1, Elements: els, FaceStart: uint32(i % faces), FaceCount: 1})
	}
	idx := &Indices{Values: make([]uint32, 3*faces)}
	for k := range idx.Values {
		idx.Values[k] = uint32(k % 3)
	}
	f.Chunks = append(f.Chunks, &Vert{Size: uint16(size), Data: make([]byte, 3*size)}, idx)
	_, err := BuildScene(context.Background(), f, "x.ply")
	var fe *decode.FormatError
	if !errors.As(err, &fe) || fe.Field != "face_count" || !strings.Contains(fe.Msg, "would decode to") {
		t.Fatalf("got %v", err)
	}
}
