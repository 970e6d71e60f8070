package store

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/meshfs/meshfs/decode/decodetest"
	"github.com/meshfs/meshfs/internal/store/failures"
)

// TestErrorsTextNamesOnce: each line of .meshfs/errors.txt names its mesh
// once, at its start, and a file the error is about (a missing .msh.blob)
// once more: a truncated UNIGINE mesh and a Transport Fever mesh without
// its blob.
func TestErrorsTextNamesOnce(t *testing.T) {
	src := t.TempDir()
	fixtures := filepath.Join(decodetest.RepoRoot(), "testdata")
	cube, err := os.ReadFile(filepath.Join(fixtures, "unigine", "ms15_cube.mesh"))
	if err != nil {
		t.Fatal(err)
	}
	msh, err := os.ReadFile(filepath.Join(fixtures, "tfever", "tf2_cube.msh"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(src, "x.mesh"), cube[:40], 0o644)
	os.WriteFile(filepath.Join(src, "nob.msh"), msh, 0o644)

	ctx := context.Background()
	s, _ := newStore(t, src, t.TempDir())
	for _, name := range []string{"x.mesh", "nob.msh"} {
		m, v := meshOf(t, s, filepath.Join(src, name))
		if _, err := s.geometry(ctx, m, v, OutGLB); err != nil {
			t.Fatal(err)
		}
	}
	text := string(failures.ErrorsText(src, s.failed.Current(src)))
	lines := strings.Split(strings.TrimSuffix(text, "\n"), "\n")
	if len(lines) != 2 {
		t.Fatalf("errors.txt:\n%s\nwant 2 lines", text)
	}
	blob := filepath.Join(src, "nob.msh.blob")
	for _, c := range []struct {
		line, prefix, once string
	}{
		{lines[0], "nob.msh: " + blob + ": blob: offset 0x0: cannot open the companion: ", blob},
		{lines[1], "x.mesh: header: offset 0x", "x.mesh"},
	} {
		if !strings.HasPrefix(c.line, c.prefix) || strings.Count(c.line, c.once) != 1 {
			t.Errorf("errors.txt line %q: want it to start %q and name %s once", c.line, c.prefix, c.once)
		}
	}
}
