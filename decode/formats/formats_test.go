package formats

import (
	"os"
	"path/filepath"
	"testing"
)

func TestSiblings(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.msh"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	in, among := InFolder(dir), Among([]string{"a.msh", "b.msh.blob"})
	if !in("a.msh") || in("b.msh.blob") || !among("a.msh") || !among("b.msh.blob") || among("c") {
		t.Fatal("siblings answer wrong")
	}
}
