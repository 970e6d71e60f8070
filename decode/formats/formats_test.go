package formats

import (
	"strings"
	"testing"
)

func TestSiblings(t *testing.T) {
	among := Among([]string{"a.msh", "b.msh.blob"})
	if !among("a.msh") || !among("b.msh.blob") || among("c") {
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

// TestExtensions: every registered format names its extensions, and each
// is one its own StripExt removes and its Sniff does not reject by name
// (a name of another extension gets nothing from StripExt).
func TestExtensions(t *testing.T) {
	for _, f := range All {
		exts := Extensions(f)
		if len(exts) == 0 {
			t.Errorf("%s names no extension", f.Name())
		}
		for _, e := range exts {
			if e != strings.ToLower(e) || !strings.HasPrefix(e, ".") {
				t.Errorf("%s: extension %q is not lower case with its dot", f.Name(), e)
			}
			if got := f.StripExt("a" + strings.ToUpper(e)); got != "a" {
				t.Errorf("%s: StripExt(%q) = %q, want \"a\"", f.Name(), "a"+strings.ToUpper(e), got)
			}
		}
		if got := f.StripExt("a.zzz"); got != "a.zzz" {
			t.Errorf("%s: StripExt(a.zzz) = %q", f.Name(), got)
		}
	}
}
