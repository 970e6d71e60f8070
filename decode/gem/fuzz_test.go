package gem

import (
	"bytes"
	"context"
	"errors"
	"os"
	"reflect"
	"testing"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/decodetest"
)

// FuzzDecode feeds arbitrary bytes to Scan and Decode. Neither may panic,
// hang or return an error that is not a FormatError; a successful Decode
// must give a scene that keeps the model's invariants.
func FuzzDecode(f *testing.F) {
	for _, b := range allFixtureBytes(f) {
		f.Add(b)
	}
	if _, ok := decodetest.RealData(f, "gem"); ok {
		for _, p := range realFiles(f) {
			if b, err := os.ReadFile(p); err == nil && len(b) <= 16<<10 {
				f.Add(b)
			}
		}
	}
	f.Add([]byte("EPLY"))
	f.Add([]byte("ply\nformat ascii 1.0\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		src := &decode.Source{Name: "fuzz.ply", R: bytes.NewReader(b), Size: int64(len(b))}
		st, err := Format{}.Scan(context.Background(), src)
		var fe *decode.FormatError
		if err != nil && !errors.As(err, &fe) {
			t.Fatalf("Scan: %v is not a FormatError", err)
		}
		if st != nil {
			if _, jerr := decode.HeaderJSON(st.Header); jerr != nil {
				t.Fatalf("header.json: %v", jerr)
			}
			for _, c := range st.Chunks {
				if c.Offset < 4 || c.Length < 4 || c.Offset+c.Length > int64(len(b)) {
					t.Fatalf("chunk %+v outside the file", c)
				}
			}
		}
		sc, err := Format{}.Decode(context.Background(), src)
		// Large files are decoded through the reader, not read whole:
		// that way must give the same scene or the same error.
		sc2, err2 := decodeSource(context.Background(), src, false)
		if (err == nil) != (err2 == nil) || (err != nil && err.Error() != err2.Error()) || !reflect.DeepEqual(sc, sc2) {
			t.Fatalf("read whole: %v; through the reader: %v (or the scenes differ)", err, err2)
		}
		if err != nil {
			if !errors.As(err, &fe) {
				t.Fatalf("Decode: %v is not a FormatError", err)
			}
			return
		}
		// The lazy walk (Scan) and the full parse (Decode) agree.
		if _, serr := (Format{}).Scan(context.Background(), src); serr != nil {
			t.Fatalf("Decode succeeded where Scan failed: %v", serr)
		}
		// Repairs may drop triangles, and say how many.
		dropped := 0
		for _, r := range sc.Repairs {
			dropped += r.Triangles
		}
		if tri := st.Header.Get("counts").(decode.Fields).Get("triangles").(int); sc.Count().Triangles > tri ||
			sc.Count().Triangles < tri-dropped || dropped == 0 && sc.Count().Triangles != tri {
			t.Fatalf("scene has %d triangles, header %d, %d dropped by repairs", sc.Count().Triangles, tri, dropped)
		}
		for _, m := range sc.Meshes {
			for _, p := range m.Primitives {
				n := uint32(len(p.Positions))
				if len(p.Indices) == 0 || len(p.Indices)%3 != 0 {
					t.Fatalf("%d indices", len(p.Indices))
				}
				for _, i := range p.Indices {
					if i >= n {
						t.Fatalf("index %d of %d vertices", i, n)
					}
				}
				if p.Normals != nil && len(p.Normals) != len(p.Positions) || p.Joints != nil && len(p.Weights) != len(p.Positions) {
					t.Fatal("attribute lengths differ")
				}
				for v := range p.Positions {
					if !decode.Finite(p.Positions[v][:]...) || p.Normals != nil && !decode.Finite(p.Normals[v][:]...) ||
						p.Tangents != nil && !decode.Finite(p.Tangents[v][:]...) {
						t.Fatalf("vertex %d is not finite after repair", v)
					}
					for _, uv := range p.UVs {
						if !decode.Finite(uv[v][:]...) {
							t.Fatalf("vertex %d: UV %v", v, uv[v])
						}
					}
				}
				for _, j := range p.Joints {
					for _, v := range j {
						if sc.Skeleton == nil || int(v) >= len(sc.Skeleton.Joints) {
							t.Fatalf("joint %d outside the skeleton", v)
						}
					}
				}
				if p.Material < 0 || p.Material >= len(sc.Materials) {
					t.Fatalf("material %d of %d", p.Material, len(sc.Materials))
				}
			}
		}
	})
}
