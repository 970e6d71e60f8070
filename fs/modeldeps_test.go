package fs

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/meshfs/meshfs/decode/decodetest"
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
// texture, script, the .mdl's own script, animation) made private (file
// 0600, folder 0700), header.json and NAME.glb show 0400 and nobody is
// refused both; with everything readable nobody reads the .glb root reads.
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
		}
	})
}
