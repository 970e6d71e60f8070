package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/meshfs/meshfs/internal/store"
)

// The default daemon log is bounded: moved aside once at its limit, and
// followed by a second writer when another one moved it.
func TestRotatingLog(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	p := filepath.Join(dir, daemonLogName)
	a, err := openRotatingLog(p, 1000)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if _, err := os.Stat(filepath.Join(dir, store.MarkerName)); err != nil {
		t.Fatalf("the log's folder is not a marked cache folder: %v", err)
	}
	b, err := openRotatingLog(p, 1000)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	line := []byte(strings.Repeat("x", 99) + "\n")
	for i := range 35 {
		w := a
		if i%2 == 1 {
			w = b
		}
		if _, err := w.Write(line); err != nil {
			t.Fatal(err)
		}
	}
	cur, err1 := os.ReadFile(p)
	old, err2 := os.ReadFile(p + ".1")
	if err1 != nil || err2 != nil {
		t.Fatalf("log %v, rotated log %v", err1, err2)
	}
	if len(cur) > 1000 || len(old) > 1000 {
		t.Fatalf("log of %d bytes and rotated log of %d over the 1000-byte limit", len(cur), len(old))
	}
	// 35 lines of 100 bytes, at most 10 per file: the last 5 in the log,
	// 10 in the rotated one (the others gone), none torn.
	if len(cur) != 500 || len(old) != 1000 || bytes.Count(cur, line) != 5 {
		t.Fatalf("log of %d bytes, rotated log of %d", len(cur), len(old))
	}
	// A foreign folder is not written into.
	foreign := t.TempDir()
	os.WriteFile(filepath.Join(foreign, "x"), nil, 0o644)
	if _, err := openRotatingLog(filepath.Join(foreign, daemonLogName), 1000); err == nil {
		t.Fatal("a log opened in a folder meshfs did not make")
	}
}
