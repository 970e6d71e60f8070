package fs

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/meshfs/meshfs/decode/decodetest"
	"github.com/meshfs/meshfs/internal/fusetest"
)

// modelCase is a model tree of decodetest.WriteModelTree beneath a
// mounted source, one of whose files (or folders) a test changes.
type modelCase struct {
	engine, kind string
	tree         decodetest.ModelTree
	dir          string // the tree's folder beneath the source
}

// model is the path of the case's model file beneath root.
func (c modelCase) model(root string) string {
	return filepath.Join(root, c.dir, c.tree.Models[c.engine])
}

// glb is NAME.glb of the case's model beneath the mount mnt.
func (c modelCase) glb(mnt string) string {
	m := c.model(mnt)
	return filepath.Join(m, strings.TrimSuffix(filepath.Base(m), ".mdl")+".glb")
}

// dep is the path of the case's changed file beneath the source.
func (c modelCase) dep() string { return filepath.Join(c.tree.Root, c.tree.Deps[c.engine][c.kind]) }

// modelCases writes into src a model tree per engine and kind of file its
// model reads (suffix added to each folder's name), and one more per
// engine whose kind is "".
func modelCases(t *testing.T, src, suffix string) []modelCase {
	t.Helper()
	var cases []modelCase
	kinds := decodetest.WriteModelTree(t, t.TempDir()).Deps
	for _, engine := range []string{"gem", "tf"} {
		for _, kind := range append([]string{""}, sortedKeys(kinds[engine])...) {
			dir := engine + "-" + strings.ReplaceAll(kind, " ", "_") + suffix
			cases = append(cases, modelCase{engine: engine, kind: kind, dir: dir, tree: decodetest.WriteModelTree(t, filepath.Join(src, dir))})
		}
	}
	return cases
}

func sortedKeys(m map[string]string) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// TestPermissionsModelDeps: through allow_other, in both open modes, user
// nobody reads a model's outputs only when every file and folder it is
// made from is readable to them: for each engine and each kind of file a
// model reads (part, a part's folder, an archive holding a part, .mtl,
// texture, a texture's folder, script, the .mdl's own script, animation)
// made private (file 0600, folder 0700), header.json and NAME.glb show
// 0400 and nobody is refused both, as for the GEM part whose own folder
// reads that .mtl and texture; with everything readable nobody reads the
// .glb root reads.
func TestPermissionsModelDeps(t *testing.T) {
	bothModes(t, func(t *testing.T) {
		src := reachableDir(t)
		cases := modelCases(t, src, "")
		for _, c := range cases {
			if c.kind == "" {
				continue
			}
			mode := os.FileMode(0o600)
			if fi, err := os.Stat(c.dep()); err == nil && fi.IsDir() {
				mode = 0o700
			}
			if err := os.Chmod(c.dep(), mode); err != nil {
				t.Fatal(err)
			}
		}
		_, mnt := mountOther(t, src, Config{}, fuse.MountOptions{})
		for _, c := range cases {
			glb := c.glb(mnt)
			if c.kind != "" {
				// Cold: nobody's read is the first of the model.
				wantNobodyDenied(t, glb)
			}
			want, err := os.ReadFile(glb)
			if err != nil {
				t.Fatalf("root: %v", err)
			}
			hdr := filepath.Join(c.model(mnt), "header.json")
			if c.kind == "" {
				wantPerm(t, hdr, 0o444)
				wantNobodyReads(t, glb, want)
				continue
			}
			wantPerm(t, hdr, 0o400)
			wantPerm(t, glb, 0o400)
			wantNobodyDenied(t, glb)
			wantNobodyDenied(t, hdr)
			if c.engine == "gem" && (c.kind == "mtl" || strings.HasPrefix(c.kind, "texture")) {
				// The body part's own folder reads the .mtl and texture too.
				part := filepath.Join(mnt, c.dir, "gem", "eply_tangents_textures.ply")
				wantPerm(t, filepath.Join(part, "header.json"), 0o400)
				wantNobodyDenied(t, filepath.Join(part, "eply_tangents_textures.glb"))
			}
		}
	})
}

// changed returns, for the case's kind of file, new contents that change
// its model's NAME.glb, by path (a TF part is its .msh and its blob);
// nil for a kind staleness tests do not change (a folder, a companion,
// covered elsewhere).
func (c modelCase) changed(t *testing.T) map[string][]byte {
	t.Helper()
	fixture := func(rel string) []byte { return readTestdata(t, rel) }
	dep := c.dep()
	switch c.engine + " " + c.kind {
	case "gem part":
		return map[string][]byte{dep: fixture("gem/pm01_gem3.ply")}
	case "gem archive":
		packed := filepath.Join(t.TempDir(), "packed")
		write(t, filepath.Join(packed, "entity", "common", "gun.ply"), fixture("gem/pm01_gem3.ply"))
		zip := filepath.Join(t.TempDir(), "entity.pak")
		decodetest.ZipTree(t, packed, zip, 0)
		b, err := os.ReadFile(zip)
		if err != nil {
			t.Fatal(err)
		}
		return map[string][]byte{dep: b}
	case "gem mtl":
		return map[string][]byte{dep: []byte("{material simple\n\t{diffuse \"body.dds\"}\n\t{blend blend}\n}\n")}
	case "gem texture", "tf texture":
		return map[string][]byte{dep: ddsOf(t, 16, 8)}
	case "gem animation":
		return map[string][]byte{dep: fixture("gem/turret_frmn.anm")}
	case "tf part":
		return map[string][]byte{dep: fixture("tfever/res/models/mesh/fixture/door.msh"),
			dep + ".blob": fixture("tfever/res/models/mesh/fixture/door.msh.blob")}
	case "tf mtl":
		b, err := os.ReadFile(dep)
		if err != nil {
			t.Fatal(err)
		}
		return map[string][]byte{dep: bytes.Replace(b, []byte("params = {"), []byte("params = { two_sided = { twoSided = true },"), 1)}
	case "tf script":
		return map[string][]byte{dep: []byte(`return { albedo = "fixture/none.dds" }`)}
	case "tf model script":
		return map[string][]byte{dep: []byte(`return { mesh = "fixture/cube.msh", material = "fixture/none.mtl" }`)}
	case "tf animation":
		return map[string][]byte{dep: fixture("tfever/walk.ani")}
	}
	return nil
}

// change writes the case's new files (changed): in place, or by rename
// over the file from a temporary file beside the tree.
func (c modelCase) change(t *testing.T, files map[string][]byte, rename bool) {
	t.Helper()
	for p, b := range files {
		if !rename {
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		tmp := filepath.Join(c.tree.Root, ".new")
		write(t, tmp, b)
		if err := os.Rename(tmp, p); err != nil {
			t.Fatal(err)
		}
	}
}

// TestModelDepsStaleness: a model's NAME.glb is re-made when any file it
// was made from changes, in place or by rename over it: for GEM its part,
// the archive holding a part, a part's .mtl and its texture, its .anm; for
// Transport Fever its .msh, the .mtl it names, the texture and the script
// that .mtl requires, the script the .mdl requires, its .ani. In the mount
// the .glb read after the change differs from before; across a remount
// on the same disk cache, a file changed while unmounted gives a .glb
// other than the one the cache holds. Both open modes.
func TestModelDepsStaleness(t *testing.T) {
	type one struct {
		c      modelCase
		files  map[string][]byte
		rename bool
		before []byte
	}
	setup := func(t *testing.T, src string) []*one {
		var out []*one
		for _, rename := range []bool{false, true} {
			suffix := "-inplace"
			if rename {
				suffix = "-rename"
			}
			for _, c := range modelCases(t, src, suffix) {
				if files := c.changed(t); files != nil {
					out = append(out, &one{c: c, files: files, rename: rename})
				}
			}
		}
		return out
	}
	read := func(t *testing.T, p string) []byte {
		t.Helper()
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	name := func(o *one) string { return o.c.dir + " " + o.c.kind }

	bothModes(t, func(t *testing.T) {
		t.Run("mount", func(t *testing.T) {
			src := t.TempDir()
			cases := setup(t, src)
			_, mnt := mountT(t, src, Config{})
			fusetest.GuardMount(t, mnt, fusetest.Guard)
			for _, o := range cases {
				o.before = read(t, o.c.glb(mnt))
			}
			for _, o := range cases {
				o.c.change(t, o.files, o.rename)
			}
			for _, o := range cases {
				var after []byte
				if !waitFor(10*time.Second, func() bool {
					b, err := os.ReadFile(o.c.glb(mnt))
					after = b
					return err == nil && !bytes.Equal(b, o.before)
				}) {
					t.Errorf("%s: the .glb is unchanged after the change (%d bytes)", name(o), len(after))
				}
			}
		})
		t.Run("remount", func(t *testing.T) {
			src, cache := t.TempDir(), t.TempDir()
			cases := setup(t, src)
			_, mnt, stop := mountDisk(t, src, cache, false)
			for _, o := range cases {
				o.before = read(t, o.c.glb(mnt))
			}
			stop()
			for _, o := range cases {
				o.c.change(t, o.files, o.rename)
			}
			_, mnt, _ = mountDisk(t, src, cache, false)
			for _, o := range cases {
				if bytes.Equal(read(t, o.c.glb(mnt)), o.before) {
					t.Errorf("%s: after the remount the .glb is the one made before the change", name(o))
				}
			}
		})
	})
}

// TestPermissionsModelDepChmod: a file or folder a model is made from,
// made private after nobody read the model's .glb, takes the outputs with
// it: for a TF model's texture (chmod 0600) and the texture's folder
// (chmod 0700), nobody is refused the .glb within a few seconds.
func TestPermissionsModelDepChmod(t *testing.T) {
	src := reachableDir(t)
	var cases []modelCase
	for _, c := range modelCases(t, src, "") {
		if c.engine == "tf" && (c.kind == "texture" || c.kind == "texture folder") {
			cases = append(cases, c)
		}
	}
	_, mnt := mountOther(t, src, Config{}, fuse.MountOptions{})
	for _, c := range cases {
		want, err := os.ReadFile(c.glb(mnt))
		if err != nil {
			t.Fatal(err)
		}
		wantNobodyReads(t, c.glb(mnt), want)
	}
	for _, c := range cases {
		mode := os.FileMode(0o600)
		if c.kind == "texture folder" {
			mode = 0o700
		}
		if err := os.Chmod(c.dep(), mode); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range cases {
		if !waitFor(10*time.Second, func() bool {
			fi, err := os.Stat(c.glb(mnt))
			return err == nil && fi.Mode().Perm() == 0o400
		}) {
			fi, err := os.Stat(c.glb(mnt))
			t.Errorf("%s made private: the .glb shows %v (%v), want 0400", c.kind, fi.Mode(), err)
			continue
		}
		wantNobodyDenied(t, c.glb(mnt))
	}
}
