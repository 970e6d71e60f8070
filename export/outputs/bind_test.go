package outputs_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/gem"
	"github.com/meshfs/meshfs/export/gltf/validator"
	"github.com/meshfs/meshfs/export/outputs"
)

// TestAnimationBinding: an animation's bones bind to the model's nodes by
// name, else ignoring case; a bone no node matches keeps its keys on a
// stand-in node under the model's root, marked unbound, and header.json
// (from scans only) names it. An animation none of whose bones is a node
// is still a glTF animation.
func TestAnimationBinding(t *testing.T) {
	dir := t.TempDir()
	key := func(bone int, x float32) gem.AnmKey {
		return gem.AnmKey{Bone: bone, Flags: gem.KeyPosition | gem.KeyRotation, Position: [3]float32{x, 0, 0}}
	}
	anm := func(name string, bones ...string) {
		a := &gem.Anm{Version: 0x00060000, FrameCount: 11, HasFrameCount: true, Bones: bones}
		for _, n := range []uint32{0, 10} {
			fr := gem.AnmFrame{Number: n}
			for i := range bones {
				fr.Keys = append(fr.Keys, key(i, float32(n+uint32(i))))
			}
			a.Frames = append(a.Frames, fr)
		}
		b, err := gem.EncodeAnm(a)
		if err != nil {
			t.Fatal(err)
		}
		put(t, filepath.Join(dir, name), b)
	}
	anm("turn.anm", "hull", "turret", "hatch")
	anm("open.anm", "hatch1", "HATCH")
	put(t, filepath.Join(dir, "tank.mdl"), []byte("model text\n"))
	ref := func(n string) *decode.Ref { return &decode.Ref{Stored: n, Base: decode.RefModelDir, Rel: n} }
	model := &decode.Model{Unit: "test unit", Scale: 1,
		LODs: []decode.ModelLOD{{Nodes: []decode.ModelNode{
			{Name: "Hull", Parent: -1, Matrix: translate(0, 1, 0)},
			{Name: "turret", Parent: 0, Matrix: translate(0, 1, 0)},
		}}},
		Animations: []decode.ModelAnimation{{Name: "turn", File: ref("turn.anm"), Node: -1}, {Name: "open", File: ref("open.anm"), Node: -1}},
	}
	m := outputs.New(filepath.Join(dir, "tank.mdl"), testModel{model})
	glbs, _, err := m.ModelGLBs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	validator.Check(t, glbs[0])
	doc := parseGLB(t, glbs[0])
	root := nodeNamed(t, doc, "tank")
	targets := map[string][]string{}
	for _, a := range doc.Animations {
		for _, c := range a.Channels {
			n := doc.Nodes[*c.Target.Node].Name
			if !slices.Contains(targets[a.Name], n) {
				targets[a.Name] = append(targets[a.Name], n)
			}
		}
	}
	slices.Sort(targets["turn"])
	slices.Sort(targets["open"])
	if len(doc.Animations) != 2 || !slices.Equal(targets["turn"], []string{"Hull", "hatch", "turret"}) ||
		!slices.Equal(targets["open"], []string{"hatch", "hatch1"}) {
		t.Errorf("animation targets %v, want turn on Hull, turret and hatch, open on hatch1 and hatch", targets)
	}
	// One stand-in per name ignoring case, under the root, at its first key.
	stand := map[string][]string{}
	for i, n := range doc.Nodes {
		var ex struct {
			Unbound    string   `json:"unbound_bone"`
			Animations []string `json:"animations"`
		}
		b, _ := json.Marshal(n.Extras)
		if json.Unmarshal(b, &ex) != nil || ex.Unbound == "" {
			continue
		}
		if parentOf(doc, i) != root {
			t.Errorf("stand-in %s under node %d, want the root", n.Name, parentOf(doc, i))
		}
		stand[n.Name] = ex.Animations
	}
	if len(stand) != 2 || !slices.Equal(stand["hatch"], []string{"turn", "open"}) || !slices.Equal(stand["hatch1"], []string{"open"}) {
		t.Errorf("stand-ins %v, want hatch (turn, open) and hatch1 (open)", stand)
	}
	if w := worldOf(doc, nodeNamed(t, doc, "hatch1")); !near(w[12], 0) {
		t.Errorf("hatch1 rests at %v, want its first key (x 0)", w[12:15])
	}

	st, err := m.Scan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	hb, _, err := m.HeaderDeps(st, nil)
	if err != nil {
		t.Fatal(err)
	}
	var h struct {
		Anims []struct {
			Name    string
			Unbound []string `json:"unbound_bones"`
		} `json:"animation_files"`
		Failed []map[string]any
	}
	if err := json.Unmarshal(hb, &h); err != nil {
		t.Fatal(err)
	}
	if len(h.Anims) != 2 || !slices.Equal(h.Anims[0].Unbound, []string{"hatch"}) || !slices.Equal(h.Anims[1].Unbound, []string{"hatch1", "HATCH"}) || len(h.Failed) != 0 {
		t.Errorf("header animations %+v, failed %v: want turn's hatch and open's hatch1, HATCH unbound, nothing failed", h.Anims, h.Failed)
	}
}

// TestDecodeOnlyFailure: a part whose scan passes but whose decode fails
// (a GEM .ply with two VERT chunks: Scan lists them, Decode refuses) is
// named in the .glb's root extras and on its empty node; header.json,
// made by scans only, does not list it as failed.
func TestDecodeOnlyFailure(t *testing.T) {
	dir := t.TempDir()
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "testdata", "gem", "eply_tangents_textures.ply"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := gem.Parse(context.Background(), "p.ply", b)
	if err != nil {
		t.Fatal(err)
	}
	var vert gem.Chunk
	for _, c := range f.Chunks {
		if c.FourCC() == "VERT" {
			vert = c
		}
	}
	f.Chunks = append(f.Chunks, vert)
	twice, err := gem.Encode(f)
	if err != nil {
		t.Fatal(err)
	}
	put(t, filepath.Join(dir, "twice.ply"), twice)
	put(t, filepath.Join(dir, "tank.mdl"), []byte("model text\n"))
	model := &decode.Model{Unit: "test unit", Scale: 1, LODs: []decode.ModelLOD{{Nodes: []decode.ModelNode{
		{Name: "hull", Parent: -1, Matrix: decode.Identity4(), Parts: []decode.ModelPart{{Mesh: decode.Ref{Stored: "twice.ply", Base: decode.RefModelDir, Rel: "twice.ply"}}}}}}}}
	m := outputs.New(filepath.Join(dir, "tank.mdl"), testModel{model})
	st, err := m.Scan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	hb, _, err := m.HeaderDeps(st, nil)
	if err != nil {
		t.Fatal(err)
	}
	var h struct{ Failed, Unresolved []map[string]any }
	if err := json.Unmarshal(hb, &h); err != nil {
		t.Fatal(err)
	}
	if len(h.Failed) != 0 || len(h.Unresolved) != 0 {
		t.Errorf("header.json failed %v, unresolved %v: want neither (the part scans)", h.Failed, h.Unresolved)
	}
	glbs, _, err := m.ModelGLBs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	validator.Check(t, glbs[0])
	doc := parseGLB(t, glbs[0])
	ex, _ := json.Marshal(doc.Nodes[nodeNamed(t, doc, "tank")].Extras)
	if !strings.Contains(string(ex), `"failed"`) || !strings.Contains(string(ex), "twice.ply") {
		t.Errorf("root extras %s: want twice.ply under failed", ex)
	}
	if n := nodeNamed(t, doc, "twice.ply"); doc.Nodes[n].Mesh != nil {
		t.Error("twice.ply has a mesh")
	}
}
