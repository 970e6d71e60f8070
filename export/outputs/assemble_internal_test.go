package outputs

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/decodetest"
	"github.com/meshfs/meshfs/decode/gem"
)

// TestRelativeTrack: a single-node track is played in its node's frame:
// a mirrored node's keys come out mirrored, composed with its matrix.
func TestRelativeTrack(t *testing.T) {
	m := decode.Identity4()
	m[0], m[12] = -1, 5 // mirror x, then move 5 along x
	track := []decode.Channel{
		{Kind: decode.TargetNode, Index: 3, Path: decode.PathTranslation, Times: []float32{0, 2}, Values: []float32{0, 0, 0, 1, 0, 0}},
		{Kind: decode.TargetNode, Index: 3, Path: decode.PathRotation, Times: []float32{1}, Values: []float32{0, 0, 0, 1}},
	}
	out := relative(m, track)
	if len(out) != 3 || out[0].Index != 3 || len(out[0].Times) != 3 {
		t.Fatalf("channels %+v, want translation, rotation and scale at the 3 key times", out)
	}
	// t = 0: the node's own place; t = 1: half way (x 0.5, mirrored: 4.5);
	// t = 2: x 1 mirrored: 4.
	for k, want := range []float32{5, 4.5, 4} {
		if got := out[0].Values[3*k]; math.Abs(float64(got-want)) > 1e-5 {
			t.Errorf("key %d: x %v, want %v", k, got, want)
		}
	}
	for k := range out[2].Times {
		if sx := out[2].Values[3*k]; sx != -1 {
			t.Errorf("key %d: x scale %v, want the node's mirror -1", k, sx)
		}
	}
}

// TestPartDecodedOnce: a part placed on several nodes is decoded once and
// its geometry shared by every placement.
func TestPartDecodedOnce(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	ply, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "testdata", "gem", "eply_tangents_textures.ply"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "wheel.ply"), ply, 0o644); err != nil {
		t.Fatal(err)
	}
	mdl := filepath.Join(dir, "car.mdl")
	if err := os.WriteFile(mdl, []byte("{Skeleton}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ref := decode.Ref{Stored: "wheel.ply", Base: decode.RefModelDir, Rel: "wheel.ply"}
	model := &decode.Model{Scale: 1, LODs: []decode.ModelLOD{{Nodes: []decode.ModelNode{{Name: "car", Parent: -1}}}}}
	for i := 0; i < 8; i++ {
		model.LODs[0].Nodes = append(model.LODs[0].Nodes, decode.ModelNode{Name: "wheel", Parent: 0, Parts: []decode.ModelPart{{Mesh: ref}}})
	}
	a := New(mdl, gem.Mdl{}).newAssembly(model)
	s, err := a.lodScene(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(a.parts) != 1 {
		t.Errorf("%d part files decoded, want 1", len(a.parts))
	}
	if len(s.Meshes) != 8 {
		t.Fatalf("%d meshes placed, want 8", len(s.Meshes))
	}
	for i := range s.Meshes {
		if &s.Meshes[i].Primitives[0].Positions[0] != &s.Meshes[0].Primitives[0].Positions[0] {
			t.Errorf("placement %d has geometry of its own", i)
		}
	}
	if len(s.Materials) != len(a.parts[filepath.Join(dir, "wheel.ply")].scene.Materials) {
		t.Errorf("%d materials for 8 placements of one part with %d", len(s.Materials), len(a.parts[filepath.Join(dir, "wheel.ply")].scene.Materials))
	}
}

// benchAssemble assembles and exports every LOD of the model at rel
// under ../shared/assets (textures and parts decoded once and shared
// thereafter through the mesh's Caches, as in the mount).
func benchAssemble(b *testing.B, rel string) {
	m, err := Open(filepath.Join(decodetest.NeedShared(b, "assets"), rel))
	if err != nil || m == nil || !m.IsModel() {
		b.Fatalf("%s: not a model: %v", rel, err)
	}
	m.Limits.Caches = NewCaches()
	b.ReportAllocs()
	c0 := decodetest.CPUTime()
	for b.Loop() {
		if _, _, err := m.ModelGLBs(context.Background()); err != nil {
			b.Fatal(err)
		}
	}
	decodetest.ReportCPU(b, c0)
}

func BenchmarkAssembleCenturion(b *testing.B) {
	benchAssemble(b, "gem-centurion/resource/entity/-vehicle/tank_heavy/centurionmk1/centurion.mdl")
}

func BenchmarkAssembleInova(b *testing.B) {
	benchAssemble(b, "tf-inova/res/models/model/vehicle/waggon/ws_inovab_wc.mdl")
}

// BenchmarkAssembleFlirt: 15 meshes, 11 .dds and 6 .tga textures.
func BenchmarkAssembleFlirt(b *testing.B) {
	benchAssemble(b, "tf-flirt/res/models/model/vehicle/train/bls/flirt200_bls_wf.mdl")
}

// TestConcurrentAssemblies: assemblies of one model at once (the mount's
// readers) share decoded textures and give the same bytes.
func TestConcurrentAssemblies(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	m, err := Open(filepath.Join(filepath.Dir(file), "..", "..", "testdata", "tfever", "res", "models", "model", "fixture", "car.mdl"))
	if err != nil || m == nil || !m.IsModel() {
		t.Fatalf("car.mdl: %v", err)
	}
	const n = 4
	out := make([][][]byte, n)
	errs := make([]error, n)
	done := make(chan int)
	for i := range n {
		go func() {
			out[i], _, errs[i] = m.ModelGLBs(context.Background())
			done <- i
		}()
	}
	for range n {
		<-done
	}
	for i := range n {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		for k := range out[i] {
			if string(out[i][k]) != string(out[0][k]) {
				t.Errorf("assembly %d: file %d differs", i, k)
			}
		}
	}
}

// TestPartSceneShared: a mesh no model names keeps nothing; a part a
// model's header named, converted for its own folder, is not decoded
// again for the model (the model places the kept scene), the model's scale
// is applied to a copy (the kept scene is unchanged), and a changed part
// file is decoded anew.
func TestPartSceneShared(t *testing.T) {
	_, file, _, _ := runtime.Caller(0)
	ply, err := os.ReadFile(filepath.Join(filepath.Dir(file), "..", "..", "testdata", "gem", "eply_tangents_textures.ply"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	part := filepath.Join(dir, "wheel.ply")
	if err := os.WriteFile(part, ply, 0o644); err != nil {
		t.Fatal(err)
	}
	pm, err := Open(part)
	if err != nil || pm == nil {
		t.Fatal(err)
	}
	caches := NewCaches() // the conversions' of this test alone
	pm.Limits.Caches = caches
	modelMesh := func() *Mesh {
		m := New(filepath.Join(dir, "car.mdl"), gem.Mdl{})
		m.Limits.Caches = caches
		return m
	}
	if _, err := pm.GLBFile(context.Background()); err != nil {
		t.Fatal(err)
	}
	if caches.part(part) != nil {
		t.Fatal("a mesh no model names kept its scene")
	}
	mdl := filepath.Join(dir, "car.mdl")
	if err := os.WriteFile(mdl, []byte("{Skeleton}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ref := decode.Ref{Stored: "wheel.ply", Base: decode.RefModelDir, Rel: "wheel.ply"}
	model := &decode.Model{Scale: 1, LODs: []decode.ModelLOD{{Nodes: []decode.ModelNode{{Name: "car", Parent: -1, Parts: []decode.ModelPart{{Mesh: ref}}}}}}}
	modelMesh().modelFields(context.Background(), model) // the model's header names the part
	if _, err := pm.GLBFile(context.Background()); err != nil {
		t.Fatal(err)
	}
	kept := caches.part(part)
	if kept == nil {
		t.Fatal("the part's own conversion kept no scene")
	}
	before := kept.scene.Meshes[0].Primitives[0].Positions[0]
	a := modelMesh().newAssembly(model)
	if _, err := a.lodScene(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	if a.parts[part].scene != kept.scene {
		t.Error("the model decoded a part its own folder had converted")
	}
	model.Scale = 0.05
	a = modelMesh().newAssembly(model)
	s, err := a.lodScene(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	got := s.Meshes[0].Primitives[0].Positions[0]
	if kept.scene.Meshes[0].Primitives[0].Positions[0] != before || math.Abs(float64(got[0]-before[0]*0.05)) > 1e-6 {
		t.Errorf("scaled placement %v from kept %v (was %v)", got, kept.scene.Meshes[0].Primitives[0].Positions[0], before)
	}

	// A new version of the part: the kept scene is stale.
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(part, later, later); err != nil {
		t.Fatal(err)
	}
	if caches.part(part) != nil {
		t.Error("a kept scene outlived its part's change")
	}
	a = modelMesh().newAssembly(model)
	if _, err := a.lodScene(context.Background(), 0); err != nil {
		t.Fatal(err)
	}
	if a.parts[part].scene == kept.scene {
		t.Error("the model placed a stale scene")
	}
}
