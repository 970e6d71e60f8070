package archive

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"encoding/binary"
	"hash/crc32"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/meshfs/meshfs/decode/decodetest"
)

// treeFiles reads every regular file under root, by slash path.
func treeFiles(t testing.TB, root string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		files[filepath.ToSlash(rel)] = b
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// inova is ../shared/assets/tf-inova's files; the test is skipped without
// them (failed under CI, decodetest.NeedShared).
func inova(t testing.TB) (string, map[string][]byte) {
	root := decodetest.NeedShared(t, "assets/tf-inova")
	return root, treeFiles(t, root)
}

// testTime is every entry's time in archives tests write.
var testTime = time.Date(2024, 5, 6, 7, 8, 10, 0, time.UTC)

// zipFiles writes files with Go's zip writer in lexical order, the i-th
// stored when i is even and deflated when odd, and pad empty entries after
// them (65 535 or more make Go write ZIP64 end records).
func zipFiles(t testing.TB, files map[string][]byte, pad int) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for i, name := range sortedKeys(files) {
		m := zip.Store
		if i%2 == 1 {
			m = zip.Deflate
		}
		f, err := w.CreateHeader(&zip.FileHeader{Name: name, Method: m, Modified: testTime})
		if err != nil {
			t.Fatal(err)
		}
		f.Write(files[name])
	}
	for i := range pad {
		if _, err := w.CreateHeader(&zip.FileHeader{Name: "pad/" + strconv.Itoa(i), Method: zip.Store, Modified: testTime}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func sortedKeys(m map[string][]byte) []string { return slices.Sorted(maps.Keys(m)) }

// deflate compresses b.
func deflate(t testing.TB, b []byte) []byte {
	var buf bytes.Buffer
	w, _ := flate.NewWriter(&buf, flate.BestCompression)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

// rawEntry is an entry of an archive rawZip writes exactly as told.
type rawEntry struct {
	name   string
	data   []byte // as stored (compressed already when method is 8)
	method uint16
	flags  uint16
	crc    uint32
	usize  int64 // declared; -1: len(data) for stored, set by the caller for deflated
	extra  []byte
	madeBy uint16
	ext    uint32
	// offset, when ≥ 0, is the local header offset the central record
	// claims (the entry's own header is still written).
	offset int64
	// noLocal: only the central record is written.
	noLocal bool
}

// rawZip writes entries' local headers and data, then the central
// directory and end record, with no check at all.
func rawZip(entries []rawEntry) []byte {
	var b []byte
	offs := make([]int64, len(entries))
	for i, e := range entries {
		offs[i] = int64(len(b))
		if e.noLocal {
			continue
		}
		b = binary.LittleEndian.AppendUint32(b, sigLocal)
		b = binary.LittleEndian.AppendUint16(b, 20)
		b = binary.LittleEndian.AppendUint16(b, e.flags)
		b = binary.LittleEndian.AppendUint16(b, e.method)
		b = binary.LittleEndian.AppendUint32(b, 0)
		b = binary.LittleEndian.AppendUint32(b, e.crc)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(e.data)))
		b = binary.LittleEndian.AppendUint32(b, uint32(e.usize))
		b = binary.LittleEndian.AppendUint16(b, uint16(len(e.name)))
		b = binary.LittleEndian.AppendUint16(b, 0)
		b = append(b, e.name...)
		b = append(b, e.data...)
	}
	cd := len(b)
	for i, e := range entries {
		off := offs[i]
		if e.offset >= 0 {
			off = e.offset
		}
		b = binary.LittleEndian.AppendUint32(b, sigCentral)
		b = binary.LittleEndian.AppendUint16(b, e.madeBy)
		b = binary.LittleEndian.AppendUint16(b, 20)
		b = binary.LittleEndian.AppendUint16(b, e.flags)
		b = binary.LittleEndian.AppendUint16(b, e.method)
		b = binary.LittleEndian.AppendUint32(b, 0)
		b = binary.LittleEndian.AppendUint32(b, e.crc)
		b = binary.LittleEndian.AppendUint32(b, uint32(len(e.data)))
		b = binary.LittleEndian.AppendUint32(b, uint32(e.usize))
		b = binary.LittleEndian.AppendUint16(b, uint16(len(e.name)))
		b = binary.LittleEndian.AppendUint16(b, uint16(len(e.extra)))
		b = binary.LittleEndian.AppendUint16(b, 0)
		b = binary.LittleEndian.AppendUint16(b, 0)
		b = binary.LittleEndian.AppendUint16(b, 0)
		b = binary.LittleEndian.AppendUint32(b, e.ext)
		b = binary.LittleEndian.AppendUint32(b, uint32(off))
		b = append(b, e.name...)
		b = append(b, e.extra...)
	}
	n, cdSize := uint16(len(entries)), len(b)-cd
	b = binary.LittleEndian.AppendUint32(b, sigEnd)
	b = binary.LittleEndian.AppendUint32(b, 0)
	b = binary.LittleEndian.AppendUint16(b, n)
	b = binary.LittleEndian.AppendUint16(b, n)
	b = binary.LittleEndian.AppendUint32(b, uint32(cdSize))
	b = binary.LittleEndian.AppendUint32(b, uint32(cd))
	b = binary.LittleEndian.AppendUint16(b, 0)
	return b
}

// stored is a sound stored rawEntry of data.
func storedEntry(name string, data []byte) rawEntry {
	return rawEntry{name: name, data: data, crc: crc32.ChecksumIEEE(data), usize: int64(len(data)), offset: -1, flags: flagUTF8}
}

// deflatedEntry is a sound deflated rawEntry of data.
func deflatedEntry(t testing.TB, name string, data []byte) rawEntry {
	return rawEntry{name: name, data: deflate(t, data), method: Deflate, crc: crc32.ChecksumIEEE(data), usize: int64(len(data)), offset: -1, flags: flagUTF8}
}

// lowReader records the lowest offset read.
type lowReader struct {
	r   io.ReaderAt
	low int64
}

func (l *lowReader) ReadAt(p []byte, off int64) (int, error) {
	l.low = min(l.low, off)
	return l.r.ReadAt(p, off)
}
