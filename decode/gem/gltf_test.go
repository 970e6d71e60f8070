package gem

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/meshfs/meshfs/decode/decodetest"
	"github.com/meshfs/meshfs/export/gltf"
	"github.com/meshfs/meshfs/export/gltf/validator"
)

// TestGLTFExport exports every fixture and every real file with the .glb
// exporter and runs the Khronos validator over all of them in one batch:
// each must have 0 errors.
func TestGLTFExport(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	export := func(name string, f *File) {
		sc, err := BuildScene(context.Background(), f, name+".ply")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		glb, err := gltf.Encode(sc)
		if err != nil {
			t.Fatalf("%s: gltf.Encode: %v", name, err)
		}
		p := filepath.Join(dir, name+".glb")
		if err := os.WriteFile(p, glb, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	for _, fx := range fixtures() {
		export("fixture_"+fx.name, fx.build(t))
	}
	if _, ok := decodetest.RealData(t, "gem"); ok {
		for _, path := range realFiles(t) {
			raw, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			f, err := Parse(context.Background(), path, raw)
			if err != nil {
				t.Fatal(err)
			}
			export("real_"+filepath.Base(path), f)
		}
	}
	validateFiles(t, paths)
}

// validateFiles has the Khronos validator check every file of paths (a
// subtest each); without the validator it skips, and fails under CI.
func validateFiles(t *testing.T, paths []string) {
	t.Helper()
	if err := validator.Available(); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("glTF validator required in CI: %v", err)
		}
		t.Skipf("exported %d files; validator not installed: %v", len(paths), err)
	}
	reports, err := validator.ValidateFiles(paths...)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range reports {
		t.Run(filepath.Base(paths[i]), func(t *testing.T) { validator.CheckReport(t, r) })
	}
}
