package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/meshfs/meshfs/decode/decodetest"
	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/internal/store"
	"github.com/meshfs/meshfs/vfs"
	"github.com/meshfs/meshfs/vfs/vfstest"
)

// runBin runs the meshfs binary under a deadline and returns its combined
// output and exit status.
func runBin(t *testing.T, dir string, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, meshfsBin, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if ctx.Err() != nil {
		t.Fatalf("meshfs %v did not finish: %s", args, out)
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return string(out), exit.ExitCode()
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(out), 0
}

// copyTree copies the regular files under from to to.
func copyTree(t *testing.T, from, to string) { decodetest.CopyTree(t, from, to) }

func writeFile(p string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	return os.WriteFile(p, b, 0o644)
}

// hostileTree writes broken variants of every fixture under dir (each in a
// folder of its own with the fixture's companion), and the hostile
// corpus's regression fixtures.
func hostileTree(t *testing.T, dir string) {
	t.Helper()
	root := decodetest.RepoRoot()
	var mains []string
	for _, g := range []string{"testdata/gem/*.ply", "testdata/unigine/*.mesh*", "testdata/tfever/*.msh", "testdata/tfever/*.ani"} {
		m, _ := filepath.Glob(filepath.Join(root, g))
		mains = append(mains, m...)
	}
	if len(mains) < 10 {
		t.Fatalf("only %d fixtures found", len(mains))
	}
	rng := rand.New(rand.NewPCG(19, 19))
	n := 0
	for _, main := range mains {
		b, err := os.ReadFile(main)
		if err != nil {
			t.Fatal(err)
		}
		blob, _ := os.ReadFile(main + ".blob")
		var vs [][]byte
		for k := range 4 {
			vs = append(vs, b[:len(b)*k/4])
		}
		for range 3 {
			c := bytes.Clone(b)
			c[rng.IntN(len(c))] ^= byte(1 + rng.IntN(255))
			vs = append(vs, c)
		}
		vs = append(vs, b) // one intact copy
		for _, v := range vs {
			d := filepath.Join(dir, fmt.Sprintf("v%03d", n))
			n++
			if err := writeFile(filepath.Join(d, filepath.Base(main)), v); err != nil {
				t.Fatal(err)
			}
			if blob != nil {
				if err := writeFile(filepath.Join(d, filepath.Base(main)+".blob"), blob); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	copyTree(t, filepath.Join(root, "export/outputs/hostile/testdata/regress"), filepath.Join(dir, "regress"))
	// A plain file is no mesh, and no failure.
	if err := writeFile(filepath.Join(dir, "readme.txt"), []byte("not a mesh\n")); err != nil {
		t.Fatal(err)
	}
}

// TestCheckCommand: `meshfs check` over testdata/ and a tree of hostile
// variants reports exactly the meshes whose folders in the tree (vfs, as
// the mount and convert show it) show error.txt once read, one line each,
// and a summary;
// exit status 1. Over testdata/ alone it reports none, exit status 0.
func TestCheckCommand(t *testing.T) {
	root := decodetest.RepoRoot()
	testdata := filepath.Join(root, "testdata")
	if out, code := runBin(t, root, "check", "-j", "2", testdata); code != 0 || !strings.Contains(out, "0 failed") {
		t.Fatalf("check testdata: status %d\n%s", code, out)
	}

	hostile := t.TempDir()
	hostileTree(t, hostile)
	lim := outputs.DefaultLimits
	lim.Timeout = 10 * time.Second
	var want []string
	meshes := 0
	for _, dir := range []string{testdata, hostile} {
		all, failed := treeMeshes(t, dir, lim)
		meshes += len(all)
		want = append(want, failed...)
	}
	if len(want) < 20 || len(want) > meshes-20 {
		t.Fatalf("%d of %d meshes fail: not a test of telling them apart", len(want), meshes)
	}

	out, code := runBin(t, root, "check", "-j", "2", "--timeout", "10s", testdata, hostile)
	if code != 1 {
		t.Fatalf("check: status %d, want 1\n%s", code, out)
	}
	var got []string
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if p, _, ok := strings.Cut(line, ": "); ok && strings.HasPrefix(p, "/") {
			got = append(got, p)
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("check reported %d meshes, outputs fails %d:\nreported %q\nwant %q\n%s", len(got), len(want), got, want, out)
	}
	summary := fmt.Sprintf("checked %d meshes: %d failed", meshes, len(want))
	if !strings.Contains(out, summary) {
		t.Fatalf("no %q in:\n%s", summary, out)
	}
}

// TestConvertDir: `convert -o OUT DIR` mirrors DIR's meshes under
// OUT/<DIR name>/ as the mount shows them (each mesh a folder, companions
// inside their mesh's, plain files not copied); a relative DIR gives the
// same bytes as its absolute path; a .msh given with its .msh.blob is one
// file; a missing file is named in full; a usage error prints the usage
// line.
func TestConvertDir(t *testing.T) {
	root := decodetest.RepoRoot()
	src := filepath.Join(t.TempDir(), "assets")
	copyTree(t, filepath.Join(root, "testdata", "gem"), filepath.Join(src, "gem"))
	copyTree(t, filepath.Join(root, "testdata", "tfever"), filepath.Join(src, "deep", "tfever"))
	if err := writeFile(filepath.Join(src, "readme.txt"), []byte("plain\n")); err != nil {
		t.Fatal(err)
	}
	meshes, _ := treeMeshes(t, src, outputs.DefaultLimits)
	out := t.TempDir()
	msg, code := runBin(t, root, "convert", "-o", out, src)
	if code != 0 || !strings.Contains(msg, fmt.Sprintf("converted %d of %d files (0 failed)", len(meshes), len(meshes))) {
		t.Fatalf("convert DIR: status %d\n%s", code, msg)
	}
	for _, rel := range meshes {
		list, err := os.ReadDir(filepath.Join(out, "assets", rel))
		if err != nil || len(list) < 3 {
			t.Errorf("%s: %d files written (%v)", rel, len(list), err)
		}
		for _, e := range list {
			if fi, err := e.Info(); err != nil || !e.IsDir() && fi.Size() == 0 || e.Name() == outputs.ErrorName {
				t.Errorf("%s/%s: %v", rel, e.Name(), err)
			}
		}
	}
	for _, absent := range []string{"readme.txt", "deep/tfever/tf2_cube.msh.blob"} {
		if _, err := os.Stat(filepath.Join(out, "assets", absent)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s written: %v", absent, err)
		}
	}

	// A link to the folder is followed.
	link := filepath.Join(t.TempDir(), "linked")
	if err := os.Symlink(src, link); err != nil {
		t.Fatal(err)
	}
	out2 := t.TempDir()
	if msg, code := runBin(t, root, "convert", "-o", out2, link); code != 0 || !strings.Contains(msg, fmt.Sprintf("converted %d of %d", len(meshes), len(meshes))) {
		t.Fatalf("convert LINK: status %d\n%s", code, msg)
	}
	if _, err := os.Stat(filepath.Join(out2, "linked", meshes[0], outputs.HeaderName)); err != nil {
		t.Fatal(err)
	}

	// A DIR by a relative path: the same folders, byte for byte, as by its
	// absolute path (a model's parts and textures are found in the asset
	// roots above it the same way).
	tfAbs := filepath.Join(root, "testdata", "tfever")
	outAbs, outRel := t.TempDir(), t.TempDir()
	if msg, code := runBin(t, root, "convert", "-o", outAbs, tfAbs); code != 0 {
		t.Fatalf("convert ABS: status %d\n%s", code, msg)
	}
	if msg, code := runBin(t, filepath.Join(root, "testdata"), "convert", "-o", outRel, "tfever"); code != 0 {
		t.Fatalf("convert REL: status %d\n%s", code, msg)
	}
	sameFolder(t, "tfever", filepath.Join(outAbs, "tfever"), filepath.Join(outRel, "tfever"))
	// And from a working folder reached through a link ($PWD names the
	// link): a file by its relative path converts as by its real one.
	wd := filepath.Join(t.TempDir(), "wd")
	if err := os.Symlink(filepath.Join(root, "testdata"), wd); err != nil {
		t.Fatal(err)
	}
	outLinked := t.TempDir()
	if msg, code := runBin(t, wd, "convert", "-o", outLinked, "tfever/tf2_cube.msh"); code != 0 {
		t.Fatalf("convert REL from a linked folder: status %d\n%s", code, msg)
	}
	sameFolder(t, "tf2_cube.msh", filepath.Join(outAbs, "tfever", "tf2_cube.msh"), filepath.Join(outLinked, "tf2_cube.msh"))

	// A .msh and its .msh.blob, both given (as a shell glob does): one file.
	tf := filepath.Join(root, "testdata", "tfever")
	msg, code = runBin(t, root, "convert", "-o", t.TempDir(), filepath.Join(tf, "tf2_cube.msh"), filepath.Join(tf, "tf2_cube.msh.blob"))
	if code != 0 || !strings.Contains(msg, "converted 1 of 1 files (0 failed)") {
		t.Fatalf("convert .msh .msh.blob: status %d\n%s", code, msg)
	}

	// A missing file: its full path, whichever folder is missing.
	cwd := t.TempDir()
	msg, code = runBin(t, cwd, "convert", "-o", t.TempDir(), "no/such/dir/x.ply")
	if code != 1 || !strings.Contains(msg, filepath.Join(cwd, "no/such/dir/x.ply")+": no such file or directory") {
		t.Fatalf("missing file: status %d\n%s", code, msg)
	}
	// No argument: the usage line, status 2.
	msg, code = runBin(t, cwd, "convert")
	if code != 2 || !strings.Contains(msg, "Usage: meshfs convert") {
		t.Fatalf("no argument: status %d\n%s", code, msg)
	}
}

// brokenTree writes, under dir, meshes whose errors name files: x.mesh (a
// truncated UNIGINE mesh), nob.msh (a Transport Fever mesh without its
// .msh.blob) and short.msh (with a cut .msh.blob).
func brokenTree(t *testing.T, dir string) {
	t.Helper()
	fixtures := filepath.Join(decodetest.RepoRoot(), "testdata")
	read := func(rel string) []byte {
		b, err := os.ReadFile(filepath.Join(fixtures, rel))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	cube, msh, blob := read("unigine/ms15_cube.mesh"), read("tfever/tf2_cube.msh"), read("tfever/tf2_cube.msh.blob")
	for name, b := range map[string][]byte{"x.mesh": cube[:40], "nob.msh": msh, "short.msh": msh, "short.msh.blob": blob[:100]} {
		if err := writeFile(filepath.Join(dir, name), b); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCheckNamesOnce: `meshfs check` given relative paths prints each
// broken mesh's path as given, once, then the error without it; a file the
// error is about (the missing blob) is named once.
func TestCheckNamesOnce(t *testing.T) {
	dir := t.TempDir()
	brokenTree(t, dir)
	out, code := runBin(t, dir, "check", "-j", "1", "x.mesh", "nob.msh", "short.msh")
	if code != 1 {
		t.Fatalf("check: status %d, want 1\n%s", code, out)
	}
	for _, c := range []struct{ prefix, once string }{
		{"x.mesh: header: offset 0x", "x.mesh"},
		{"nob.msh: " + filepath.Join(dir, "nob.msh.blob") + ": blob: offset 0x0: cannot open the companion: no such file or directory", "nob.msh.blob"},
		{"short.msh: " + filepath.Join(dir, "short.msh.blob") + ": ", "short.msh.blob"},
	} {
		found := false
		for _, line := range strings.Split(out, "\n") {
			if strings.HasPrefix(line, c.prefix) {
				found = true
				if n := strings.Count(line, c.once); n != 1 {
					t.Errorf("%q names %s %d times", line, c.once, n)
				}
			}
		}
		if !found {
			t.Errorf("no line starting %q in:\n%s", c.prefix, out)
		}
	}
}

// treeMeshes walks the tree vfs shows of dir, limited by lim, as a reader
// would: every file of every mesh's folder opened, then the folder listed
// again. It returns each mesh's name in the tree and the source paths of
// those whose folder then shows error.txt.
func treeMeshes(t *testing.T, dir string, lim outputs.Limits) (meshes, failed []string) {
	t.Helper()
	tr, err := vfs.New(vfs.Config{Source: dir, NoWatch: true, Store: store.Config{Limits: &lim}})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	ctx := context.Background()
	var open func(name string)
	open = func(name string) {
		list, _ := tr.ReadDir(ctx, name)
		for _, e := range list {
			if p := vfstest.Join(name, e.Name); e.IsDir() {
				open(p)
			} else if f, err := tr.Open(ctx, p); err == nil {
				f.Close()
			}
		}
	}
	var walk func(name string)
	walk = func(name string) {
		list, err := tr.ReadDir(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range list {
			p := vfstest.Join(name, e.Name)
			switch e.Kind {
			case vfs.SourceFolder, vfs.SourceArchive:
				walk(p)
			case vfs.SourceMesh:
				meshes = append(meshes, p)
				open(p)
				if _, err := tr.Stat(ctx, p+"/"+outputs.ErrorName); err == nil {
					failed = append(failed, filepath.Join(tr.Source(), filepath.FromSlash(p)))
				}
			}
		}
	}
	walk("")
	return meshes, failed
}
