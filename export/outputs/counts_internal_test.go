package outputs

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/meshfs/meshfs/decode/decodetest"
)

// TestModelCounts: a model's header.json "counts" are those of its LOD 0
// as assembled (the scene NAME.glb is made from): its primitives,
// triangles, morph targets and animations; its vertices are those its
// parts' own header.json count (as their files store them), a part once
// per node it is placed at. For the fixture models and the real ones
// under ../shared/assets. A model one of whose LOD 0 parts is not found
// has no "counts" (tank_small.mdl names /entity/common/gun.ply, outside
// testdata/).
func TestModelCounts(t *testing.T) {
	root := decodetest.RepoRoot()
	paths := []string{
		filepath.Join(root, "testdata/tfever/res/models/model/fixture/car.mdl"),
		filepath.Join(root, "testdata/tfever/res/models/model/fixture/sign.mdl"),
		filepath.Join(root, "testdata/gem/crewman.mdl"),
	}
	if assets, ok := decodetest.Shared(t, "assets"); ok {
		filepath.WalkDir(assets, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, ".mdl") {
				paths = append(paths, p)
			}
			return nil
		})
	}
	counted := 0
	for _, p := range paths {
		counts, ok := modelCounts(t, p)
		if !ok {
			continue
		}
		counted++
		m, err := Open(p)
		if err != nil || m == nil {
			t.Fatalf("%s: %v", p, err)
		}
		scenes, _, _, err := m.assemble(context.Background())
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		c := scenes[0].Count()
		want := map[string]int{"submeshes": c.Primitives, "triangles": c.Triangles, "vertices": partVertices(t, p),
			"morph_targets": c.MorphTargets, "animations": c.Animations}
		for k, w := range want {
			if counts[k] != w {
				t.Errorf("%s: counts.%s = %d, LOD 0 as assembled has %d", filepath.Base(p), k, counts[k], w)
			}
		}
		if counts["triangles"] == 0 {
			t.Errorf("%s: counts %v: no triangles", filepath.Base(p), counts)
		}
	}
	if counted < 3 {
		t.Errorf("only %d models have counts", counted)
	}
	if counts, ok := modelCounts(t, filepath.Join(root, "testdata/gem/tank_small.mdl")); ok {
		t.Errorf("tank_small.mdl, a LOD 0 part not found: counts %v, want none", counts)
	}
}

// modelCounts is the "counts" of the header.json of the model at p, and
// whether it has them.
func modelCounts(t *testing.T, p string) (map[string]int, bool) {
	t.Helper()
	m, err := Open(p)
	if err != nil || m == nil || !m.IsModel() {
		t.Fatalf("%s: %v, %v", p, m, err)
	}
	st, err := m.Scan(context.Background())
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	b, err := m.Header(st, nil)
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	var h struct{ Counts map[string]int }
	if err := json.Unmarshal(b, &h); err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	return h.Counts, h.Counts != nil
}

// partVertices sums the vertices the header.json of each part that LOD 0
// of the model at p places counts, once per placement (the parts as the
// model's header.json lists them, each opened as its own folder).
func partVertices(t *testing.T, p string) int {
	t.Helper()
	m, _ := Open(p)
	st, _ := m.Scan(context.Background())
	b, _ := m.Header(st, nil)
	var h struct {
		LODs []struct{ Parts []struct{ Path string } } `json:"lod_files"`
	}
	if err := json.Unmarshal(b, &h); err != nil || len(h.LODs) == 0 {
		t.Fatalf("%s: %v", p, err)
	}
	n := 0
	for _, part := range h.LODs[0].Parts {
		pp := filepath.FromSlash(part.Path)
		if !filepath.IsAbs(pp) {
			pp = filepath.Join(filepath.Dir(p), pp)
		}
		pm, err := Open(pp)
		if err != nil || pm == nil {
			t.Fatalf("%s: part %s: %v", p, pp, err)
		}
		pst, err := pm.Scan(context.Background())
		if err != nil {
			t.Fatalf("%s: %v", pp, err)
		}
		pb, _ := pm.Header(pst, nil)
		var ph struct{ Counts map[string]int }
		if err := json.Unmarshal(pb, &ph); err != nil {
			t.Fatalf("%s: %v", pp, err)
		}
		n += ph.Counts["vertices"]
	}
	return n
}
