package outputs_test

import (
	"archive/zip"
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/meshfs/meshfs/export/outputs"
)

// zipTree writes the files under dir into the ZIP at dest with Go's
// writer, by slash path, stored and deflated in turn.
func zipTree(t *testing.T, dir, dest string) {
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

// TestPackedModTree: a GEM mod tree packed whole into mod.pak (its mesh
// at mod.pak/entity/tank/body.ply, the archive as its tree) gives the same
// header.json (its material, textures found through the asset root inside
// the archive, skins listed from the archive's folder) and .glb, byte for
// byte, as the loose tree; its deps name the archive file.
func TestPackedModTree(t *testing.T) {
	mod, mesh, _ := gemTree(t)
	pak := filepath.Join(t.TempDir(), "mod.pak")
	zipTree(t, mod, pak)
	loose, err := outputs.OpenSource(mesh)
	if err != nil || loose == nil {
		t.Fatal(loose, err)
	}
	loose.Tree = mod
	packed, err := outputs.OpenSource(pak + "/entity/tank/body.ply")
	if err != nil || packed == nil {
		t.Fatal(packed, err)
	}
	packed.Tree = pak
	ctx := context.Background()
	var hdr [2][]byte
	var glb [2][]byte
	for i, m := range []*outputs.Mesh{loose, packed} {
		st, err := m.Scan(ctx)
		if err != nil {
			t.Fatal(err)
		}
		b, deps, err := m.HeaderDeps(st, nil)
		if err != nil {
			t.Fatal(err)
		}
		hdr[i] = b
		if i == 1 {
			for _, d := range deps {
				if d.Path != pak {
					t.Errorf("dep %s, want the archive %s", d.Path, pak)
				}
			}
			if len(deps) == 0 {
				t.Error("no deps")
			}
		}
		if glb[i], err = m.GLBFile(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(hdr[0], hdr[1]) {
		t.Errorf("header.json differs:\nloose  %s\npacked %s", hdr[0], hdr[1])
	}
	if !bytes.Contains(hdr[1], []byte(`"../../texture/common/model/tank/hull.dds"`)) || !bytes.Contains(hdr[1], []byte("hull#winter.dds")) {
		t.Errorf("the packed textures are not resolved:\n%s", hdr[1])
	}
	if !bytes.Equal(glb[0], glb[1]) {
		t.Errorf(".glb differs: %d bytes loose, %d packed", len(glb[0]), len(glb[1]))
	}
}
