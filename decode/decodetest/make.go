package decodetest

import (
	"archive/zip"
	"bufio"
	"bytes"
	"fmt"
	"image"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/woozymasta/bcn"
)

// ManyEntriesZip writes to p a ZIP of n empty stored entries, 1000 to a
// folder (d000/f000000.dds, ...): an archive whose listing is big.
func ManyEntriesZip(t testing.TB, p string, n int) {
	t.Helper()
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	bw := bufio.NewWriter(f)
	w := zip.NewWriter(bw)
	for i := range n {
		if _, err := w.CreateRaw(&zip.FileHeader{Name: fmt.Sprintf("d%03d/f%06d.dds", i/1000, i), Method: zip.Store}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil || bw.Flush() != nil || f.Close() != nil {
		t.Fatal("cannot write", p, err)
	}
}

// ZipTree writes the files under dir into the ZIP at dest with Go's
// writer, by slash path, stored and deflated in turn, then pad empty
// entries under pad/ (65 535 or more: ZIP64 end records).
func ZipTree(t testing.TB, dir, dest string, pad int) {
	t.Helper()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	i := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		m := zip.Store
		if i++; i%2 == 0 {
			m = zip.Deflate
		}
		f, err := w.CreateHeader(&zip.FileHeader{Name: filepath.ToSlash(rel), Method: m})
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		f.Write(b)
		return err
	})
	for i := range pad {
		w.Create("pad/" + strconv.Itoa(i))
	}
	if err == nil {
		err = w.Close()
	}
	if err == nil {
		err = os.WriteFile(dest, buf.Bytes(), 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// DDS encodes img as a DDS file of format f with bcn's encoder, with its
// mip chain when mips is set.
func DDS(t testing.TB, img image.Image, f bcn.Format, mips bool) []byte {
	t.Helper()
	d, err := bcn.EncodeDDSWithOptions([]image.Image{img}, f, &bcn.EncodeOptions{QualityLevel: 1, GenerateMipmaps: mips})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := d.Write(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
