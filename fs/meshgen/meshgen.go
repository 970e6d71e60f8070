// Package meshgen makes large source meshes for the mount's tests and
// benchmarks (memory bound, first-read throughput). It is the only place
// under fs/ that names a format, and only to call that format's own encoder.
package meshgen

import (
	"fmt"
	"math"

	"github.com/meshfs/meshfs/decode/gem"
)

// GEM returns a GEM .ply (BPLY, one SUBM-AS2 surface, 32-bit indices) of
// about triangles triangles: a bent grid whose coordinates depend on seed,
// so that files of equal size still convert to different bytes.
func GEM(triangles int, seed float32) ([]byte, error) {
	n := max(1, int(math.Sqrt(float64(triangles)/2)))
	var vs []gem.Vertex
	for j := 0; j <= n; j++ {
		for i := 0; i <= n; i++ {
			x, y := float32(i)+seed, float32(j)
			vs = append(vs, gem.Vertex{
				Position: [3]float32{x, y, float32((i*j)%7) / 8},
				Normal:   [3]float32{0, 0, 1},
				Tangent:  [4]float32{1, 0, 0, 1},
				UVs:      [][2]float32{{float32(i) / float32(n), float32(j) / float32(n)}},
				Colors:   [][4]float32{{1, 1, 1, 1}},
			})
		}
	}
	at := func(i, j int) uint32 { return uint32(j*(n+1) + i) }
	var idx []uint32
	for j := 0; j < n; j++ {
		for i := 0; i < n; i++ {
			a, b, c, d := at(i, j), at(i+1, j), at(i+1, j+1), at(i, j+1)
			idx = append(idx, a, c, b, a, d, c)
		}
	}
	els := []gem.Element{{TypeUsage: 0x02}, {TypeUsage: 0x12}, {TypeUsage: 0x26}, {TypeUsage: 0x31}}
	s := &gem.Submesh{Kind: gem.KindSUBMAS2, Elements: els, Flags: 0x1404, Material: "ground.mtl",
		FaceCount: uint32(len(idx) / 3)}
	data, err := gem.PackVertices(s, 44, vs)
	if err != nil {
		return nil, fmt.Errorf("meshgen: %w", err)
	}
	f := &gem.File{Magic: gem.MagicBPLY, Chunks: []gem.Chunk{
		&gem.Bounds{Min: [3]float32{seed, 0, 0}, Max: [3]float32{float32(n) + seed, float32(n), 1}},
		s,
		&gem.Vert{Size: 44, Data: data},
		&gem.Indices{Wide: true, Values: idx},
	}}
	return gem.Encode(f)
}
