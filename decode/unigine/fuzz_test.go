package unigine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/decodetest"
)

// FuzzDecode feeds arbitrary bytes to Scan, every chunk loader and Decode:
// none may panic, and every error must be a positioned FormatError. Seeds:
// the fixtures and, when present, the real files.
func FuzzDecode(f *testing.F) {
	for _, fx := range fixtures {
		b, err := Encode(fx.build())
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, fx.name)
	}
	if _, ok := decodetest.RealData(f, "unigine"); ok {
		for _, p := range realFiles(f) {
			if b, err := os.ReadFile(p); err == nil {
				f.Add(b, filepath.Base(p))
			}
		}
	}
	for _, p := range assetFiles(f) {
		if b, err := os.ReadFile(p); err == nil && len(b) < 64<<10 {
			f.Add(b, filepath.Base(p))
		}
	}
	f.Fuzz(func(t *testing.T, b []byte, name string) {
		if len(b) > 1<<20 {
			return
		}
		name = "fuzz" + filepath.Ext(name)
		if os.Getenv("UNIGINE_FUZZ_WATCHDOG") != "" {
			tm := time.AfterFunc(10*time.Second, func() { panic("slow input") })
			defer tm.Stop()
		}
		src := memSource(name, b)
		isFE := func(what string, err error) {
			var fe *decode.FormatError
			if err != nil && !errors.As(err, &fe) {
				t.Fatalf("%s: %T %v", what, err, err)
			}
		}
		st, err := Format{}.Scan(context.Background(), src)
		isFE("scan", err)
		if st != nil {
			if _, err := decode.HeaderJSON(st.Header); err != nil {
				t.Fatalf("header.json: %v", err)
			}
			for _, c := range st.Chunks {
				data, err := c.Bytes(src.R)
				isFE(c.Name, err)
				if err == nil && int64(len(data)) != c.Size {
					t.Fatalf("%s: %d bytes, Size %d", c.Name, len(data), c.Size)
				}
			}
		}
		sc, err := Format{}.Decode(context.Background(), src)
		isFE("decode", err)
		if err == nil {
			checkScene(t, sc)
		}
		// ScanDecode accepts only what both accept, and then gives what
		// they give.
		st1, sc1, err1 := Format{}.ScanDecode(context.Background(), src)
		if err1 == nil {
			sameScanDecode(t, st, sc, st1, sc1)
		}
	})
}

// sameScanDecode fails unless ScanDecode's structure and scene (st1, sc1)
// are those of Scan and Decode (st, sc): header.json's bytes, the chunk
// list (names, places, sizes) and the scene.
func sameScanDecode(t *testing.T, st *decode.Structure, sc *decode.Scene, st1 *decode.Structure, sc1 *decode.Scene) {
	t.Helper()
	if st == nil || sc == nil {
		t.Fatalf("ScanDecode succeeded where Scan (%v) or Decode (%v) failed", st != nil, sc != nil)
	}
	j, err := decode.HeaderJSON(st.Header)
	if err != nil {
		t.Fatal(err)
	}
	j1, err := decode.HeaderJSON(st1.Header)
	if err != nil {
		t.Fatal(err)
	}
	if string(j) != string(j1) {
		t.Fatalf("header.json differs:\n%s\nScanDecode:\n%s", j, j1)
	}
	if st.Format != st1.Format || len(st.Chunks) != len(st1.Chunks) {
		t.Fatalf("chunks: %d, ScanDecode %d", len(st.Chunks), len(st1.Chunks))
	}
	for i, c := range st.Chunks {
		c1 := st1.Chunks[i]
		if c.Name != c1.Name || c.Offset != c1.Offset || c.Length != c1.Length || c.Size != c1.Size || (c.Load == nil) != (c1.Load == nil) {
			t.Fatalf("chunk %d: %+v, ScanDecode %+v", i, c, c1)
		}
	}
	if !reflect.DeepEqual(sc, sc1) {
		t.Fatal("ScanDecode's scene differs from Decode's")
	}
}

// checkScene checks the scene contract exporters rely on.
func checkScene(t *testing.T, sc *decode.Scene) {
	t.Helper()
	joints := 0
	if sc.Skeleton != nil {
		joints = len(sc.Skeleton.Joints)
		for i, j := range sc.Skeleton.Joints {
			if j.Parent < -1 || j.Parent >= joints || j.Parent == i {
				t.Fatalf("joint %d parent %d", i, j.Parent)
			}
		}
	}
	for _, m := range sc.Meshes {
		for _, p := range m.Primitives {
			n := len(p.Positions)
			if len(p.Indices)%3 != 0 {
				t.Fatalf("%d indices", len(p.Indices))
			}
			for _, i := range p.Indices {
				if int(i) >= n {
					t.Fatalf("index %d of %d", i, n)
				}
			}
			if len(p.Normals) != n || len(p.Tangents) != n {
				t.Fatal("attribute length")
			}
			for _, uv := range p.UVs {
				if len(uv) != n {
					t.Fatal("uv length")
				}
			}
			for _, js := range p.Joints {
				for _, j := range js {
					if int(j) >= joints {
						t.Fatalf("joint %d of %d", j, joints)
					}
				}
			}
			if len(p.Targets) != len(m.TargetNames) {
				t.Fatal("targets")
			}
			for _, v := range p.Positions {
				if !decode.Finite(v[:]...) {
					t.Fatal("non-finite position")
				}
			}
		}
	}
}

// FuzzDecodeAnim mutates .anim files: Scan and Decode must not panic,
// fail only with FormatErrors, and give a scene whose channels hold one
// value per time on a joint that exists.
func FuzzDecodeAnim(f *testing.F) {
	for _, fx := range animFixtures {
		b, err := EncodeAnim(fx.build())
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	for _, p := range assetAnims(f) {
		if b, err := os.ReadFile(p); err == nil && len(b) < 64<<10 {
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 1<<20 {
			return
		}
		if os.Getenv("UNIGINE_FUZZ_WATCHDOG") != "" {
			tm := time.AfterFunc(10*time.Second, func() { panic("slow input") })
			defer tm.Stop()
		}
		src := memSource("fuzz.anim", b)
		isFE := func(what string, err error) {
			var fe *decode.FormatError
			if err != nil && !errors.As(err, &fe) {
				t.Fatalf("%s: %T %v", what, err, err)
			}
		}
		st, err := AnimFormat{}.Scan(context.Background(), src)
		isFE("scan", err)
		if st != nil {
			if _, err := decode.HeaderJSON(st.Header); err != nil {
				t.Fatalf("header.json: %v", err)
			}
			for _, c := range st.Chunks {
				data, err := c.Bytes(src.R)
				if err != nil || int64(len(data)) != c.Size {
					t.Fatalf("%s: %d bytes, Size %d, %v", c.Name, len(data), c.Size, err)
				}
			}
		}
		sc, err := AnimFormat{}.Decode(context.Background(), src)
		isFE("decode", err)
		if err != nil {
			return
		}
		checkScene(t, sc)
		for _, a := range sc.Animations {
			for _, ch := range a.Channels {
				width := 3
				if ch.Path == decode.PathRotation {
					width = 4
				}
				if sc.Skeleton == nil || ch.Index >= len(sc.Skeleton.Joints) || len(ch.Values) != width*len(ch.Times) {
					t.Fatalf("channel %+v", ch)
				}
				if !decode.Finite(ch.Values...) {
					t.Fatal("non-finite channel value")
				}
			}
		}
	})
}
