package decodetest

import (
	"archive/zip"
	"bytes"
	"image"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/woozymasta/bcn"
)

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
