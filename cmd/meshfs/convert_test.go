package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/meshfs/meshfs/decode/decodetest"
	"github.com/meshfs/meshfs/vfs"
	"github.com/meshfs/meshfs/vfs/vfstest"
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

// TestConvertLikeMount: `meshfs convert DIR` writes what a mount of DIR
// shows, entry by entry: every folder and every file the mount makes
// (mesh folders, chunks/, texture PNGs, error texts), with the same bytes
// and permissions; the files the mount passes through (and links) are not
// copied, nor an output the mount cannot give (a broken mesh's geometry).
// Over testdata/, broken meshes (brokenTree), testdata/orientation loose
// and as a ZIP, and ../shared/realdata.
func TestConvertLikeMount(t *testing.T) {
	root := decodetest.RepoRoot()
	broken := t.TempDir()
	brokenTree(t, broken)
	packed := t.TempDir()
	copyTree(t, filepath.Join(root, "testdata", "orientation"), filepath.Join(packed, "loose"))
	decodetest.ZipTree(t, filepath.Join(packed, "loose"), filepath.Join(packed, "pack.zip"), 0)
	roots := []string{filepath.Join(root, "testdata"), broken, packed}
	if real, ok := decodetest.RealData(t, ""); ok {
		roots = append(roots, real)
	}
	for _, src := range roots {
		out := t.TempDir()
		b, err := exec.Command(meshfsBin, "convert", "-o", out, src).CombinedOutput()
		var exit *exec.ExitError
		if err != nil && (!errors.As(err, &exit) || exit.ExitCode() != 1) {
			t.Fatalf("convert %s: %v\n%s", src, err, b)
		}
		mnt := mountDir(t)
		startMount(t, "--no-disk-cache", src, mnt)
		vfstest.Snapshot(t, vfstest.OS(mnt)) // converts all: failures are known
		passed := passedThrough(t, src)
		made := 0
		line := func(p string, e vfstest.Entry) string {
			if e.Err != nil || passed[p] {
				return ""
			}
			if e.Info.IsDir() {
				return e.Info.Mode.String()
			}
			return fmt.Sprintf("%v size=%d sha256=%s", e.Info.Mode, e.Info.Size, e.Sum)
		}
		mount := vfstest.Lines(vfstest.Snapshot(t, vfstest.OS(mnt)), func(p string, e vfstest.Entry) string {
			l := line(p, e)
			if l != "" && !e.Info.IsDir() {
				made++
			}
			return l
		})
		wrote, err := vfs.Dir(filepath.Join(out, filepath.Base(src)))
		if err != nil {
			t.Fatal(err)
		}
		conv := vfstest.Lines(vfstest.Snapshot(t, wrote), func(p string, e vfstest.Entry) string {
			if e.Err != nil {
				t.Errorf("%s: written, and cannot be read back: %v", p, e.Err)
			}
			return line(p, e)
		})
		vfstest.Agree(t, "mount", mount, "convert", conv)
		if t.Logf("%s: %d files made", src, made); made < 5 {
			t.Errorf("%s: only %d files made: not a test", src, made)
		}
	}
}

// passedThrough are the names a tree of src passes through unchanged:
// its source files and links (vfs.SourceFile, vfs.SourceLink), found by
// listings alone.
func passedThrough(t *testing.T, src string) map[string]bool {
	tr, err := vfs.New(vfs.Config{Source: src, NoWatch: true})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	passed := map[string]bool{}
	var walk func(dir string)
	walk = func(dir string) {
		list, err := tr.ReadDir(context.Background(), dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range list {
			p := vfstest.Join(dir, e.Name)
			switch e.Kind {
			case vfs.SourceFile, vfs.SourceLink:
				passed[p] = true
			case vfs.SourceFolder, vfs.SourceArchive:
				walk(p)
			}
		}
	}
	walk("")
	return passed
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
