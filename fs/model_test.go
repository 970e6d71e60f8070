package fs

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestPartChangeRemakesModel: a model's .glb depends on its parts: one
// part replaced under the mount re-makes the model's .glb, and listing
// the model's folder and reading its header.json assembled nothing.
func TestPartChangeRemakesModel(t *testing.T) {
	gem := filepath.Join(repoRoot(t), "testdata", "gem")
	src := t.TempDir()
	for _, n := range []string{"tank_small.mdl", "eply_tangents_textures.ply", "eply_multi_uv.ply", "eply_mirrored_mror.ply", "gun_fire.anm", "box.vol"} {
		b, err := os.ReadFile(filepath.Join(gem, n))
		if err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(src, n), b)
	}
	fsys, mnt := mountT(t, src, Config{})
	dir := filepath.Join(mnt, "tank_small.mdl")
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, e := range ents {
		names[e.Name()] = true
	}
	for _, n := range []string{"header.json", "tank_small.glb", "tank_small.lod1.glb", "chunks"} {
		if !names[n] {
			t.Errorf("the model's folder lists %v: no %s", names, n)
		}
	}
	hdr, err := os.ReadFile(filepath.Join(dir, "header.json"))
	if err != nil || !bytes.Contains(hdr, []byte(`"lod_files"`)) {
		t.Fatalf("header.json: %v\n%s", err, hdr)
	}
	if c := fsys.Stats().Conversions; len(c) != 0 {
		t.Errorf("listing and header.json made conversions: %v", c)
	}
	glb := filepath.Join(dir, "tank_small.glb")
	before, err := os.ReadFile(glb)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := os.ReadFile(glb); err != nil || !bytes.Equal(again, before) {
		t.Fatalf("tank_small.glb read twice differs (err %v)", err)
	}
	// The wheels' part becomes another mesh.
	other, err := os.ReadFile(filepath.Join(gem, "pm01_gem3.ply"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(src, "eply_multi_uv.ply"), other)
	var after []byte
	if !waitFor(10*time.Second, func() bool {
		after, err = os.ReadFile(glb)
		return err == nil && !bytes.Equal(after, before)
	}) {
		t.Fatalf("tank_small.glb unchanged after a part changed (err %v)", err)
	}
}
