package validator

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/qmuntal/gltf"
)

// triangle builds a one-triangle .glb by hand; withBounds controls whether
// POSITION has the min/max the spec requires.
func triangle(t *testing.T, withBounds bool) []byte {
	t.Helper()
	pos := [][3]float32{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}}
	data := make([]byte, 36)
	for i, p := range pos {
		for c, v := range p {
			binary.LittleEndian.PutUint32(data[12*i+4*c:], math.Float32bits(v))
		}
	}
	acc := &gltf.Accessor{BufferView: gltf.Index(0), ComponentType: gltf.ComponentFloat, Count: 3, Type: gltf.AccessorVec3}
	if withBounds {
		acc.Min = []float64{0, 0, 0}
		acc.Max = []float64{1, 1, 0}
	}
	doc := &gltf.Document{
		Asset:       gltf.Asset{Version: "2.0", Generator: "meshfs validator test"},
		Buffers:     []*gltf.Buffer{{ByteLength: len(data), Data: data}},
		BufferViews: []*gltf.BufferView{{Buffer: 0, ByteLength: len(data), Target: gltf.TargetArrayBuffer}},
		Accessors:   []*gltf.Accessor{acc},
		Meshes:      []*gltf.Mesh{{Name: "tri", Primitives: []*gltf.Primitive{{Attributes: gltf.PrimitiveAttributes{gltf.POSITION: 0}}}}},
		Nodes:       []*gltf.Node{{Name: "tri", Mesh: gltf.Index(0)}},
		Scenes:      []*gltf.Scene{{Nodes: []int{0}}},
		Scene:       gltf.Index(0),
	}
	var b bytes.Buffer
	if err := gltf.NewEncoder(&b).Encode(doc); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// fakeTB records what Check does to a test: its Fatalf and Skipf end the
// goroutine, as testing's do.
type fakeTB struct {
	testing.TB
	failed, skipped bool
	logs            []string
}

func (f *fakeTB) Helper()                        {}
func (f *fakeTB) Logf(format string, a ...any)   { f.logs = append(f.logs, fmt.Sprintf(format, a...)) }
func (f *fakeTB) Errorf(format string, a ...any) { f.failed = true }
func (f *fakeTB) Fatalf(format string, a ...any) { f.failed = true; runtime.Goexit() }
func (f *fakeTB) Skipf(format string, a ...any)  { f.skipped = true; runtime.Goexit() }

// checkOn runs Check on glb with the fake test f, and reports whether
// Check returned (did not end the test) and its report.
func checkOn(f *fakeTB, glb []byte) (returned bool, r *Report) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		r = Check(f, glb)
		returned = true
	}()
	<-done
	return returned, r
}

// TestCheckWithoutValidator: where the validator is not installed, Check
// leaves out only its own check (it logs that, returns nil and the test
// goes on: TestModelAssembly's assertions still run on a fresh clone);
// with CI set it fails the test.
func TestCheckWithoutValidator(t *testing.T) {
	glb := triangle(t, true)
	t.Setenv("MESHFS_VALIDATOR_DIR", t.TempDir()) // no node_modules
	t.Setenv("CI", "")
	f := &fakeTB{}
	if returned, r := checkOn(f, glb); !returned || r != nil || f.failed || f.skipped || len(f.logs) != 1 {
		t.Errorf("without CI: returned %v, report %v, failed %v, skipped %v, logs %q; want it to return nil and log once",
			returned, r, f.failed, f.skipped, f.logs)
	}
	t.Setenv("CI", "true")
	f = &fakeTB{}
	if returned, _ := checkOn(f, glb); returned || !f.failed || f.skipped {
		t.Errorf("with CI: returned %v, failed %v, skipped %v; want the test failed", returned, f.failed, f.skipped)
	}
}

func TestValidateGood(t *testing.T) {
	Need(t)
	r := Check(t, triangle(t, true))
	if r.Issues.NumErrors != 0 {
		t.Fatalf("errors: %+v", r.Issues.Messages)
	}
	if r.Info.TotalVertexCount != 3 || r.Info.TotalTriangleCount != 1 || r.Info.DrawCallCount != 1 {
		t.Errorf("info = %+v, want 3 vertices, 1 triangle, 1 draw call", r.Info)
	}
	if r.Info.Generator != "meshfs validator test" || r.ValidatorVersion == "" {
		t.Errorf("generator %q, validator version %q", r.Info.Generator, r.ValidatorVersion)
	}
}

func TestValidateFindsErrors(t *testing.T) {
	Need(t)
	r, err := Validate(triangle(t, false))
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, m := range r.Issues.Messages {
		if m.Code == "MESH_PRIMITIVE_POSITION_ACCESSOR_WITHOUT_BOUNDS" && m.Severity == SeverityError && m.Pointer != "" {
			found = true
		}
	}
	if r.Issues.NumErrors == 0 || !found {
		t.Fatalf("want MESH_PRIMITIVE_POSITION_ACCESSOR_WITHOUT_BOUNDS error, got %+v", r.Issues)
	}
}

func TestValidateFilesBatchAndGarbage(t *testing.T) {
	Need(t)
	dir := t.TempDir()
	good := filepath.Join(dir, "good.glb")
	junk := filepath.Join(dir, "junk.glb")
	if err := os.WriteFile(good, triangle(t, true), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(junk, []byte("glTF\x02\x00\x00\x00garbage"), 0o644); err != nil {
		t.Fatal(err)
	}
	rs, err := ValidateFiles(good, junk, filepath.Join(dir, "missing.glb"))
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 3 {
		t.Fatalf("%d reports", len(rs))
	}
	if rs[0].Issues.NumErrors != 0 || rs[0].Fatal != "" {
		t.Errorf("good file: %+v", rs[0])
	}
	if rs[1].Issues.NumErrors == 0 && rs[1].Fatal == "" {
		t.Errorf("junk file passed: %+v", rs[1])
	}
	if rs[2].Fatal == "" {
		t.Errorf("missing file has no fatal error: %+v", rs[2])
	}
}
