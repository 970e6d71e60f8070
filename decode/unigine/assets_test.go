package unigine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAssetFiles: every UNIGINE mesh in ../shared/assets/unigine decodes
// and scans; triangles are a third of the coordinate indices; normals agree
// with counter-clockwise faces; the skinned ones have the bone counts their
// source names (the cat 289, the agent 56; several roots get one synthetic
// root) and every vertex of theirs is weighted.
func TestAssetFiles(t *testing.T) {
	files := assetFiles(t)
	if len(files) == 0 {
		t.Skip("../shared/assets/unigine absent")
	}
	bones := map[string]int{"ms13_kimchi_45ba7bbc": 289, "ms11_mockup_agent": 56}
	for _, p := range files {
		name := filepath.Base(p)
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			src := memSource(p, b)
			if _, err := (Format{}).Scan(context.Background(), src); err != nil {
				t.Fatalf("scan: %v", err)
			}
			sc, err := Format{}.Decode(context.Background(), src)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			f, err := Read(context.Background(), src)
			if err != nil {
				t.Fatal(err)
			}
			var indices int
			for _, s := range f.Surfaces {
				indices += len(s.CIndices)
			}
			if tri := sc.Count().Triangles; tri != indices/3 || tri == 0 {
				t.Errorf("%d triangles for %d coordinate indices", tri, indices)
			}
			for _, m := range sc.Meshes {
				for _, prim := range m.Primitives {
					agree, total := faceAgreement(&prim)
					if total == 0 || agree < total*95/100 {
						t.Errorf("%s: %d of %d faces agree with their normals", prim.Name, agree, total)
					}
				}
			}
			want := 0
			for prefix, n := range bones {
				if strings.HasPrefix(name, prefix) {
					want = n
				}
			}
			if len(f.Joints) != want {
				t.Fatalf("%d bones, want %d", len(f.Joints), want)
			}
			if want == 0 {
				if sc.Skeleton != nil {
					t.Errorf("a skeleton without bones")
				}
				return
			}
			if sc.Skeleton == nil || len(sc.Skeleton.Joints) != want+1 {
				t.Fatalf("skeleton of %d joints, want %d bones and the synthetic root", len(sc.Skeleton.Joints), want)
			}
			checkBindMatchesRest(t, sc.Skeleton)
			for _, m := range sc.Meshes {
				for _, prim := range m.Primitives {
					if len(prim.Joints) != len(prim.Positions) || len(prim.Weights) != len(prim.Positions) {
						t.Errorf("%s: %d joints, %d weights for %d vertices", prim.Name, len(prim.Joints), len(prim.Weights), len(prim.Positions))
					}
				}
			}
		})
	}
}

// TestStreamTail: bytes between a stream's last surface and a final magic
// that ends the file are kept and shown (header.json, chunks/); a stream
// that does not end with its magic, or has bytes after a magic that
// follows its last surface, is still refused.
func TestStreamTail(t *testing.T) {
	f := ms11TailFile()
	b, err := Encode(f)
	if err != nil {
		t.Fatal(err)
	}
	src := memSource("tail.mesh", b)
	st, err := Format{}.Scan(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	if n := st.Header.Get("unknown_tail_bytes"); n != len(f.Tail) {
		t.Errorf("unknown_tail_bytes %v", n)
	}
	last := st.Chunks[len(st.Chunks)-1]
	if got, err := last.Bytes(src.R); err != nil || !strings.HasSuffix(last.Name, "_tail.bin") || string(got) != string(f.Tail) {
		t.Errorf("chunk %s: %q, %v", last.Name, got, err)
	}
	if _, err := (Format{}).Decode(context.Background(), src); err != nil {
		t.Errorf("decode: %v", err)
	}
	plain, _ := Encode(ms11File())
	for name, bad := range map[string][]byte{
		"cut":          b[:len(b)-1],
		"after magic":  append(append([]byte{}, plain...), "junkms11"...),
		"no end magic": append(append([]byte{}, plain[:len(plain)-4]...), "junk"...),
	} {
		if _, err := Read(context.Background(), memSource(name+".mesh", bad)); err == nil {
			t.Errorf("%s: accepted", name)
		}
		if _, err := (Format{}).Scan(context.Background(), memSource(name+".mesh", bad)); err == nil {
			t.Errorf("%s: scan accepted", name)
		}
	}
}
