package tfever

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/decodetest"
	"github.com/meshfs/meshfs/export/gltf"
)

// BenchmarkDecode measures one Decode of the Train Fever fixture (script run
// in the sandbox, blob read, vertices joined).
func BenchmarkDecode(b *testing.B) {
	src := fileSource(b, filepath.Join(fixtureDir, "trainfever_door.msh"))
	for b.Loop() {
		if _, err := (Msh{}).Decode(context.Background(), src); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScan measures header.json's cost: the script and the layout only.
func BenchmarkScan(b *testing.B) {
	src := fileSource(b, filepath.Join(fixtureDir, "trainfever_door.msh"))
	for b.Loop() {
		if _, err := (Msh{}).Scan(context.Background(), src); err != nil {
			b.Fatal(err)
		}
	}
}

// gridMesh is an n×n grid of quads in one submesh, 2(n−1)² triangles, in
// the Transport Fever 2 style: a position and a UV per grid point, one
// normal and one tangent for the whole (flat) grid, so that vertices are
// joined from index tuples whose lists differ, as in real files.
func gridMesh(n int) *EncMesh {
	var pos, uv []float32
	for y := range n {
		for x := range n {
			u, v := float32(x)/float32(n-1), float32(y)/float32(n-1)
			pos = append(pos, u*100, v*100, 0.01*float32((x*7+y*3)%5))
			uv = append(uv, u, 1-v)
		}
	}
	sm := EncSubMesh{Indices: map[string][]uint32{}}
	corners := make([]uint32, 0, 6*(n-1)*(n-1))
	for y := range n - 1 {
		for x := range n - 1 {
			a := uint32(y*n + x)
			b, c, d := a+1, a+uint32(n)+1, a+uint32(n)
			corners = append(corners, a, b, c, a, c, d)
		}
	}
	sm.Indices["position"] = corners
	sm.Indices["uv0"] = corners
	sm.Indices["normal"] = make([]uint32, len(corners))
	sm.Indices["tangent"] = make([]uint32, len(corners))
	return &EncMesh{
		Attrs: []EncAttr{
			{Name: "position", NumComp: 3, Data: pos},
			{Name: "normal", NumComp: 3, Data: []float32{0, 0, 1}},
			{Name: "tangent", NumComp: 4, Data: []float32{1, 0, 0, 1}},
			{Name: "uv0", NumComp: 2, Data: uv},
		},
		SubMeshes: []EncSubMesh{sm},
	}
}

// bigSource encodes gridMesh(708), ≈1 M triangles, and returns it with its
// size (script and blob).
func bigSource(b *testing.B) (*decode.Source, int64) {
	script, blob, err := EncodeMsh(gridMesh(708))
	if err != nil {
		b.Fatal(err)
	}
	return memSource("big.msh", map[string][]byte{"big.msh": script, "big.msh.blob": blob}), int64(len(script) + len(blob))
}

// BenchmarkConvertBig is decode + .glb export of the ≈1 M-triangle grid;
// MB/s is of source (script + blob) bytes.
func BenchmarkConvertBig(b *testing.B) {
	src, size := bigSource(b)
	decodetest.Loop(b, size, func() error {
		sc, err := (Msh{}).Decode(context.Background(), src)
		if err != nil {
			return err
		}
		if _, err := gltf.Encode(sc); err != nil {
			return err
		}
		return nil
	})
}

// BenchmarkDecodeBig is the decode half alone.
func BenchmarkDecodeBig(b *testing.B) {
	src, size := bigSource(b)
	decodetest.Loop(b, size, func() error {
		if _, err := (Msh{}).Decode(context.Background(), src); err != nil {
			return err
		}
		return nil
	})
}

// BenchmarkExportBig is the .glb export half alone; MB/s is still of the
// source, so the three figures compare.
func BenchmarkExportBig(b *testing.B) {
	src, size := bigSource(b)
	sc, err := (Msh{}).Decode(context.Background(), src)
	if err != nil {
		b.Fatal(err)
	}
	decodetest.Loop(b, size, func() error {
		if _, err := gltf.Encode(sc); err != nil {
			return err
		}
		return nil
	})
}

// BenchmarkDecodeModel measures one DecodeModel of the inova (66 KB of
// Lua, 49 nodes, 48 KEYFRAME sets), or of the car fixture without
// ../shared.
func BenchmarkDecodeModel(b *testing.B) {
	var src *decode.Source
	if root, ok := decodetest.Shared(b, "assets"); ok {
		src = diskSource(b, filepath.Join(root, "tf-inova/res/models/model/vehicle/waggon/ws_inovab_wc.mdl"))
	} else {
		src = treeSource("models/model/fixture/car.mdl", fixtureTree(b))
	}
	decodetest.Loop(b, src.Size, func() error {
		_, err := Mdl{}.DecodeModel(context.Background(), src)
		return err
	})
}
