package gem

import (
	"bytes"
	"context"
	"testing"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/decodetest"
	"github.com/meshfs/meshfs/export/gltf"
)

// benchFile encodes a BPLY map-sized mesh of about one million triangles:
// an n×n grid of quads in two MESH submeshes, fvf 0x152 (position, normal,
// colour, UV) in 36-byte vertices, 32-bit indices.
func benchFile(tb testing.TB) []byte { return gridFile(tb, 708) } // 2·708² ≈ 1.0 M triangles

// gridFile encodes an n×n grid as described for benchFile.
func gridFile(tb testing.TB, n int) []byte { return gridFileOf(tb, n, nil) }

// gridFileOf is gridFile with edit applied to the vertices first.
func gridFileOf(tb testing.TB, n int, edit func(vs []Vertex)) []byte {
	vs, tris := grid(n, 0, 0, false)
	for k := range vs {
		vs[k].UVs = [][2]float32{{vs[k].Position[0] / float32(n), vs[k].Position[1] / float32(n)}}
		vs[k].Colors = [][4]float32{{0.5, 0.25, 0.125, 1}}
	}
	if edit != nil {
		edit(vs)
	}
	half := len(tris) / 2
	s1 := &Submesh{Kind: KindMESH, FVF: 0x152, FaceStart: 0, FaceCount: uint32(half), Flags: FlagMaterial, Material: "a.mtl"}
	s2 := &Submesh{Kind: KindMESH, FVF: 0x152, FaceStart: uint32(half), FaceCount: uint32(len(tris) - half), Flags: FlagMaterial, Material: "b.mtl"}
	data, err := PackVertices(s1, 36, vs)
	if err != nil {
		tb.Fatal(err)
	}
	idx := &Indices{Wide: true, Values: make([]uint32, 0, 3*len(tris))}
	for _, t := range tris {
		idx.Values = append(idx.Values, t[0], t[1], t[2])
	}
	b, err := Encode(&File{Magic: MagicBPLY, Chunks: []Chunk{
		&Bounds{Max: [3]float32{float32(n), float32(n), 1}}, s1, s2, &Vert{Size: 36, Flags: 7, Data: data}, idx}})
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func benchSource(src []byte) *decode.Source {
	return &decode.Source{Name: "bench.ply", R: bytes.NewReader(src), Size: int64(len(src))}
}

// benchConvert measures decode + .glb export of src; MB/s is of source
// bytes.
func benchConvert(b *testing.B, src []byte) {
	decodetest.Loop(b, int64(len(src)), func() error {
		sc, err := Format{}.Decode(context.Background(), benchSource(src))
		if err != nil {
			return err
		}
		if _, err := gltf.Encode(sc); err != nil {
			return err
		}
		return nil
	})
}

// benchDecode measures the decode of src alone.
func benchDecode(b *testing.B, src []byte) {
	decodetest.Loop(b, int64(len(src)), func() error {
		if _, err := (Format{}).Decode(context.Background(), benchSource(src)); err != nil {
			return err
		}
		return nil
	})
}

// BenchmarkConvertGEM measures decode + .glb export of a ≈1 M-triangle file;
// MB/s is of source bytes.
func BenchmarkConvertGEM(b *testing.B) {
	src := benchFile(b)
	benchConvert(b, src)
}

// BenchmarkScanGEM measures Scan (header.json, chunks/) of the same file;
// MB/s is of source bytes.
func BenchmarkScanGEM(b *testing.B) {
	src := benchFile(b)
	decodetest.Loop(b, int64(len(src)), func() error {
		_, err := Format{}.Scan(context.Background(), benchSource(src))
		return err
	})
}

// BenchmarkDecodeGEM is the decode half alone.
func BenchmarkDecodeGEM(b *testing.B) {
	src := benchFile(b)
	benchDecode(b, src)
}

// BenchmarkExportGEM is the .glb export half alone; MB/s is still of the
// source, so the three figures compare.
func BenchmarkExportGEM(b *testing.B) {
	src := benchFile(b)
	sc, err := Format{}.Decode(context.Background(), benchSource(src))
	if err != nil {
		b.Fatal(err)
	}
	decodetest.Loop(b, int64(len(src)), func() error {
		if _, err := gltf.Encode(sc); err != nil {
			return err
		}
		return nil
	})
}

// mountFile is the file the mount benchmark (cmd/meshfs-bench) reads as big.ply.
func mountFile(tb testing.TB, n int) []byte {
	b, err := GridFile(n, 0)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// BenchmarkConvertGEMMount is BenchmarkConvertGEM for the mount
// benchmark's file: one submesh, so the decode cannot split by submesh.
func BenchmarkConvertGEMMount(b *testing.B) {
	src := mountFile(b, 707) // 2·707² ≈ 1.0 M triangles, 34.1 MB
	benchConvert(b, src)
}

// BenchmarkDecodeGEMMount is the decode half of BenchmarkConvertGEMMount.
func BenchmarkDecodeGEMMount(b *testing.B) {
	src := mountFile(b, 707)
	benchDecode(b, src)
}
