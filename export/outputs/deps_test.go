package outputs_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/meshfs/meshfs/decode/decodetest"
	"github.com/meshfs/meshfs/export/outputs"
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
			m, err := outputs.OpenSource(filepath.Join(tree.Root, model))
			if err != nil || m == nil {
				t.Fatal(m, err)
			}
			m.Tree = tree.Root
			st, err := m.Scan(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			_, deps, err := m.HeaderDeps(st, nil)
			if err != nil {
				t.Fatal(err)
			}
			set := map[string]bool{}
			for _, d := range deps {
				set[d.Path] = true
			}
			for kind, rel := range tree.Deps[engine] {
				p := filepath.Join(tree.Root, rel)
				if kind == "part folder" {
					p = filepath.Join(p, "turret_lod1.ply")
				}
				if !set[p] {
					t.Errorf("%s %s is not in the model's set %v", kind, rel, deps)
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
