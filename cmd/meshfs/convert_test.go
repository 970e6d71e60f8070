package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/meshfs/meshfs/decode/decodetest"
)

// TestConvertCommand runs `meshfs convert` as users do: a good file and a
// broken one in one call give both folders, a one-line summary and exit
// status 1; a Stanford PLY is skipped, not converted.
func TestConvertCommand(t *testing.T) {
	root := decodetest.RepoRoot()
	good := filepath.Join(root, "testdata", "gem", "eply_skinned_0x800.ply")
	data, err := os.ReadFile(good)
	if err != nil {
		t.Fatal(err)
	}
	in := t.TempDir()
	broken := filepath.Join(in, "broken.ply")
	os.WriteFile(broken, data[:len(data)/2], 0o644)
	out := t.TempDir()

	cmd := exec.Command(meshfsBin, "convert", "-o", out, good, broken)
	stderr, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 1 {
		t.Fatalf("exit %v, want status 1; output:\n%s", err, stderr)
	}
	if !strings.Contains(string(stderr), "converted 1 of 2 files (1 failed)") {
		t.Errorf("no one-line summary in:\n%s", stderr)
	}
	for _, name := range []string{"eply_skinned_0x800.glb", "eply_skinned_0x800.obj", "eply_skinned_0x800.mtl", "header.json", "chunks/00_BNDS.bin"} {
		if fi, err := os.Stat(filepath.Join(out, "eply_skinned_0x800.ply", name)); err != nil || fi.Size() == 0 {
			t.Errorf("%s: %v", name, err)
		}
	}
	msg, err := os.ReadFile(filepath.Join(out, "broken.ply", "error.txt"))
	if err != nil || !strings.Contains(string(msg), broken) || !strings.Contains(string(msg), "offset") {
		t.Errorf("broken.ply/error.txt = %q, %v; want the file and the offset named", msg, err)
	}
	if _, err := os.Stat(filepath.Join(out, "broken.ply", "broken.glb")); err == nil {
		t.Error("a .glb was written for the broken file")
	}

	stanford := filepath.Join(in, "bunny.ply")
	os.WriteFile(stanford, []byte("ply\nformat ascii 1.0\nend_header\n"), 0o644)
	if b, err := exec.Command(meshfsBin, "convert", "-o", out, stanford).CombinedOutput(); err == nil ||
		!strings.Contains(string(b), "not a supported mesh file") {
		t.Errorf("Stanford PLY: %v\n%s", err, b)
	}
	if _, err := os.Stat(filepath.Join(out, "bunny.ply")); err == nil {
		t.Error("a folder was written for a Stanford PLY")
	}
}

// TestInfoCommand: `meshfs info` prints exactly the header.json that
// convert writes; a missing FILE is exit status 1 for info, convert and
// check alike; every command answers --help.
func TestInfoCommand(t *testing.T) {
	file := filepath.Join(decodetest.RepoRoot(), "testdata", "unigine", "sk10_character.mesh_skinned")
	hdr, err := exec.Command(meshfsBin, "info", file).Output()
	if err != nil {
		t.Fatal(err)
	}
	var h map[string]any
	if err := json.Unmarshal(hdr, &h); err != nil || h["format"] != "unigine-mesh" {
		t.Fatalf("info printed %v (%v)", h["format"], err)
	}
	out := t.TempDir()
	if b, err := exec.Command(meshfsBin, "convert", "-o", out, file).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	written, _ := os.ReadFile(filepath.Join(out, filepath.Base(file), "header.json"))
	if string(written) != string(hdr) {
		t.Error("info and convert disagree on header.json")
	}
	// A missing FILE: every command exits 1 and names its full path once.
	missing := filepath.Join(t.TempDir(), "nope.mesh")
	for _, sub := range []string{"info", "convert -o " + out, "check"} {
		b, err := exec.Command(meshfsBin, append(strings.Fields(sub), missing)...).CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || exit.ExitCode() != 1 {
			t.Errorf("meshfs %s MISSING: %v, want exit status 1\n%s", sub, err, b)
		}
		if want := missing + ": no such file or directory"; strings.Count(string(b), missing) != 1 || !strings.Contains(string(b), want) {
			t.Errorf("meshfs %s MISSING said\n%s\nwant %q once", sub, b, want)
		}
	}
	for _, sub := range []string{"", "convert", "info", "mount"} {
		args := append(strings.Fields(sub), "--help")
		if b, err := exec.Command(meshfsBin, args...).CombinedOutput(); err != nil || !strings.Contains(string(b), "Usage:") {
			t.Errorf("meshfs %s --help: %v\n%s", sub, err, b)
		}
	}
}

// TestConvertMatchesMount: for every fixture under testdata/, broken meshes
// (brokenTree) and every real file under ../shared/realdata, each given to
// `meshfs convert` by its relative path, the folder convert writes and the
// folder a `meshfs mount` of the same tree shows hold the same files with
// the same bytes (both open modes); the mount's outputs convert did not
// write (a broken mesh's geometry) fail with EIO.
func TestConvertMatchesMount(t *testing.T) {
	broken := t.TempDir()
	brokenTree(t, broken)
	roots := []string{filepath.Join(decodetest.RepoRoot(), "testdata"), broken}
	if real, ok := decodetest.RealData(t, ""); ok {
		roots = append(roots, real)
	}
	for _, mode := range []struct {
		name string
		args []string
	}{{"no_open", nil}, {"open_handles", []string{"--open-handles"}}} {
		t.Run(mode.name, func(t *testing.T) {
			for _, root := range roots {
				n := convertMatchesMount(t, root, mode.args)
				t.Logf("%s: %d mesh files, every output the same bytes", root, n)
				if n == 0 {
					t.Errorf("%s: no mesh file compared", root)
				}
			}
		})
	}
}

// convertMatchesMount mounts root, converts each mesh file it shows as a
// folder, compares the two and returns how many mesh files it compared.
func convertMatchesMount(t *testing.T, root string, args []string) int {
	mnt := mountDir(t)
	startMount(t, append(args, "--cache-dir", t.TempDir(), root, mnt)...)
	meshes := map[string][]string{} // source folder (relative) → mesh files in it
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if fi, err := os.Stat(filepath.Join(mnt, rel)); err == nil && fi.IsDir() {
			meshes[filepath.Dir(rel)] = append(meshes[filepath.Dir(rel)], p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	n := 0
	for dir, files := range meshes {
		// Each file by its path relative to root, as a user in root
		// names it: the errors convert writes name the file as the
		// mount's do.
		args := []string{"convert", "-j", "1", "-o", filepath.Join(out, dir)}
		for _, f := range files {
			rel, _ := filepath.Rel(root, f)
			args = append(args, rel)
		}
		cmd := exec.Command(meshfsBin, args...)
		cmd.Dir = root
		b, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if err != nil && (!errors.As(err, &exit) || exit.ExitCode() != 1) {
			t.Fatalf("convert %s: %v\n%s", dir, err, b)
		}
		for _, f := range files {
			rel := filepath.Join(dir, filepath.Base(f))
			sameFolder(t, rel, filepath.Join(out, rel), filepath.Join(mnt, rel))
			n++
		}
	}
	return n
}

// sameFolder compares convert's folder want with the mount's folder got,
// both ways.
func sameFolder(t *testing.T, rel, want, got string) {
	t.Helper()
	_, err := os.Stat(filepath.Join(want, "error.txt"))
	failed := err == nil // convert wrote an error.txt
	err = filepath.WalkDir(want, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		r, _ := filepath.Rel(want, p)
		w, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		g, err := os.ReadFile(filepath.Join(got, r))
		switch {
		case err != nil:
			t.Errorf("%s: %s: convert wrote it, the mount: %v", rel, r, err)
		case !bytes.Equal(g, w):
			t.Errorf("%s: %s: the mount's %d bytes differ from convert's %d", rel, r, len(g), len(w))
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
	err = filepath.WalkDir(got, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		r, _ := filepath.Rel(got, p)
		if _, err := os.Stat(filepath.Join(want, r)); err == nil {
			return nil
		}
		if !failed {
			t.Errorf("%s: the mount lists %s, convert did not write it", rel, r)
		} else if _, err := os.ReadFile(p); !errors.Is(err, syscall.EIO) {
			t.Errorf("%s: %s, which convert did not write beside its error.txt: %v, want EIO", rel, r, err)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
}
