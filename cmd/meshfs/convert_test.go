package main

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
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
// convert writes; every command answers --help.
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
	for _, sub := range []string{"", "convert", "info", "mount"} {
		args := append(strings.Fields(sub), "--help")
		if b, err := exec.Command(meshfsBin, args...).CombinedOutput(); err != nil || !strings.Contains(string(b), "Usage:") {
			t.Errorf("meshfs %s --help: %v\n%s", sub, err, b)
		}
	}
}
