//go:build unix

package unigine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/meshfs/meshfs/decode"
)

// TestMappedBlocks: large blocks of an open file are decompressed from a
// mapping of it, with the same scene and structure as from memory; a
// file cut short between the mapping and the decompression (the pages
// past its new end fault) gives a positioned truncation error, not a
// crash.
func TestMappedBlocks(t *testing.T) {
	ctx := context.Background()
	src, err := Encode(bigGridFile(MagicMS15, 400)) // a 4 MB geometry block
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "m.mesh")
	if err := os.WriteFile(p, src, 0o644); err != nil {
		t.Fatal(err)
	}
	open := func() *decode.Source {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		return &decode.Source{Name: p, R: f, Size: int64(len(src))}
	}
	mapped := 0
	mappedHook = func() { mapped++ }
	defer func() { mappedHook = nil }()
	want, err := Format{}.Decode(ctx, memSource(p, src))
	if err != nil {
		t.Fatal(err)
	}
	if mapped != 0 {
		t.Fatal("an in-memory source was mapped")
	}
	got, err := Format{}.Decode(ctx, open())
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("decode from a mapped file differs (%v)", err)
	}
	if mapped == 0 {
		t.Fatal("the file's large block was not mapped")
	}
	st, err := Format{}.Scan(ctx, open())
	wantSt, _ := Format{}.Scan(ctx, memSource(p, src))
	if err != nil {
		t.Fatal(err)
	}
	j, _ := decode.HeaderJSON(st.Header)
	wantJ, _ := decode.HeaderJSON(wantSt.Header)
	if string(j) != string(wantJ) {
		t.Errorf("header.json from a mapped file differs")
	}

	// Cut short after the mapping, at a page boundary 1 MB into the
	// block: the decompression runs into the first page past the file's
	// new end (a page holding the end would read as zeros past it, which
	// the decompressor refuses).
	s := open()
	l, err := locate(s, mustHeader(t, s))
	if err != nil {
		t.Fatal(err)
	}
	mappedHook = func() {
		if err := os.Truncate(p, (l.geom[0].data()+1<<20)&^int64(os.Getpagesize()-1)); err != nil {
			t.Fatal(err)
		}
	}
	_, err = Format{}.Decode(ctx, s)
	var fe *decode.FormatError
	if !errors.As(err, &fe) || !errors.Is(err, decode.ErrTruncated) || fe.Offset != l.geom[0].data() || !strings.Contains(fe.Msg, "cut short") {
		t.Fatalf("a file cut short during decompression: %v", err)
	}
}

func mustHeader(t *testing.T, s *decode.Source) *header {
	t.Helper()
	h, err := parseHeader(newFileReader(s.Name, "header", s.R, s.Size))
	if err != nil {
		t.Fatal(err)
	}
	return h
}
