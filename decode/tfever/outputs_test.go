package tfever_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/meshfs/meshfs/decode/formats"
	"github.com/meshfs/meshfs/decode/tfever"
	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/vfs/vfstest"
)

// TestMissingBlobFolder converts a .msh whose blob is missing the way the
// CLI and the mount do: the folder gets header.json (with the script's
// tables), chunks/data.lua and error.txt naming the blob, and no crash.
func TestMissingBlobFolder(t *testing.T) {
	src, err := os.ReadFile(filepath.Join("..", "..", "testdata", "tfever", "tf2_cube.msh"))
	if err != nil {
		t.Fatal(err)
	}
	in := t.TempDir()
	p := filepath.Join(in, "lonely.msh")
	if err := os.WriteFile(p, src, 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := outputs.Open(p)
	if err != nil || m == nil {
		t.Fatalf("open: %v %v", m, err)
	}
	if _, ok := m.Format.(tfever.Msh); !ok {
		t.Fatalf("sniffed as %T", m.Format)
	}
	out := filepath.Join(t.TempDir(), "lonely")
	if err := vfstest.Convert(t, m.Path, &m.Limits, out); err == nil {
		t.Fatal("no error for a missing blob")
	}
	e, err := os.ReadFile(filepath.Join(out, outputs.ErrorName))
	if err != nil || !strings.Contains(string(e), "lonely.msh.blob") {
		t.Fatalf("error.txt %q %v", e, err)
	}
	h, err := os.ReadFile(filepath.Join(out, outputs.HeaderName))
	if err != nil || !strings.Contains(string(h), `"vertexAttr"`) || !strings.Contains(string(h), `"error"`) {
		t.Fatalf("header.json %s %v", h, err)
	}
	if b, err := os.ReadFile(filepath.Join(out, outputs.ChunksDir, "data.lua")); err != nil || string(b) != string(src) {
		t.Fatalf("chunks/data.lua: %v", err)
	}
	// The blob, once there, is a companion that listings hide.
	exists := func(n string) bool { return n == "lonely.msh" }
	if !formats.IsCompanion("lonely.msh.blob", exists) {
		t.Error("lonely.msh.blob is not hidden beside lonely.msh")
	}
}
