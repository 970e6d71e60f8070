package vfs_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/meshfs/meshfs/decode/gem"
	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/vfs"
)

// handed is one call of MakeFolder's made.
type handed struct {
	pass int
	rel  string
	dir  bool
	data []byte
}

// makeFolder runs MakeFolder on the folder name of tr, recording each
// entry handed to made.
func makeFolder(t *testing.T, tr vfs.Tree, name string) ([]handed, []string, error) {
	t.Helper()
	var got []handed
	gone, err := vfs.MakeFolder(context.Background(), tr, name, func(pass int, rel string, i vfs.Info, f vfs.File) error {
		h := handed{pass: pass, rel: rel, dir: f == nil}
		if f != nil {
			b, err := io.ReadAll(io.NewSectionReader(f, 0, i.Size))
			if err != nil {
				return err
			}
			h.data = b
		}
		got = append(got, h)
		return nil
	})
	return got, gone, err
}

// TestMakeFolder: a sound mesh's folder is made in one pass, every entry
// its listings show handed once (chunks/ before its chunks), each file
// with the bytes Open reads, and no failure. A mesh whose scan passes but
// whose geometry fails is made again from the listing that shows
// error.txt: the geometry the first listing showed is gone, and the
// failure is error.txt's text.
func TestMakeFolder(t *testing.T) {
	src := t.TempDir()
	ply := filepath.Join("..", "testdata", "gem", "eply_tangents_textures.ply")
	copyFile(t, ply, filepath.Join(src, "whole.ply"))
	// Two VERT chunks: Scan lists them, Decode refuses.
	b, err := os.ReadFile(ply)
	if err != nil {
		t.Fatal(err)
	}
	f, err := gem.Parse(context.Background(), "twice.ply", b)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range f.Chunks {
		if c.FourCC() == "VERT" {
			f.Chunks = append(f.Chunks, c)
			break
		}
	}
	if b, err = gem.Encode(f); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "twice.ply"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	tr := newTree(t, src)

	got, gone, err := makeFolder(t, tr, "whole.ply")
	if err != nil || len(gone) != 0 {
		t.Fatalf("whole.ply: failure %v, gone %v", err, gone)
	}
	var want []string
	for _, n := range names(t, tr, "whole.ply") {
		want = append(want, n)
		if n == outputs.ChunksDir {
			for _, c := range names(t, tr, "whole.ply/"+n) {
				want = append(want, n+"/"+c)
			}
		}
	}
	var rels []string
	for i, h := range got {
		rels = append(rels, h.rel)
		if h.pass != 0 {
			t.Errorf("whole.ply: %s made in pass %d", h.rel, h.pass)
		}
		if h.dir {
			if i > 0 && strings.HasPrefix(got[i-1].rel, h.rel+"/") {
				t.Errorf("whole.ply: %s handed after what it holds", h.rel)
			}
			continue
		}
		if b := readAll(t, tr, "whole.ply/"+h.rel); !bytes.Equal(b, h.data) {
			t.Errorf("whole.ply: %s: %d bytes handed, Open reads %d", h.rel, len(h.data), len(b))
		}
	}
	slices.Sort(rels)
	if !slices.Equal(rels, want) || !slices.Contains(rels, "whole.glb") || !slices.Contains(rels, outputs.ChunksDir) {
		t.Fatalf("whole.ply: handed %v, listed %v", rels, want)
	}

	before := names(t, tr, "twice.ply") // converts nothing
	got, gone, err = makeFolder(t, tr, "twice.ply")
	last := names(t, tr, "twice.ply")
	var second []string
	for _, h := range got {
		if h.pass == 1 {
			second = append(second, h.rel)
		}
	}
	if !slices.Contains(before, "twice.glb") || slices.Contains(last, "twice.glb") ||
		!slices.Contains(second, outputs.ErrorName) || slices.Contains(second, "twice.glb") {
		t.Fatalf("twice.ply: listed %v, then %v; second pass %v", before, last, second)
	}
	var lacks []string
	for _, n := range before {
		if !slices.Contains(last, n) {
			lacks = append(lacks, n)
		}
	}
	if !slices.Equal(gone, lacks) {
		t.Errorf("gone %v, want %v (listed first, not last)", gone, lacks)
	}
	text := strings.TrimSpace(string(readAll(t, tr, "twice.ply/"+outputs.ErrorName)))
	if err == nil || err.Error() != text || text == "" {
		t.Fatalf("twice.ply: failure %v, error.txt %q", err, text)
	}
}
