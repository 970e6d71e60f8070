package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/meshfs/meshfs/decode/formats"
)

// TestHelpListsFormats: `meshfs --help` names every format decode/formats
// registers, on a line with each extension it claims, and the exit
// statuses.
func TestHelpListsFormats(t *testing.T) {
	root := newRootCmd()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetArgs([]string{"--help"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out.String(), "\n")
	for _, f := range formats.All {
		found := false
		for _, l := range lines {
			fields := strings.Fields(l)
			if len(fields) == 0 || fields[0] != f.Name() {
				continue
			}
			found = true
			for _, e := range formats.Extensions(f) {
				if !strings.Contains(" "+l+" ", " "+e+" ") {
					t.Errorf("%s's line %q lacks %s", f.Name(), l, e)
				}
			}
		}
		if !found {
			t.Errorf("--help has no line for %s:\n%s", f.Name(), out.String())
		}
	}
	if !strings.Contains(out.String(), "Exit status: 0") {
		t.Errorf("--help does not give the exit statuses:\n%s", out.String())
	}
}
