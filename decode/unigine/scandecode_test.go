package unigine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/decodetest"
	"github.com/meshfs/meshfs/export/gltf"
)

// TestScanDecode: for every blocked fixture, the real blocked files, large
// single- and multi-surface meshes (read on all CPUs) and a skinned one,
// ScanDecode gives Scan's structure and Decode's scene; ms11 is left to
// Scan and Decode; a file Scan refuses (a broken collision block, which
// Decode alone would not read) and one Decode refuses (a NaN position)
// are refused.
func TestScanDecode(t *testing.T) {
	type file struct {
		name string
		b    []byte
	}
	var files []file
	for _, fx := range fixtures {
		b, err := Encode(fx.build())
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, file{fx.name, b})
	}
	if dir, ok := decodetest.RealData(t, "unigine"); ok {
		ps, _ := filepath.Glob(filepath.Join(dir, "*.mesh*"))
		for _, p := range ps {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, file{filepath.Base(p), b})
		}
	}
	for _, f := range []struct {
		name string
		f    *File
	}{{"big.mesh", bigGridFile(MagicMS15, 300)}, {"multi.mesh", multiSurface(4)}, {"big.mesh_skinned", bigGridFile(MagicSK10, 200)}} {
		b, err := Encode(f.f)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, file{f.name, b})
	}
	for _, f := range files {
		src := memSource(f.name, f.b)
		st, err := Format{}.Scan(context.Background(), src)
		if err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		sc, err := Format{}.Decode(context.Background(), src)
		if err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		st1, sc1, err := Format{}.ScanDecode(context.Background(), src)
		if lay, _ := layoutOf(string(f.b[:4])); !lay.blocks {
			if !errors.Is(err, errNoOnePass) || st1 != nil || sc1 != nil {
				t.Errorf("%s: %s gave %v", f.name, f.b[:4], err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", f.name, err)
		}
		t.Run(f.name, func(t *testing.T) { sameScanDecode(t, st, sc, st1, sc1) })
	}

	// Refusal: a collision block cut short (Scan fails, Decode does not
	// read it).
	g := withCollision(grid(20, 1))
	g.Collision = g.Collision[:len(g.Collision)-3]
	f := &File{Magic: MagicMS15, Surfaces: []Surface{g}}
	b, err := Encode(f)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (Format{}).Scan(context.Background(), memSource("c.mesh", b)); err == nil {
		t.Fatal("the broken collision block passed Scan")
	}
	if st, sc, err := (Format{}).ScanDecode(context.Background(), memSource("c.mesh", b)); err == nil || st != nil || sc != nil {
		t.Errorf("broken collision block: ScanDecode gave %v", err)
	}
	g = withCollision(grid(20, 1))
	g.Targets[0].Positions[7][1] = float32NaN()
	b, err = Encode(&File{Magic: MagicMS15, Surfaces: []Surface{g}})
	if err != nil {
		t.Fatal(err)
	}
	// A NaN position is repaired in one pass as in two.
	st2, err := Format{}.Scan(context.Background(), memSource("nan.mesh", b))
	if err != nil {
		t.Fatal(err)
	}
	sc2, err := Format{}.Decode(context.Background(), memSource("nan.mesh", b))
	if err != nil || len(sc2.Repairs) != 1 {
		t.Fatalf("NaN position: Decode gave %v, repairs %+v", err, sc2)
	}
	st3, sc3, err := Format{}.ScanDecode(context.Background(), memSource("nan.mesh", b))
	if err != nil {
		t.Fatalf("NaN position: ScanDecode gave %v", err)
	}
	sameScanDecode(t, st2, sc2, st3, sc3)
}

func float32NaN() float32 {
	var z float32
	return z / z
}

// BenchmarkScanDecodeUnigine is BenchmarkColdPathUnigine's work (the
// mount's cold first read of the .glb: header.json and the .glb from the
// file on disk) done with ScanDecode instead of Scan then Decode: the
// gain a first read would have if the mount used it. SetBytes is the
// source size.
func BenchmarkScanDecodeUnigine(b *testing.B) {
	src, err := Encode(bigGridFile(MagicMS15, 708))
	if err != nil {
		b.Fatal(err)
	}
	benchFirstRead(b, src, true)
}

// fourSurfaces is a ≈1 M-triangle ms15 mesh in four surfaces (four
// geometry blocks of ≈ 6 MB).
func fourSurfaces() []byte {
	f := &File{Magic: MagicMS15}
	for i := range 4 {
		g := withCollision(grid(354+i, 10))
		g.Name = "part" + string(rune('a'+i))
		f.Surfaces = append(f.Surfaces, g)
	}
	f.Bounds = fileBounds(f.Surfaces)
	b, err := Encode(f)
	if err != nil {
		panic(err)
	}
	return b
}

// benchFirstRead times the mount's cold first read of the .glb of the
// file src from disk: Scan then Decode (each opening the file, as the
// mount does), or ScanDecode; then header.json and the .glb export.
func benchFirstRead(b *testing.B, src []byte, one bool) {
	open := benchOpener(b, src)
	decodetest.Loop(b, int64(len(src)), func() error {
		var st *decode.Structure
		var sc *decode.Scene
		var err error
		f, s := open()
		if one {
			st, sc, err = Format{}.ScanDecode(context.Background(), s)
		} else if st, err = (Format{}).Scan(context.Background(), s); err == nil {
			f.Close()
			f, s = open()
			sc, err = Format{}.Decode(context.Background(), s)
		}
		f.Close()
		if err != nil {
			return err
		}
		if _, err := decode.HeaderJSON(st.Header); err != nil {
			return err
		}
		_, err = gltf.Encode(sc)
		return err
	})
}

// BenchmarkColdPathUnigineMulti is BenchmarkColdPathUnigine on the
// four-surface mesh.
func BenchmarkColdPathUnigineMulti(b *testing.B) { benchFirstRead(b, fourSurfaces(), false) }

// BenchmarkScanDecodeUnigineMulti is the same with ScanDecode.
func BenchmarkScanDecodeUnigineMulti(b *testing.B) { benchFirstRead(b, fourSurfaces(), true) }
