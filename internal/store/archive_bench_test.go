package store

import (
	"archive/zip"
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/internal/archive"
	"github.com/meshfs/meshfs/internal/source"
	"github.com/meshfs/meshfs/internal/store/record"
)

// listArchiveEntries is the size of BenchmarkListArchive50k's archive.
const listArchiveEntries = 50000

// bigListZip writes an archive of listArchiveEntries entries as a game's
// .pak holds them: paths of 5 folders, small files, stored and deflated in
// turn (500 vehicle folders of 3 LOD folders).
func bigListZip(b *testing.B, p string) {
	b.Helper()
	f, err := os.Create(p)
	if err != nil {
		b.Fatal(err)
	}
	bw := bufio.NewWriter(f)
	w := zip.NewWriter(bw)
	mod := time.Date(2020, 5, 17, 12, 0, 0, 0, time.UTC)
	for i := range listArchiveEntries {
		m := zip.Store
		if i%2 == 1 {
			m = zip.Deflate
		}
		fw, err := w.CreateHeader(&zip.FileHeader{Method: m, Modified: mod,
			Name: fmt.Sprintf("resource/entity/-vehicle/tank_%03d/lod%d/part_%05d.ply", i/100, i%3, i)})
		if err != nil {
			b.Fatal(err)
		}
		fmt.Fprintf(fw, "entry %d", i)
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	if err := bw.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkListArchive50k: listing a 50 000-entry archive as the mount
// does (a source view whose keeper is the store over the disk cache;
// the listing of the archive's top folder), cold (a version of the
// archive file never listed: its central directory read and its listing
// kept in the disk cache) and after a remount (the disk cache closed and
// opened again, a new view: the kept listing resumed, no central
// directory read); against `unzip -l` of the same file (when installed)
// and Go's archive/zip reading its central directory. Each iteration
// opens the disk cache (untimed) as a mount does before any listing; the
// archive file and the kept listing are in the page cache.
func BenchmarkListArchive50k(b *testing.B) {
	src, disk := b.TempDir(), b.TempDir()
	pak := filepath.Join(src, "entity.pak")
	bigListZip(b, pak)
	// The views here are their own, the disk tier their keeper as a
	// mount's store's is of its view.
	open := func(b *testing.B) (*tier, func()) {
		dc, err := OpenDiskCache(disk, 1<<30, record.CacheVersion("", outputs.DefaultLimits))
		if err != nil {
			b.Fatal(err)
		}
		return newTier(tierConfig{Disk: dc}), func() { dc.Close() }
	}
	list := func(b *testing.B, s *tier) *source.Packed {
		v := source.New(archive.Limits{MemInflate: 1 << 20})
		v.SetKeeper(s.Listings())
		ents, err := v.ReadDir(pak)
		if err != nil || len(ents) != 1 || ents[0].Name() != "resource" {
			b.Fatalf("the archive's top folder: %v, %v", ents, err)
		}
		return v
	}
	base, versions := time.Now(), 0
	b.Run("cold", func(b *testing.B) {
		s, closeStore := open(b)
		defer closeStore()
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			// A new version of the archive file: no listing kept for it.
			versions++
			if err := os.Chtimes(pak, base, base.Add(time.Duration(versions)*time.Second)); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			if v := list(b, s); v.Listed.Load() != 1 || v.Resumed.Load() != 0 {
				b.Fatalf("listed %d, resumed %d: not a cold listing", v.Listed.Load(), v.Resumed.Load())
			}
		}
	})
	b.Run("remount", func(b *testing.B) {
		s, closeStore := open(b)
		list(b, s) // the listing of the archive as it is now, kept
		closeStore()
		fi, _ := os.Stat(pak)
		for i := 0; i < b.N; i++ {
			b.StopTimer()
			s, closeStore := open(b)
			b.StartTimer()
			if v := list(b, s); v.Listed.Load() != 0 || v.Resumed.Load() != 1 {
				b.Fatalf("listed %d, resumed %d: the kept listing did not serve", v.Listed.Load(), v.Resumed.Load())
			}
			b.StopTimer()
			if i == 0 {
				if kept, ok := s.Listings().ArchiveListing(pak, source.Of(fi)); ok {
					b.ReportMetric(float64(len(kept))/listArchiveEntries, "kept-B/entry")
				}
			}
			closeStore()
			b.StartTimer()
		}
	})
	b.Run("unzip-l", func(b *testing.B) {
		if _, err := exec.LookPath("unzip"); err != nil {
			b.Skip("unzip is not installed")
		}
		for b.Loop() {
			if err := exec.Command("unzip", "-l", pak).Run(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("archive-zip", func(b *testing.B) {
		for b.Loop() {
			r, err := zip.OpenReader(pak)
			if err != nil || len(r.File) != listArchiveEntries {
				b.Fatalf("archive/zip: %v", err)
			}
			r.Close()
		}
	})
}
