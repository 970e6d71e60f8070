package outputs_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/meshfs/meshfs/decode/decodetest"
	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/vfs/vfstest"
)

// TestModelDepsEveryKind: a model's set (the files header.json's scan
// finds it is made from, which its version and access come from) names a
// file of every kind its conversion reads: for GEM its parts (one in a
// folder of its own, one in an archive: the archive), a part's .mtl and
// texture, its .anm; for Transport Fever its .msh and blob, the .mtl it
// names, the texture and the script that .mtl requires, the script the
// .mdl requires, its .ani. Every file the assembly reads is in the set.
func TestModelDepsEveryKind(t *testing.T) {
	tree := decodetest.WriteModelTree(t, t.TempDir())
	for engine, model := range tree.Models {
		t.Run(engine, func(t *testing.T) {
			m, err := outputs.OpenSource(filepath.Join(tree.Root, model), viewLimits())
			if err != nil || m == nil {
				t.Fatal(m, err)
			}
			m.Tree = tree.Root
			set := headerDepPaths(t, m)
			for kind, rel := range tree.Deps[engine] {
				p := filepath.Join(tree.Root, rel)
				switch kind {
				case "part folder":
					p = filepath.Join(p, "turret_lod1.ply")
				case "texture folder":
					continue // its texture is a kind of its own
				}
				if !set[p] {
					t.Errorf("%s %s is not in the model's set %v", kind, rel, set)
				}
			}
			_, read, err := m.ModelGLBs(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range read {
				if !set[d.Path] {
					t.Errorf("the assembly read %s, which the model's set lacks", d.Path)
				}
			}
		})
	}
}

// TestConvertModelNarrowed: convert's files of a model are readable by
// group and others only where every file and folder the model is made
// from is: made private one kind at a time (a file 0600, a folder 0700),
// each kind of each engine takes every bit from group and others; with
// all readable, the outputs are 0644 (folders 0755).
func TestConvertModelNarrowed(t *testing.T) {
	old := syscall.Umask(0o022)
	defer syscall.Umask(old)
	convert := func(t *testing.T, tree decodetest.ModelTree, engine string) map[string]os.FileMode {
		t.Helper()
		m, err := outputs.Open(filepath.Join(tree.Root, tree.Models[engine]))
		if err != nil || m == nil {
			t.Fatal(m, err)
		}
		m.Limits = viewLimits()
		out := filepath.Join(t.TempDir(), "out")
		vfstest.Convert(t, m.Path, &m.Limits, out) // error.txt lists what failed; modes are what counts
		got := groupOtherBits(t, out)
		if len(got) < 3 {
			t.Fatalf("only %v written", got)
		}
		return got
	}
	for _, engine := range []string{"gem", "tf"} {
		t.Run(engine, func(t *testing.T) {
			tree := decodetest.WriteModelTree(t, decodetest.Reachable(t, t.TempDir()))
			for rel, m := range convert(t, tree, engine) {
				if m != 0o044 && m != 0o055 {
					t.Errorf("all readable: %s has group/other bits %o", rel, m)
				}
			}
			for kind, rel := range tree.Deps[engine] {
				t.Run(kind, func(t *testing.T) {
					tree := decodetest.WriteModelTree(t, decodetest.Reachable(t, t.TempDir()))
					p := filepath.Join(tree.Root, rel)
					mode := os.FileMode(0o600)
					if fi, err := os.Stat(p); err == nil && fi.IsDir() {
						mode = 0o700
					}
					if err := os.Chmod(p, mode); err != nil {
						t.Fatal(err)
					}
					for out, m := range convert(t, tree, engine) {
						if m != 0 {
							t.Errorf("%s %s private: %s has group/other bits %o", kind, rel, out, m)
						}
					}
				})
			}
		})
	}
}

// BenchmarkStatAccess: the access of a Transport Fever model's set (the
// stat of every file and of the folders on the way to each), as the
// mount's vfs.Narrow takes it once per stat of the source that no
// earlier stat of its burst answers.
func BenchmarkStatAccess(b *testing.B) {
	tree := decodetest.WriteModelTree(b, b.TempDir())
	m, err := outputs.OpenSource(filepath.Join(tree.Root, tree.Models["tf"]), viewLimits())
	if err != nil || m == nil {
		b.Fatal(m, err)
	}
	st, err := m.Scan(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	_, deps, _ := m.HeaderDeps(st, nil)
	var paths []string
	for _, d := range deps {
		paths = append(paths, d.Path)
	}
	b.ReportMetric(float64(len(paths)), "files")
	for b.Loop() {
		outputs.Narrow(m.StatAccess([]outputs.Access{{Perm: 0o644}}, paths...)...)
	}
}

// TestBrokenModelDeps: a Transport Fever model whose scan fails in a script
// it requires still names that script (and the others it required) in its
// set, so that mending the script re-makes its folder and the script's
// access narrows header.json and error.txt.
func TestBrokenModelDeps(t *testing.T) {
	tree := decodetest.WriteModelTree(t, t.TempDir())
	script := filepath.Join(tree.Root, tree.Deps["tf"]["model script"])
	if err := os.WriteFile(script, []byte("return { mesh = "), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := outputs.OpenSource(filepath.Join(tree.Root, tree.Models["tf"]), viewLimits())
	if err != nil || m == nil {
		t.Fatal(m, err)
	}
	st, scanErr := m.Scan(context.Background())
	if scanErr == nil {
		t.Fatal("the scan of a model requiring a broken script succeeded")
	}
	_, deps, _ := m.HeaderDeps(st, scanErr)
	for _, d := range deps {
		if d.Path == script {
			return
		}
	}
	t.Errorf("the set %v lacks the broken script %s", deps, script)
}

// TestModelHeaderMaterialsBounded: a Transport Fever model naming many
// materials whose scripts never end gets its header.json within its
// Limits.Timeout and a material's script time, the failure listed under
// "failed", not a script time per material.
func TestModelHeaderMaterialsBounded(t *testing.T) {
	tree := decodetest.WriteModelTree(t, t.TempDir())
	res := filepath.Join(tree.Root, "tf", "res")
	var names []string
	for i := range 200 {
		name := fmt.Sprintf("fixture/loop%d.mtl", i)
		names = append(names, fmt.Sprintf("%q", name))
		put(t, filepath.Join(res, "models", "material", filepath.FromSlash(name)), []byte("function data() while true do end end"))
	}
	mdl := filepath.Join(res, "models", "model", "fixture", "loops.mdl")
	put(t, mdl, []byte(`function data() return { lods = { { node = { name = "RootNode", children = { {
		mesh = "fixture/cube.msh", materials = { `+strings.Join(names, ", ")+` },
		transf = { 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, } } } }, visibleFrom = 0, visibleTo = 1000 } } } end`))
	m, err := outputs.OpenSource(mdl, viewLimits())
	if err != nil || m == nil {
		t.Fatal(m, err)
	}
	m.Limits.Timeout = 200 * time.Millisecond
	st, err := m.Scan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	hdr, _, err := m.HeaderDeps(st, nil)
	took := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("header.json in %v", took)
	if !strings.Contains(string(hdr), `"kind": "materials"`) || !strings.Contains(string(hdr), "did not finish within") {
		t.Errorf("header.json lists no materials failure:\n%s", hdr)
	}
	if took > 5*time.Second {
		t.Errorf("header.json took %v for 200 looping materials", took)
	}
}
