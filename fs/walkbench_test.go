package fs

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/internal/meshgen"
	"github.com/meshfs/meshfs/internal/store"
	"github.com/meshfs/meshfs/internal/store/record"
)

// BenchmarkRemountListing is the remount `ls -lR` of the walk benchmarks
// (cmd/meshfs-bench, the tree section) in small: 200 GEM meshes whose outputs an earlier
// mount converted into the disk cache; each op mounts, runs ls -lR and
// unmounts, and reports the time per mesh.
func BenchmarkRemountListing(b *testing.B) {
	const meshes = 200
	src := b.TempDir()
	for i := range meshes {
		data, err := meshgen.GEM(60+i%50, float32(i))
		if err != nil {
			b.Fatal(err)
		}
		p := filepath.Join(src, fmt.Sprintf("d%02d", i/100), fmt.Sprintf("m%05d.ply", i))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	dir := b.TempDir()
	mount := func(prewarm bool) (*FS, func()) {
		dc, err := store.OpenDiskCache(dir, 1<<30, record.CacheVersion("", outputs.DefaultLimits))
		if err != nil {
			b.Fatal(err)
		}
		f, err := New(Config{Source: src, Store: store.Config{DiskCache: dc}})
		if err != nil {
			b.Fatal(err)
		}
		mnt := b.TempDir()
		srv, err := f.Mount(mnt, fuse.MountOptions{DirectMount: os.Geteuid() == 0})
		if err != nil {
			f.Close()
			dc.Close()
			cannotMount(b, err)
		}
		if prewarm {
			f.Prewarm()
			waitPrewarmed(b, f)
		} else {
			out, err := exec.Command("ls", "-lR", mnt).CombinedOutput()
			if err != nil {
				b.Fatalf("ls -lR: %v\n%s", err, out)
			}
		}
		return f, func() {
			if err := Unmount(srv, mnt); err != nil {
				b.Errorf("unmount: %v", err)
			}
			f.Close()
			dc.Close()
		}
	}
	_, stop := mount(true)
	stop()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		f, stop := mount(false)
		if c := conversions(f.Stats()); c != 0 {
			b.Fatalf("remount ls -lR converted %d outputs", c)
		}
		stop()
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*meshes), "µs/mesh")
}
