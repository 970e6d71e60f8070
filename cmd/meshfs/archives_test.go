package main

import (
	"archive/zip"
	"bytes"
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/meshfs/meshfs/decode/decodetest"
)

// filesUnder reads every regular file under root, by slash path.
func filesUnder(t *testing.T, root string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(root, p)
		files[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// writeZip writes files with Go's zip writer, stored and deflated in turn,
// then pad empty entries (65 535 or more: ZIP64 end records).
func writeZip(t *testing.T, p string, files map[string][]byte, pad int) {
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	i := 0
	for name, b := range files {
		m := zip.Store
		if i++; i%2 == 0 {
			m = zip.Deflate
		}
		f, err := w.CreateHeader(&zip.FileHeader{Name: name, Method: m})
		if err != nil {
			t.Fatal(err)
		}
		f.Write(b)
	}
	for i := range pad {
		w.Create("pad/" + strconv.Itoa(i))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// sameTree asserts that the folders got and want hold the same files with
// the same bytes, and returns how many.
func sameTree(t *testing.T, got, want string) int {
	t.Helper()
	g, w := filesUnder(t, got), filesUnder(t, want)
	for p, b := range w {
		if gb, ok := g[p]; !ok || !bytes.Equal(gb, b) {
			t.Errorf("%s: %d bytes under %s, %d (present %v) under %s", p, len(b), want, len(gb), ok, got)
		}
	}
	for p := range g {
		if _, ok := w[p]; !ok {
			t.Errorf("%s: under %s only", p, got)
		}
	}
	return len(w)
}

// TestConvertArchive: `meshfs convert` of ZIPs that Go's writer made of
// the small trees of ../shared/assets (stored and deflated entries;
// tf-roadsign's once more with ZIP64 end records), given as ARCHIVE (or a
// link to one) or found under a DIR, writes the same files, byte for
// byte, as `meshfs convert` of the loose trees: models assembled from the
// parts, materials, textures and animations inside their archive. (fs's
// TestArchivesMountLikeLoose compares every tree, through the mount.)
func TestConvertArchive(t *testing.T) {
	assets := decodetest.NeedShared(t, "assets")
	trees, err := os.ReadDir(assets)
	if err != nil {
		t.Fatal(err)
	}
	in := filepath.Join(t.TempDir(), "packed")
	os.Mkdir(in, 0o755)
	var loose []string
	small := map[string]bool{"gem-pilot": true, "tf-roadsign": true, "tf-nan": true, "unigine": true}
	var names, zips []string
	for _, tr := range trees {
		if !tr.IsDir() || !small[tr.Name()] {
			continue
		}
		loose = append(loose, filepath.Join(assets, tr.Name()))
		names = append(names, tr.Name())
		zips = append(zips, filepath.Join(in, tr.Name()+".zip"))
		writeZip(t, zips[len(zips)-1], filesUnder(t, filepath.Join(assets, tr.Name())), 0)
	}
	writeZip(t, filepath.Join(in, "sign64.pak"), filesUnder(t, filepath.Join(assets, "tf-roadsign")), 65600)
	link := filepath.Join(t.TempDir(), "link.zip")
	if err := os.Symlink(filepath.Join(in, "tf-roadsign.zip"), link); err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	for _, args := range [][]string{
		append([]string{"-o", filepath.Join(out, "loose")}, loose...),
		{"-o", filepath.Join(out, "archive"), filepath.Join(in, "sign64.pak"), link},
		{"-o", filepath.Join(out, "dir"), in},
	} {
		// No conversion may hit its timeout, which a race-built binary's
		// inova models came near to: both sides must convert alike.
		if b, err := exec.Command(meshfsBin, append([]string{"convert", "--timeout", "10m"}, args...)...).CombinedOutput(); err != nil && !strings.Contains(string(b), "did not convert") {
			t.Fatalf("convert %q: %v\n%s", args, err, b)
		}
	}
	n := 0
	for _, name := range names {
		n += sameTree(t, filepath.Join(out, "dir", "packed", name+".zip"), filepath.Join(out, "loose", name))
	}
	for _, got := range []string{"archive/sign64.pak", "archive/link.zip"} {
		n += sameTree(t, filepath.Join(out, got), filepath.Join(out, "loose", "tf-roadsign"))
	}
	if models := len(filesUnder(t, filepath.Join(out, "loose"))); n < models || models < 100 {
		t.Errorf("%d files compared, %d converted loose", n, models)
	}
}

// TestInfoInArchive: `meshfs info ARCHIVE/ENTRY` prints the header.json
// the entry's folder holds, as for the loose file.
func TestInfoInArchive(t *testing.T) {
	loose := decodetest.NeedShared(t, "assets/tf-inova")
	p := filepath.Join(t.TempDir(), "inova.zip")
	writeZip(t, p, filesUnder(t, loose), 0)
	rel := "res/models/model/vehicle/waggon/ws_inovab_wc.mdl"
	want, err := exec.Command(meshfsBin, "info", filepath.Join(loose, rel)).Output()
	if err != nil {
		t.Fatal(err)
	}
	got, err := exec.Command(meshfsBin, "info", p+"/"+rel).CombinedOutput()
	if err != nil || !bytes.Equal(got, want) || len(want) < 1000 {
		t.Errorf("info inside the archive: %v, %d bytes, want the loose file's %d:\n%s", err, len(got), len(want), got)
	}
}

// TestConvertBrokenArchive: an archive cut inside its central directory
// is named with the error and the exit status is 1, and every mesh in it
// (recovered from the local headers) is still converted; `meshfs check`
// of it says the same.
func TestConvertBrokenArchive(t *testing.T) {
	loose := decodetest.NeedShared(t, "assets/tf-inova")
	in := t.TempDir()
	p := filepath.Join(in, "cut.zip")
	writeZip(t, p, filesUnder(t, loose), 0)
	b, _ := os.ReadFile(p)
	os.WriteFile(p, b[:len(b)-100], 0o644)
	out := t.TempDir()
	msg, err := exec.Command(meshfsBin, "convert", "-o", out, p).CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(msg), p+": ") {
		t.Errorf("exit %v, want status 1 naming %s:\n%s", err, p, msg)
	}
	headers := 0
	for rel := range filesUnder(t, out) {
		if strings.HasSuffix(rel, "/header.json") {
			headers++
		}
	}
	if headers != 19 {
		t.Errorf("%d folders written, want tf-inova's 18 meshes and its model:\n%s", headers, msg)
	}
	msg, err = exec.Command(meshfsBin, "check", p).CombinedOutput()
	if !errors.As(err, &exit) || exit.ExitCode() != 1 || !strings.Contains(string(msg), "recovered from local headers") {
		t.Errorf("check: exit %v, want status 1 and the archive's error:\n%s", err, msg)
	}
}

// TestConvertNested: `meshfs convert --nested` of a ZIP holding a ZIP of
// gem-pilot (../shared/assets) writes the inner archive's folders, byte
// for byte, as `meshfs convert` of the loose tree; without --nested the
// inner archive is a file and nothing is written for it.
func TestConvertNested(t *testing.T) {
	assets := decodetest.NeedShared(t, "assets")
	loose := filepath.Join(assets, "gem-pilot")
	in := t.TempDir()
	inner := filepath.Join(t.TempDir(), "pilot.zip")
	writeZip(t, inner, filesUnder(t, loose), 0)
	b, err := os.ReadFile(inner)
	if err != nil {
		t.Fatal(err)
	}
	outer := filepath.Join(in, "outer.zip")
	writeZip(t, outer, map[string][]byte{"mods/pilot.zip": b}, 0)
	out := t.TempDir()
	for _, args := range [][]string{
		{"-o", filepath.Join(out, "loose"), loose},
		{"-o", filepath.Join(out, "plain"), outer},
		{"--nested", "-o", filepath.Join(out, "nested"), outer},
	} {
		// No conversion may hit its timeout, which a race-built binary's
		// inova models came near to: both sides must convert alike.
		if b, err := exec.Command(meshfsBin, append([]string{"convert", "--timeout", "10m"}, args...)...).CombinedOutput(); err != nil && !strings.Contains(string(b), "did not convert") {
			t.Fatalf("convert %q: %v\n%s", args, err, b)
		}
	}
	if n := sameTree(t, filepath.Join(out, "nested", "outer.zip", "mods", "pilot.zip"), filepath.Join(out, "loose", "gem-pilot")); n == 0 {
		t.Error("nothing converted loose")
	}
	if _, err := os.Stat(filepath.Join(out, "plain", "outer.zip", "mods", "pilot.zip")); err == nil {
		t.Error("without --nested, the inner archive was descended")
	}
}
