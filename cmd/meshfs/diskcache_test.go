package main

import (
	"bytes"
	"log"
	"path/filepath"
	"strings"
	"testing"

	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/internal/store/record"
)

func TestOpenDiskCache(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cache")
	var logs bytes.Buffer
	lg := log.New(&logs, "", 0)
	o := &mountOpts{cacheDir: dir, diskCacheSize: 1 << 20, limits: outputs.DefaultLimits}

	dc := openDiskCache(o, dir, "test", lg)
	if dc == nil {
		t.Fatalf("no disk cache: %s", logs.String())
	}
	defer dc.Close()

	// A second daemon on the same folder runs without one, and says so.
	if second := openDiskCache(o, dir, "test", lg); second != nil {
		second.Close()
		t.Fatal("two daemons share one cache folder")
	}
	if !strings.Contains(logs.String(), "running without a disk cache") || !strings.Contains(logs.String(), "in use") {
		t.Errorf("log: %q", logs.String())
	}

	o2 := *o
	o2.noDiskCache = true
	if openDiskCache(&o2, dir, "test", lg) != nil {
		t.Error("--no-disk-cache opened one")
	}
	// The version string changes with the options that shape outputs.
	l := outputs.DefaultLimits
	l.MaxOutputSize++
	if record.CacheVersion("b", l) == record.CacheVersion("b", outputs.DefaultLimits) {
		t.Error("limits are not part of the disk cache version")
	}
	// And with the build.
	if record.CacheVersion("b", l) == record.CacheVersion("c", l) {
		t.Error("the build is not part of the disk cache version")
	}
}

func TestDiskCacheFlags(t *testing.T) {
	t.Setenv("XDG_CACHE_HOME", "/x/cache")
	if got := defaultCacheDir(); got != "/x/cache/meshfs" {
		t.Errorf("default cache dir %q", got)
	}
	t.Setenv("XDG_CACHE_HOME", "")
	t.Setenv("HOME", "/home/u")
	if got := defaultCacheDir(); got != "/home/u/.cache/meshfs" {
		t.Errorf("default cache dir without XDG_CACHE_HOME %q", got)
	}
	cmd := newMountCmd()
	if f := cmd.Flags().Lookup("disk-cache-size"); f == nil || f.DefValue != "2GiB" {
		t.Errorf("--disk-cache-size default %v", f)
	}
	for _, name := range []string{"cache-dir", "no-disk-cache", "prewarm"} {
		if cmd.Flags().Lookup(name) == nil {
			t.Errorf("no --%s", name)
		}
	}
}
