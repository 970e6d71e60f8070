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

// TestSniffModels: GEM's .mdl text and .anm files find their formats by
// content; a Transport Fever .mdl (Lua) and other .anm files are not
// GEM's.
func TestSniffModels(t *testing.T) {
	for _, c := range []struct{ name, head, want string }{
		{"centurion.mdl", ";Exported by: butyvsky", "gem-mdl"},
		{"x.mdl", "{Skeleton\n\t{bone", "gem-mdl"},
		{"ws_inovab_wc.mdl", "function data()\n", ""},
		{"sign.mdl", "local s = require", ""},
		{"open.anm", "EANM\x00\x00\x06\x00FRMS\x0b\x00\x00\x00", "gem-anm"},
		{"other.anm", "RIFF....", ""},
		{"body.ply", "EPLYBNDS", "gem-ply"},
	} {
		got := ""
		if f := Sniff(c.name, []byte(c.head)); f != nil {
			got = f.Name()
		}
		if got != c.want && !(c.want == "" && got != "gem-mdl" && got != "gem-anm") {
			t.Errorf("Sniff(%q, %q) = %q, want %q", c.name, c.head, got, c.want)
		}
	}
}
