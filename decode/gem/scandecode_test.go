package gem

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/decodetest"
)

// TestScanDecode: for every .ply fixture (a NaN-repaired one among them),
// the real files, the benchmark's grids and a grid with an infinite position and normal,
// ScanDecode gives Scan's structure (header.json, repairs included,
// chunks, materials) and Decode's scene; a file Decode refuses is refused.
func TestScanDecode(t *testing.T) {
	type file struct {
		name string
		b    []byte
	}
	var files []file
	add := func(dir string) {
		ps, _ := filepath.Glob(filepath.Join(dir, "*.ply"))
		for _, p := range ps {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, file{filepath.Base(p), b})
		}
	}
	add(filepath.Join("..", "..", "testdata", "gem"))
	if dir, ok := decodetest.RealData(t, "gem"); ok {
		add(dir)
	}
	if len(files) < 5 {
		t.Fatalf("%d fixtures", len(files))
	}
	files = append(files, file{"grid.ply", gridFile(t, 40)}, file{"mount.ply", mountFile(t, 30)})
	inf := float32(math.Inf(1))
	files = append(files, file{"inf.ply", gridFileOf(t, 20, func(vs []Vertex) {
		vs[7].Position[2], vs[30].Normal[0] = inf, inf
	})})
	repaired := 0
	for _, f := range files {
		src := benchSource(f.b)
		src.Name = f.name
		st, scanErr := Format{}.Scan(context.Background(), src)
		sc, decErr := Format{}.Decode(context.Background(), src)
		st1, sc1, err := Format{}.ScanDecode(context.Background(), src)
		if scanErr != nil || decErr != nil {
			if err == nil || st1 != nil || sc1 != nil {
				t.Errorf("%s: Scan %v, Decode %v; ScanDecode gave %v", f.name, scanErr, decErr, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		j, _ := decode.HeaderJSON(st.Header)
		j1, _ := decode.HeaderJSON(st1.Header)
		if string(j) != string(j1) {
			t.Fatalf("%s: header.json differs:\n%s\nScanDecode:\n%s", f.name, j, j1)
		}
		if !reflect.DeepEqual(st.Chunks, st1.Chunks) || !reflect.DeepEqual(st.Materials, st1.Materials) || st.Format != st1.Format {
			t.Fatalf("%s: structure differs", f.name)
		}
		if !reflect.DeepEqual(sc, sc1) {
			t.Fatalf("%s: ScanDecode's scene differs from Decode's", f.name)
		}
		if len(sc.Repairs) > 0 {
			repaired++
		}
	}
	if repaired < 2 {
		t.Errorf("%d repaired files among the inputs, want the NaN fixture and inf.ply", repaired)
	}
}
