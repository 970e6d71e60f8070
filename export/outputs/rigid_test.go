package outputs_test

import (
	"bytes"
	"context"
	"math"
	"path/filepath"
	"testing"

	"github.com/meshfs/meshfs/decode/decodetest"
	"github.com/meshfs/meshfs/export/gltf/validator"
	"github.com/meshfs/meshfs/export/outputs"
	qgltf "github.com/qmuntal/gltf"
)

// TestGLBRestPoseWithoutScale: the UNIGINE samples whose skeletons rest
// scaled (the agent's root at 0.25, the cat's at 1/10 000 with bones at
// 10 000) come out of NAME.glb and NAME.animated.glb with every joint
// node's rest transform free of scale, and still validate.
func TestGLBRestPoseWithoutScale(t *testing.T) {
	dir := decodetest.NeedShared(t, "assets/unigine")
	ctx := context.Background()
	var glbs [][]byte
	for _, name := range []string{"ms11_mockup_agent.mesh", "ms13_kimchi_45ba7bbc757629f72b41fa21ecd35f899996fd2f.mesh"} {
		m, err := outputs.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		scene, err := m.Decode(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if scene.RigidRest() == scene {
			t.Fatalf("%s: the decoded skeleton rests without scale; the test needs a scaled one", name)
		}
		glb, err := m.GLBFile(ctx)
		if err != nil {
			t.Fatal(err)
		}
		anim, err := m.AnimatedGLBFile(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for what, b := range map[string][]byte{m.GLBName(): glb, m.AnimatedGLBName(): anim} {
			glbs = append(glbs, b)
			doc := new(qgltf.Document)
			if err := qgltf.NewDecoder(bytes.NewReader(b)).Decode(doc); err != nil {
				t.Fatalf("%s: %v", what, err)
			}
			if len(doc.Skins) != 1 {
				t.Fatalf("%s: %d skins, want 1", what, len(doc.Skins))
			}
			for _, j := range doc.Skins[0].Joints {
				s := doc.Nodes[j].ScaleOrDefault()
				for _, c := range s {
					if math.Abs(c-1) > 1e-5 {
						t.Errorf("%s: joint %q rests with scale %v", what, doc.Nodes[j].Name, s)
						break
					}
				}
			}
		}
	}
	// Last: without the validator installed it skips the test.
	for _, b := range glbs {
		validator.Check(t, b)
	}
}
