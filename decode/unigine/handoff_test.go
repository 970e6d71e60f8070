package unigine

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
	"weak"

	"github.com/meshfs/meshfs/decode"
)

// TestHandoff: Scan leaves a large geometry block for Decode, which takes
// it only while the file's compressed bytes are those Scan read: the
// scene is the same as without the handoff, and a file changed between
// the scan and the decode (same name, same sizes, one compressed byte
// different) decodes from its own bytes.
func TestHandoff(t *testing.T) {
	ctx := context.Background()
	src, err := Encode(bigGridFile(MagicMS15, 200)) // a 1.9 MB geometry block
	if err != nil {
		t.Fatal(err)
	}
	clear := func() {
		handoff.Lock()
		handoff.p = weak.Pointer[scannedBlock]{}
		handoff.Unlock()
	}
	// Hold every block left, so that no collection takes one during the
	// test (the weak pointer lets one go at any time).
	var left []*scannedBlock
	leftHook = func(sb *scannedBlock) { left = append(left, sb) }
	defer func() { leftHook = nil }()
	clear()
	want, err := Format{}.Decode(ctx, memSource("a.mesh", src))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := (Format{}).Scan(ctx, memSource("a.mesh", src)); err != nil {
		t.Fatal(err)
	}
	sb := handoff.p.Value()
	if sb == nil || sb.b.raw < minHandoff {
		t.Fatal("scan left no block")
	}
	if raw, err := loadBlock(memSource("a.mesh", src), sb.b, "g"); err != nil || !bytes.Equal(raw, sb.raw) {
		t.Fatalf("the block left differs from the file's: %v", err)
	}
	got, err := Format{}.Decode(ctx, memSource("a.mesh", src))
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("decode after the scan differs (%v)", err)
	}
	if handoff.p.Value() != nil {
		t.Error("the decode did not take the block")
	}

	// Another file's decode leaves it.
	if _, err := (Format{}).Scan(ctx, memSource("a.mesh", src)); err != nil {
		t.Fatal(err)
	}
	if _, err := (Format{}).Decode(ctx, memSource("b.mesh", src)); err != nil {
		t.Fatal(err)
	}
	if handoff.p.Value() == nil {
		t.Error("taken by another file's decode")
	}

	// One literal byte of the compressed block changed: the first
	// position's first byte.
	changed := append([]byte(nil), src...)
	changed[sb.b.data()+1] ^= 0x55
	clear()
	wantChanged, err := Format{}.Decode(ctx, memSource("a.mesh", changed))
	if err != nil {
		t.Fatal(err)
	}
	if reflect.DeepEqual(wantChanged, want) {
		t.Fatal("the change does not show in the scene")
	}
	if _, err := (Format{}).Scan(ctx, memSource("a.mesh", src)); err != nil {
		t.Fatal(err)
	}
	if handoff.p.Value() == nil {
		t.Fatal("scan left no block")
	}
	got, err = Format{}.Decode(ctx, memSource("a.mesh", changed))
	if err != nil || !reflect.DeepEqual(got, wantChanged) {
		t.Fatalf("a file changed after the scan decoded from the scan's block (%v)", err)
	}
	runtime.KeepAlive(left)
}

// TestScansReuseTheBlockLeft: scans with no decode after them (header.json
// of one mesh after another) take back the buffers the previous scan left,
// instead of allocating a new geometry block each.
func TestScansReuseTheBlockLeft(t *testing.T) {
	src, err := Encode(bigGridFile(MagicMS15, 200))
	if err != nil {
		t.Fatal(err)
	}
	var left []*scannedBlock
	leftHook = func(sb *scannedBlock) { left = append(left, sb) }
	defer func() { leftHook = nil }()
	scan := func() uint64 {
		var m runtimeMem
		m.start()
		if _, err := (Format{}).Scan(context.Background(), memSource("a.mesh", src)); err != nil {
			t.Fatal(err)
		}
		return m.stop()
	}
	scan()
	if len(left) != 1 {
		t.Fatalf("%d blocks left", len(left))
	}
	raw := uint64(left[0].b.raw)
	if alloc := scan(); alloc >= raw {
		t.Errorf("second scan allocated %d bytes, the %d-byte block again", alloc, raw)
	}
	if len(left) != 2 || &left[1].raw[0] != &left[0].raw[0] {
		t.Error("the second scan did not reuse the first one's block")
	}
	runtime.KeepAlive(left)
}

// countingFile is an open file that counts the bytes read through ReadAt
// (Stat is the file's own, so the handoff sees an open file).
type countingFile struct {
	*os.File
	n atomic.Int64
}

func (f *countingFile) ReadAt(p []byte, off int64) (int, error) {
	f.n.Add(int64(len(p)))
	return f.File.ReadAt(p, off)
}

// TestHandoffFileVersion: with open files as sources, a decode takes the
// block a scan left without reading the block again while the file is
// the version the scan read (same file, size and modification time); a
// file rewritten in place since (new modification time) or replaced by
// another (new inode, even with the old time and size) is decoded from
// its own bytes.
func TestHandoffFileVersion(t *testing.T) {
	ctx := context.Background()
	src, err := Encode(bigGridFile(MagicMS15, 200)) // a 1.9 MB geometry block
	if err != nil {
		t.Fatal(err)
	}
	var left []*scannedBlock
	leftHook = func(sb *scannedBlock) { left = append(left, sb) }
	defer func() { leftHook = nil }()
	want, err := Format{}.Decode(ctx, memSource(filepath.Join(t.TempDir(), "a.mesh"), src))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	p := filepath.Join(dir, "a.mesh")
	if err := os.WriteFile(p, src, 0o644); err != nil {
		t.Fatal(err)
	}
	open := func() (*countingFile, *decode.Source) {
		f, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { f.Close() })
		cf := &countingFile{File: f}
		return cf, &decode.Source{Name: p, R: cf, Size: int64(len(src))}
	}
	scan := func() *scannedBlock {
		t.Helper()
		_, s := open()
		if _, err := (Format{}).Scan(ctx, s); err != nil {
			t.Fatal(err)
		}
		sb := handoff.p.Value()
		if sb == nil || !sb.known {
			t.Fatal("scan left no block, or none with the file's version")
		}
		return sb
	}
	sb := scan()
	f, s := open()
	got, err := Format{}.Decode(ctx, s)
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Fatalf("decode after the scan differs (%v)", err)
	}
	if n := f.n.Load(); n >= sb.b.packed {
		t.Errorf("the decode read %d bytes of a file whose %d-byte block it was left", n, sb.b.packed)
	}

	// Rewritten in place, one compressed byte changed, a new time.
	changed := append([]byte(nil), src...)
	changed[sb.b.data()+1] ^= 0x55
	wantChanged, err := Format{}.Decode(ctx, memSource(p, changed))
	if err != nil || reflect.DeepEqual(wantChanged, want) {
		t.Fatalf("the change does not show in the scene (%v)", err)
	}
	scan()
	w, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.WriteAt(changed, 0); err != nil {
		t.Fatal(err)
	}
	w.Close()
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(p, later, later); err != nil {
		t.Fatal(err)
	}
	if _, s = open(); true {
		got, err = Format{}.Decode(ctx, s)
	}
	if err != nil || !reflect.DeepEqual(got, wantChanged) {
		t.Fatalf("a file rewritten after the scan decoded from the scan's block (%v)", err)
	}

	// Replaced by another file (rename) with the scanned one's time.
	if err := os.WriteFile(p, src, 0o644); err != nil {
		t.Fatal(err)
	}
	sb = scan()
	q := filepath.Join(dir, "b.mesh")
	if err := os.WriteFile(q, changed, 0o644); err != nil {
		t.Fatal(err)
	}
	scanned := time.Unix(0, sb.version.MtimeNs)
	if err := os.Chtimes(q, scanned, scanned); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(q, p); err != nil {
		t.Fatal(err)
	}
	_, s = open()
	got, err = Format{}.Decode(ctx, s)
	if err != nil || !reflect.DeepEqual(got, wantChanged) {
		t.Fatalf("a file replaced after the scan decoded from the scan's block (%v)", err)
	}
	runtime.KeepAlive(left)
}
