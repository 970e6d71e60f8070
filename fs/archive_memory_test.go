package fs

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/meshfs/meshfs/internal/store"

	"github.com/meshfs/meshfs/decode/decodetest"
)

// writeZeroEntry writes to p a ZIP (ZIP64) of one deflated entry,
// zeros.bin, of mib MiB of zeros: about 1 KB of deflate data per MiB.
func writeZeroEntry(t *testing.T, p string, mib int) {
	t.Helper()
	var unit bytes.Buffer
	fw, _ := flate.NewWriter(&unit, flate.BestCompression)
	zero := make([]byte, 1<<20)
	fw.Write(zero)
	fw.Flush()
	data := append(bytes.Repeat(unit.Bytes(), mib), 0x03, 0x00) // a final empty fixed block
	crc := crc32.NewIEEE()
	for range mib {
		crc.Write(zero)
	}
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	ew, err := w.CreateRaw(&zip.FileHeader{Name: "zeros.bin", Method: zip.Deflate, CRC32: crc.Sum32(),
		CompressedSize64: uint64(len(data)), UncompressedSize64: uint64(mib) << 20, Modified: time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	ew.Write(data)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	write(t, p, buf.Bytes())
}

// TestArchiveMemoryBudget: mounted with a 64 MiB --cache-size, a 4 KiB
// read at the end of a 16 GiB ZIP64 entry and the listings of 64 archives
// of 200 000 entries each leave the daemon's live heap within the cache
// size and 100 MiB: the archives' listings and the entry's checkpoints are
// charged to its archive budget (store.ArchiveBudget), not kept one per
// MiB and one per archive.
func TestArchiveMemoryBudget(t *testing.T) {
	if raceOn {
		t.Skip("inflates 16 GiB: hours under the race detector")
	}
	src := t.TempDir()
	writeZeroEntry(t, filepath.Join(src, "big.zip"), 16<<10)
	first := filepath.Join(src, "paks", "p00.pak")
	os.MkdirAll(filepath.Dir(first), 0o755)
	decodetest.ManyEntriesZip(t, first, 200000)
	for i := 1; i < 64; i++ {
		if err := os.Link(first, filepath.Join(src, "paks", fmt.Sprintf("p%02d.pak", i))); err != nil {
			t.Fatal(err)
		}
	}
	const cacheSize = 64 << 20
	before := decodetest.LiveHeap()
	fsys, mnt := mountT(t, src, Config{Store: store.Config{CacheSize: cacheSize}})

	f, err := os.Open(filepath.Join(mnt, "big.zip", "zeros.bin"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	fi, _ := f.Stat()
	p := make([]byte, 4096)
	start := time.Now()
	if n, err := f.ReadAt(p, fi.Size()-4096); n != len(p) || err != nil || !bytes.Equal(p, make([]byte, 4096)) || fi.Size() != 16<<30 {
		t.Fatalf("the last 4 KiB of a %d-byte entry: %d, %v", fi.Size(), n, err)
	}
	took := time.Since(start)
	afterRead := decodetest.LiveHeap() - before
	for i := range 64 {
		ents, err := os.ReadDir(filepath.Join(mnt, "paks", fmt.Sprintf("p%02d.pak", i)))
		if err != nil || len(ents) != 200 {
			t.Fatalf("p%02d.pak: %v, %d folders", i, err, len(ents))
		}
	}
	held := decodetest.LiveHeap() - before
	b := fsys.view.Budget()
	t.Logf("4 KiB at the end of 16 GiB in %v, heap +%.1f MiB; then 64 listings: heap +%.1f MiB; archive budget %.0f MiB, %.1f MiB charged",
		took, float64(afterRead)/(1<<20), float64(held)/(1<<20), float64(b.Limit())/(1<<20), float64(b.Used())/(1<<20))
	if afterRead > cacheSize+100<<20 || held > cacheSize+100<<20 {
		t.Errorf("the daemon holds +%d bytes after the read, +%d after the listings: more than its cache size and 100 MiB", afterRead, held)
	}
}
