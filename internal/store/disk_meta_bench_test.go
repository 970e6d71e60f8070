package store

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// BenchmarkOpenIndex opens a cache folder holding what a remount of a
// 10 000-mesh tree finds: per mesh a scan record (an 81-byte blob and a
// 2.6 KB header.json, the sizes of a small GEM mesh's) and its two
// converted outputs. It reports the time to load the index (Open, which
// also rewrites it compactly) and the heap the loaded index keeps.
func BenchmarkOpenIndex(b *testing.B) {
	b.Run("scans", func(b *testing.B) { benchOpenIndex(b, false) })
	b.Run("scans+outputs", func(b *testing.B) { benchOpenIndex(b, true) })
}

func benchOpenIndex(b *testing.B, outputs bool) {
	const meshes = 10000
	entries := meshes
	if outputs {
		entries *= 3
	}
	dir := b.TempDir()
	c, err := OpenDiskCache(dir, 1<<40, "v1")
	if err != nil {
		b.Fatal(err)
	}
	blob := bytes.Repeat([]byte{7}, 81)
	hdr := bytes.Repeat([]byte{'h'}, 2586)
	for i := range meshes {
		k := diskKey{Path: fmt.Sprintf("/src/d%03d/m%05d.ply", i/100, i), Version: ver(1, uint64(i), 5000, 1, 0)}
		k.Output = "scan"
		if err := c.putMeta(k, [][]byte{hdr}, blob); err != nil {
			b.Fatal(err)
		}
		if !outputs {
			continue
		}
		k.Output = "glb"
		if err := c.putParts(k, [][]byte{{1}}); err != nil {
			b.Fatal(err)
		}
		k.Output = "obj"
		if err := c.putParts(k, [][]byte{{1}, {2}}); err != nil {
			b.Fatal(err)
		}
	}
	c.Close()
	fi, _ := os.Stat(filepath.Join(dir, "index"))

	var heap float64
	b.ResetTimer()
	for b.Loop() {
		var before, after runtime.MemStats
		b.StopTimer()
		runtime.GC()
		runtime.ReadMemStats(&before)
		b.StartTimer()
		c, err := OpenDiskCache(dir, 1<<40, "v1")
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		runtime.GC()
		runtime.ReadMemStats(&after)
		heap = float64(after.HeapAlloc) - float64(before.HeapAlloc)
		if s := c.stats(); s.Entries != entries {
			b.Fatalf("%d entries", s.Entries)
		}
		c.Close()
		b.StartTimer()
	}
	b.ReportMetric(heap/meshes, "heap-B/mesh")
	b.ReportMetric(float64(fi.Size())/meshes, "index-B/mesh")
}

// BenchmarkCloseRewrite is the cost of Close after a remount that only
// looked records up (their recency changed): the index is rewritten,
// copying every inline header, for 10 000 scan records.
func BenchmarkCloseRewrite(b *testing.B) {
	const meshes = 10000
	dir := b.TempDir()
	c, err := OpenDiskCache(dir, 1<<40, "v1")
	if err != nil {
		b.Fatal(err)
	}
	blob := bytes.Repeat([]byte{7}, 81)
	hdr := bytes.Repeat([]byte{'h'}, 2586)
	key := func(i int) diskKey {
		return diskKey{Path: fmt.Sprintf("/src/d%03d/m%05d.ply", i/100, i), Version: ver(1, uint64(i), 5000, 1, 0), Output: "scan"}
	}
	for i := range meshes {
		if err := c.putMeta(key(i), [][]byte{hdr}, blob); err != nil {
			b.Fatal(err)
		}
	}
	c.Close()
	for n := 0; b.Loop(); n++ {
		b.StopTimer()
		c, err := OpenDiskCache(dir, 1<<40, "v1")
		if err != nil {
			b.Fatal(err)
		}
		c.meta(key(n % meshes)) // never the most recent already
		b.StartTimer()
		c.Close()
	}
}

// BenchmarkPutMetaSmall stores scan records (small inline entries: a
// header and a blob), as a cold walk does once per mesh.
func BenchmarkPutMetaSmall(b *testing.B) {
	c, err := OpenDiskCache(b.TempDir(), 1<<30, "v1")
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	hdr, blob := make([]byte, 600), make([]byte, 300)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		k := diskKey{Path: "/src/m.gem", Version: ver(0, uint64(i%1000), 0, 0, 0), Output: "scan"}
		if err := c.putMeta(k, [][]byte{hdr}, blob); err != nil {
			b.Fatal(err)
		}
	}
}
