package unigine

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"runtime/debug"
	"slices"
	"testing"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/decodetest"
	"github.com/meshfs/meshfs/export/gltf"
	"github.com/meshfs/meshfs/export/gltf/validator"
)

// TestGLBValidates converts every fixture and real file to .glb and runs
// the Khronos validator over all of them at once: 0 errors each.
func TestGLBValidates(t *testing.T) {
	if err := validator.Available(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	var paths []string
	for _, fx := range fixtures {
		paths = append(paths, filepath.Join(fixtureDir, fx.name))
	}
	if _, ok := decodetest.RealData(t, "unigine"); ok {
		paths = append(paths, realFiles(t)...)
	}
	paths = append(paths, assetFiles(t)...)
	for _, fx := range animFixtures {
		paths = append(paths, filepath.Join(fixtureDir, fx.name))
	}
	paths = append(paths, assetAnims(t)...)
	dir := t.TempDir()
	var glbs []string
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		var format decode.Format = Format{}
		if (AnimFormat{}).Sniff(p, b) {
			format = AnimFormat{}
		}
		sc, err := format.Decode(context.Background(), memSource(p, b))
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		glb, err := gltf.Encode(sc)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		out := filepath.Join(dir, filepath.Base(p)+".glb")
		if err := os.WriteFile(out, glb, 0o644); err != nil {
			t.Fatal(err)
		}
		glbs = append(glbs, out)
	}
	reports, err := validator.ValidateFiles(glbs...)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range reports {
		t.Run(filepath.Base(paths[i]), func(t *testing.T) { validator.CheckReport(t, r) })
	}
}

// BenchmarkConvertUnigine decodes a generated ms15 mesh of about a million
// triangles (708×708 grid: 999 698 triangles, 501 264 vertices, compact
// indices) and encodes the .glb. SetBytes is the source size.
func BenchmarkConvertUnigine(b *testing.B) {
	f := bigGridFile(MagicMS15, 708)
	src, err := Encode(f)
	if err != nil {
		b.Fatal(err)
	}
	decodetest.Loop(b, int64(len(src)), func() error {
		sc, err := Format{}.Decode(context.Background(), memSource("bench.mesh", src))
		if err != nil {
			return err
		}
		if _, err := gltf.Encode(sc); err != nil {
			return err
		}
		return nil
	})
}

// BenchmarkColdPathUnigine is what the mount does on the cold first read
// of the same mesh's .glb: scan the file from disk (header.json and the
// chunk list, for the mesh folder), then decode it from disk and encode
// the .glb. SetBytes is the source size.
func BenchmarkColdPathUnigine(b *testing.B) { benchColdPath(b, nil) }

// benchColdPath is BenchmarkColdPathUnigine, calling before (when not
// nil) outside the timing before each conversion.
func benchColdPath(b *testing.B, before func()) {
	src, err := Encode(bigGridFile(MagicMS15, 708))
	if err != nil {
		b.Fatal(err)
	}
	open := benchOpener(b, src)
	decodetest.Loop(b, int64(len(src)), func() error {
		if before != nil {
			b.StopTimer()
			before()
			b.StartTimer()
		}
		f, s := open()
		st, err := Format{}.Scan(context.Background(), s)
		if err != nil {
			return err
		}
		if _, err := decode.HeaderJSON(st.Header); err != nil {
			return err
		}
		f.Close()
		f, s = open()
		sc, err := Format{}.Decode(context.Background(), s)
		if err != nil {
			return err
		}
		f.Close()
		if _, err := gltf.Encode(sc); err != nil {
			return err
		}
		return nil
	})
}

// BenchmarkDecodeUnigine is the decode half alone.
func BenchmarkDecodeUnigine(b *testing.B) {
	src, err := Encode(bigGridFile(MagicMS15, 708))
	if err != nil {
		b.Fatal(err)
	}
	decodetest.Loop(b, int64(len(src)), func() error {
		if _, err := (Format{}).Decode(context.Background(), memSource("bench.mesh", src)); err != nil {
			return err
		}
		return nil
	})
}

// BenchmarkExportUnigine is the .glb export half alone; MB/s is still of
// the source, so the three figures compare.
func BenchmarkExportUnigine(b *testing.B) {
	src, err := Encode(bigGridFile(MagicMS15, 708))
	if err != nil {
		b.Fatal(err)
	}
	sc, err := Format{}.Decode(context.Background(), memSource("bench.mesh", src))
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

// TestGLBSkinAndTargets: the sk10 fixture's .glb has the file's joints plus
// one synthetic root, and its morph targets by name with zero weights.
func TestGLBSkinAndTargets(t *testing.T) {
	sc := decodeFixture(t, "sk10_character.mesh_skinned")
	glb, err := gltf.Encode(sc)
	if err != nil {
		t.Fatal(err)
	}
	if len(glb) < 20 || string(glb[:4]) != "glTF" || string(glb[16:20]) != "JSON" {
		t.Fatal("not a .glb")
	}
	n := binary.LittleEndian.Uint32(glb[12:])
	var doc struct {
		Nodes []struct {
			Name string `json:"name"`
		} `json:"nodes"`
		Skins []struct {
			Joints []int `json:"joints"`
		} `json:"skins"`
		Meshes []struct {
			Weights []float64 `json:"weights"`
			Extras  struct {
				TargetNames []string `json:"targetNames"`
			} `json:"extras"`
			Primitives []struct {
				Targets []map[string]int `json:"targets"`
			} `json:"primitives"`
		} `json:"meshes"`
	}
	if err := json.Unmarshal(glb[20:20+n], &doc); err != nil {
		t.Fatal(err)
	}
	f := characterFile()
	if len(doc.Skins) != 1 || len(doc.Skins[0].Joints) != len(f.Joints)+1 {
		t.Fatalf("skins %+v", doc.Skins)
	}
	names := map[string]bool{}
	for _, j := range doc.Skins[0].Joints {
		names[doc.Nodes[j].Name] = true
	}
	for _, j := range f.Joints {
		if !names[j.Name] {
			t.Errorf("joint %q missing from the skin", j.Name)
		}
	}
	// One mesh per surface, each with its surface's targets.
	want := [][]string{{"smile", "blink"}, {"grow"}}
	if len(doc.Meshes) != len(f.Surfaces) {
		t.Fatalf("%d meshes for %d surfaces", len(doc.Meshes), len(f.Surfaces))
	}
	for i, m := range doc.Meshes {
		if !reflect.DeepEqual(m.Extras.TargetNames, want[i]) {
			t.Fatalf("meshes %+v", doc.Meshes)
		}
		if len(m.Weights) != len(want[i]) || slices.ContainsFunc(m.Weights, func(w float64) bool { return w != 0 }) {
			t.Errorf("mesh weights %v", m.Weights)
		}
		for _, p := range m.Primitives {
			if len(p.Targets) != len(want[i]) {
				t.Errorf("primitive with %d targets", len(p.Targets))
			}
		}
	}
}

// BenchmarkColdPathFresh is BenchmarkColdPathUnigine with the memory the
// runtime has freed given back to the system before each conversion, as
// on a first conversion in a new mount: every large array then faults its
// pages in on its first write.
func BenchmarkColdPathFresh(b *testing.B) {
	benchColdPath(b, func() { debug.FreeOSMemory() })
}

// benchOpener writes src to a file and returns a function that opens it
// as a decode.Source (each call a new open, as the mount's Scan and Decode
// do).
func benchOpener(b *testing.B, src []byte) func() (*os.File, *decode.Source) {
	p := filepath.Join(b.TempDir(), "bench.mesh")
	if err := os.WriteFile(p, src, 0o644); err != nil {
		b.Fatal(err)
	}
	return func() (*os.File, *decode.Source) {
		f, err := os.Open(p)
		if err != nil {
			b.Fatal(err)
		}
		return f, &decode.Source{Name: p, R: f, Size: int64(len(src))}
	}
}

// TestGLBSurfaceNames: each surface is a node and a mesh of its own name,
// the names Blender shows for objects and mesh data; a surface without a
// name is called after the file and its number.
func TestGLBSurfaceNames(t *testing.T) {
	f := multiFile()
	f.Surfaces = append(f.Surfaces, f.Surfaces[0])
	f.Surfaces[2].Name = ""
	b, err := Encode(f)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := Format{}.Decode(context.Background(), memSource("multi.mesh", b))
	if err != nil {
		t.Fatal(err)
	}
	glb, err := gltf.Encode(sc)
	if err != nil {
		t.Fatal(err)
	}
	n := binary.LittleEndian.Uint32(glb[12:])
	var doc struct {
		Nodes []struct {
			Name string `json:"name"`
			Mesh *int   `json:"mesh"`
		} `json:"nodes"`
		Meshes []struct {
			Name string `json:"name"`
		} `json:"meshes"`
	}
	if err := json.Unmarshal(glb[20:20+n], &doc); err != nil {
		t.Fatal(err)
	}
	want := []string{"lid", "floor/tiles", "multi_2"}
	var got, meshes []string
	for _, nd := range doc.Nodes {
		if nd.Mesh != nil {
			got = append(got, nd.Name)
			meshes = append(meshes, doc.Meshes[*nd.Mesh].Name)
		}
	}
	if !reflect.DeepEqual(got, want) || !reflect.DeepEqual(meshes, want) {
		t.Errorf("nodes %q, meshes %q; want %q", got, meshes, want)
	}
}
