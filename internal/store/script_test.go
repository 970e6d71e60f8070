package store

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// concatBomb is a model script that asks one instruction to join 30 copies
// of a 32 MiB string (issue #26): the sandbox refuses it before building it.
const concatBomb = `local s = string.rep("x", 32 * 1024 * 1024)
local y = s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s..s
function data() return {} end
`

// TestScriptLimitRecorded: a model whose script the sandbox stopped by its
// budget is broken, its error naming the file and the limit; a remount on
// the same disk cache finds the failure without running the script again,
// and a change of the script runs it again.
func TestScriptLimitRecorded(t *testing.T) {
	src, disk := t.TempDir(), t.TempDir()
	p := filepath.Join(src, "bomb.mdl")
	if err := os.WriteFile(p, []byte(concatBomb), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	s, _ := newStore(t, src, disk)
	m, v := meshOf(t, s, p)
	r, err := s.Scan(ctx, m, v)
	if err != nil {
		t.Fatal(err)
	}
	if r.ScanErr == nil || !strings.Contains(r.ScanErr.Error(), "bomb.mdl") || !strings.Contains(r.ScanErr.Error(), "limit of 67108864 bytes") {
		t.Fatalf("scan error %v, want the file and the byte limit", r.ScanErr)
	}
	if !s.knownBroken(m, v, r) {
		t.Fatal("the bomb is not known broken")
	}

	s2 := reopen(t, s, disk)
	m2, v2 := meshOf(t, s2, p)
	if !s2.failedOnDisk(m2, v2) {
		t.Fatal("a new store does not find the failure on disk")
	}
	r2, err := s2.Scan(ctx, m2, v2)
	if err != nil || r2.ScanErr == nil || r2.ScanErr.Error() != r.ScanErr.Error() {
		t.Fatalf("scan after a remount: %v, %v; want %v", err, r2.ScanErr, r.ScanErr)
	}
	if n := s2.cache.Stats().Loads[Label(m2, OutScan)]; n != 0 {
		t.Fatalf("the remount ran the script %d times; its failure is on disk", n)
	}

	// Changed: the script runs again (and fails again, on another line).
	if err := os.WriteFile(p, []byte("\n"+concatBomb), 0o644); err != nil {
		t.Fatal(err)
	}
	s3 := reopen(t, s2, disk)
	m3, v3 := meshOf(t, s3, p)
	r3, err := s3.Scan(ctx, m3, v3)
	if err != nil || r3.ScanErr == nil || !strings.Contains(r3.ScanErr.Error(), "bomb.mdl:3") {
		t.Fatalf("scan of the changed script: %v, %v", err, r3.ScanErr)
	}
	if n := s3.cache.Stats().Loads[Label(m3, OutScan)]; n != 1 {
		t.Fatalf("the changed script ran %d times, want 1", n)
	}
}

// TestScriptModuleRecorded: the failure of a model whose required module
// hits the sandbox's limit is recorded under the module's version too: a
// remount does not run the script again while both files are unchanged,
// and does once the module changed.
func TestScriptModuleRecorded(t *testing.T) {
	src, disk := t.TempDir(), t.TempDir()
	res := filepath.Join(src, "mod", "res")
	p := filepath.Join(res, "models", "model", "bomb.mdl")
	mod := filepath.Join(res, "scripts", "bomb.lua")
	for name, b := range map[string]string{p: `local b = require "bomb" function data() return b end`, mod: concatBomb + "return {}\n"} {
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(b), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	s, _ := newStore(t, src, disk)
	m, v := meshOf(t, s, p)
	r, err := s.Scan(ctx, m, v)
	if err != nil || r.ScanErr == nil || !strings.Contains(r.ScanErr.Error(), "bomb.lua:2") {
		t.Fatalf("scan: %v, %v; want the module's concatenation refused", err, r.ScanErr)
	}
	if set := s.versions.Set(p); len(set) != 1 || set[0].Path != mod {
		t.Fatalf("the failed scan's files %v, want the module %s", set, mod)
	}

	s2 := reopen(t, s, disk)
	m2, v2 := meshOf(t, s2, p)
	if r2, err := s2.Scan(ctx, m2, v2); err != nil || r2.ScanErr == nil {
		t.Fatalf("scan after a remount: %v, %v", err, r2.ScanErr)
	}
	if n := s2.cache.Stats().Loads[Label(m2, OutScan)]; n != 0 {
		t.Fatalf("the remount ran the script %d times; its failure is on disk", n)
	}

	// The module changed while unmounted: the next mount runs the script.
	if err := os.WriteFile(mod, []byte("return { fixed = true }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s3 := reopen(t, s2, disk)
	m3, v3 := meshOf(t, s3, p)
	if v3.Same(v2) {
		t.Fatal("the module changed while unmounted: the same version")
	}
	// (The model, with no LODs, stays broken, for another reason.)
	r3, err := s3.Scan(ctx, m3, v3)
	if err != nil || r3.ScanErr == nil || strings.Contains(r3.ScanErr.Error(), "concatenation") {
		t.Fatalf("scan with the module fixed: %v, %v; want the script run again", err, r3.ScanErr)
	}
	if n := s3.cache.Stats().Loads[Label(m3, OutScan)]; n != 1 {
		t.Fatalf("the script ran %d times after its module changed, want 1", n)
	}
}
