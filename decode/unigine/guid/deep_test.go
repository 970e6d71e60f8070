package guid_test

import (
	"strings"
	"testing"
	"time"

	"github.com/meshfs/meshfs/decode/decodetest"
	"github.com/meshfs/meshfs/decode/unigine/guid"
)

// TestDeepMeta: a .meta of elements nested as deep as its size allows is
// read in time linear in its size (the path of open elements is not
// rebuilt below <runtime>'s depth) and recorded as unparsable.
func TestDeepMeta(t *testing.T) {
	root := t.TempDir()
	n := (guid.MaxMetaBytes - len("<asset>")) / 3
	write(t, root, "deep.png.meta", "<asset>"+strings.Repeat("<a>", n))
	write(t, root, "deep.png", "png")
	type result struct {
		ix  *guid.Index
		err error
	}
	done := make(chan result, 1)
	start := time.Now()
	go func() {
		ix, err := guid.Scan(root, decodetest.DirFiles{Root: root})
		done <- result{ix, err}
	}()
	var r result
	select {
	case r = <-done:
	case <-time.After(5 * time.Second):
		t.Fatalf("Scan of a %d-deep .meta still running after 5 s; a linear read of 1 MiB takes well under one", n)
	}
	if r.err != nil {
		t.Fatal(r.err)
	}
	t.Logf("%d nested elements scanned in %v", n, time.Since(start))
	if len(r.ix.Errors) != 1 || r.ix.Len() != 0 {
		t.Errorf("%d errors (%v), %d GUIDs; want the one .meta recorded", len(r.ix.Errors), r.ix.Errors, r.ix.Len())
	}
}
