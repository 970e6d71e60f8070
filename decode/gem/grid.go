package gem

// GridFile encodes a BPLY file of an (n+1)² vertex grid, 2n² triangles, bent
// so that its coordinates depend on seed (files of equal size convert to
// different bytes): one SUBM-AS2 submesh with position, normal, D3DCOLOR and
// float2 UV in 44-byte vertices, 32-bit indices. It is the big mesh of the
// mount's tests and benchmarks (internal/meshgen) and of this package's.
func GridFile(n int, seed float32) ([]byte, error) {
	vs := make([]Vertex, 0, (n+1)*(n+1))
	for j := 0; j <= n; j++ {
		for i := 0; i <= n; i++ {
			x, y := float32(i)+seed, float32(j)
			vs = append(vs, Vertex{
				Position: [3]float32{x, y, float32((i*j)%7) / 8},
				Normal:   [3]float32{0, 0, 1},
				Tangent:  [4]float32{1, 0, 0, 1},
				UVs:      [][2]float32{{float32(i) / float32(n), float32(j) / float32(n)}},
				Colors:   [][4]float32{{1, 1, 1, 1}},
			})
		}
	}
	at := func(i, j int) uint32 { return uint32(j*(n+1) + i) }
	idx := make([]uint32, 0, 6*n*n)
	for j := 0; j < n; j++ {
		for i := 0; i < n; i++ {
			a, b, c, d := at(i, j), at(i+1, j), at(i+1, j+1), at(i, j+1)
			idx = append(idx, a, c, b, a, d, c)
		}
	}
	els := []Element{{TypeUsage: 0x02}, {TypeUsage: 0x12}, {TypeUsage: 0x26}, {TypeUsage: 0x31}}
	s := &Submesh{Kind: KindSUBMAS2, Elements: els, Flags: 0x1404, Material: "ground.mtl",
		FaceCount: uint32(len(idx) / 3)}
	data, err := PackVertices(s, 44, vs)
	if err != nil {
		return nil, err
	}
	return Encode(&File{Magic: MagicBPLY, Chunks: []Chunk{
		&Bounds{Min: [3]float32{seed, 0, 0}, Max: [3]float32{float32(n) + seed, float32(n), 1}},
		s,
		&Vert{Size: 44, Data: data},
		&Indices{Wide: true, Values: idx},
	}})
}
