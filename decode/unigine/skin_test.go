package unigine

import (
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/meshfs/meshfs/decode"
)

// posedBounds skins the mesh scene's vertices with the animation's values
// at frame f (joints matched by name; unanimated ones keep their rest) and
// returns the bind and posed bounding boxes' diagonals and the largest
// vertex displacement.
func posedBounds(t *testing.T, mesh, anim *decode.Scene, f int) (bind, posed, moved float64) {
	sk := mesh.Skeleton
	local := make([]decode.TRS, len(sk.Joints))
	byName := map[string]int{}
	for i, j := range sk.Joints {
		local[i] = j.Rest
		byName[j.Name] = i
	}
	for _, ch := range anim.Animations[0].Channels {
		i, ok := byName[anim.Skeleton.Joints[ch.Index].Name]
		if !ok {
			continue
		}
		k := min(f, len(ch.Times)-1)
		switch ch.Path {
		case decode.PathTranslation:
			local[i].Translation = [3]float32(ch.Values[3*k : 3*k+3])
		case decode.PathRotation:
			local[i].Rotation = [4]float32(ch.Values[4*k : 4*k+4])
		case decode.PathScale:
			local[i].Scale = [3]float32(ch.Values[3*k : 3*k+3])
		}
	}
	world := make([]decode.Mat4, len(sk.Joints))
	done := make([]bool, len(sk.Joints))
	var w func(i int) decode.Mat4
	w = func(i int) decode.Mat4 {
		if !done[i] {
			m := local[i].Matrix()
			if p := sk.Joints[i].Parent; p >= 0 {
				m = w(p).Mul(m)
			}
			world[i], done[i] = m, true
		}
		return world[i]
	}
	lo0, hi0 := [3]float64{1e30, 1e30, 1e30}, [3]float64{-1e30, -1e30, -1e30}
	lo1, hi1 := lo0, hi0
	for _, m := range mesh.Meshes {
		for _, p := range m.Primitives {
			for v, pos := range p.Positions {
				var out [3]float64
				for k := range 4 {
					wt := float64(p.Weights[v][k])
					if wt == 0 {
						continue
					}
					j := int(p.Joints[v][k])
					var ib decode.Mat4
					for c := range 16 {
						ib[c] = float64(sk.Joints[j].InverseBind[c])
					}
					s := w(j).Mul(ib)
					for r := range 3 {
						out[r] += wt * (s[r]*float64(pos[0]) + s[4+r]*float64(pos[1]) + s[8+r]*float64(pos[2]) + s[12+r])
					}
				}
				d := 0.0
				for r := range 3 {
					lo0[r], hi0[r] = math.Min(lo0[r], float64(pos[r])), math.Max(hi0[r], float64(pos[r]))
					lo1[r], hi1[r] = math.Min(lo1[r], out[r]), math.Max(hi1[r], out[r])
					d += (out[r] - float64(pos[r])) * (out[r] - float64(pos[r]))
				}
				moved = math.Max(moved, math.Sqrt(d))
			}
		}
	}
	diag := func(lo, hi [3]float64) float64 {
		return math.Sqrt((hi[0]-lo[0])*(hi[0]-lo[0]) + (hi[1]-lo[1])*(hi[1]-lo[1]) + (hi[2]-lo[2])*(hi[2]-lo[2]))
	}
	return diag(lo0, hi0), diag(lo1, hi1), moved
}

// TestAnimPosesMesh: the an10 agent animations, applied by joint name to
// the ms11 agent's skeleton, move its vertices (up to tens of
// centimetres) and keep its size; the an11 cat animations move the ms13
// cat and, as stored, make it about 100 times larger (their root joint's
// scale is 100 where the mesh's chained bone transforms give 1).
func TestAnimPosesMesh(t *testing.T) {
	dir := assetDir(t)
	if dir == "" {
		t.Skip("../shared/assets/unigine absent")
	}
	cases := []struct {
		mesh, anim string
		scale      float64 // posed size / bind size, roughly
	}{
		{"ms11_mockup_agent.mesh", "an10_mockup_agent_walk.anim", 1},
		{"ms11_mockup_agent.mesh", "an10_mockup_agent_idle.anim", 1},
		{"ms13_kimchi_45ba7bbc757629f72b41fa21ecd35f899996fd2f.mesh", "an11_kimchi_ae4bd81cdeb1828690fd8d5bf26ec9bfeb9188c2.anim", 100},
	}
	for _, c := range cases {
		mb, err := os.ReadFile(filepath.Join(dir, c.mesh))
		if err != nil {
			t.Fatal(err)
		}
		ab, err := os.ReadFile(filepath.Join(dir, c.anim))
		if err != nil {
			t.Fatal(err)
		}
		ms, err := Format{}.Decode(context.Background(), memSource(c.mesh, mb))
		if err != nil {
			t.Fatal(err)
		}
		as, err := AnimFormat{}.Decode(context.Background(), memSource(c.anim, ab))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []int{0, 10} {
			bind, posed, moved := posedBounds(t, ms, as, f)
			t.Logf("%s frame %d: size %.4f, posed %.4f, largest move %.4f", c.anim, f, bind, posed, moved)
			if r := posed / bind; r < 0.8*c.scale || r > 1.25*c.scale || moved < 0.05*bind {
				t.Errorf("%s frame %d: size %.4f, posed %.4f, largest move %.4f", c.anim, f, bind, posed, moved)
			}
		}
	}
}

// TestStreamAnimation: the ms11_skinned fixture's "scene" animation (a
// pose after the bone transforms, as the public arm stores one) becomes a
// glTF animation of that name whose keys are the pose (Y up), header.json
// lists it with its chunk, and a bad record, joint index or value is a
// positioned error naming the animation.
func TestStreamAnimation(t *testing.T) {
	f := ms11SkinnedFile()
	b, err := Encode(f)
	if err != nil {
		t.Fatal(err)
	}
	src := memSource("arm.mesh", b)
	sc, err := Format{}.Decode(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	if len(sc.Animations) != 1 || sc.Animations[0].Name != "scene" || len(sc.Animations[0].Channels) != 3*len(f.Joints) {
		t.Fatalf("animations %+v", sc.Animations)
	}
	a := f.Anims[0]
	offs := a.offsets()
	for k, j := range a.Animated {
		want := trsYUp(a.record(k, offs, identityTransform))
		for _, c := range sc.Animations[0].Channels[3*k : 3*k+3] {
			// Two roots: the synthetic root shifts the joints by one.
			if c.Index != int(j)+1 || len(c.Times) != 1 {
				t.Fatalf("joint %d: channel for node %d with %d keys", j, c.Index, len(c.Times))
			}
			var w []float32
			switch c.Path {
			case decode.PathTranslation:
				w = want.Translation[:]
			case decode.PathRotation:
				w = want.Rotation[:]
			default:
				w = want.Scale[:]
			}
			for i := range w {
				if math.Abs(float64(c.Values[i]-w[i])) > 1e-6 {
					t.Errorf("joint %d %v: %v, want %v", j, c.Path, c.Values, w)
				}
			}
		}
	}
	// The pose is not the bind pose: the child moved 0.25 along X.
	if tr := sc.Animations[0].Channels[3]; tr.Values[0] != f.Bind[1].Position[0]+0.25 {
		t.Errorf("child's translation %v", tr.Values)
	}
	st, err := Format{}.Scan(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	anims, _ := st.Header.Get("animations").([]decode.Fields)
	if len(anims) != 1 || anims[0].Get("name") != "scene" || anims[0].Get("frames") != 1 {
		t.Errorf("header.json animations %v", st.Header.Get("animations"))
	}
	if c, _ := st.Header.Get("counts").(decode.Fields); c.Get("animations") != 1 {
		t.Errorf("counts %v", c)
	}
	if len(st.Chunks) < 2 || st.Chunks[1].Name != "00_header_animations.bin" || st.Chunks[1].Offset != st.Chunks[0].Length {
		t.Errorf("chunks %+v", st.Chunks)
	}

	for name, c := range map[string]struct {
		edit  func(a *Anim)
		field string
	}{
		"flags": {func(a *Anim) { a.Flags[1] = 0xff }, "frame[0].joint[1].flags"},
		"joint": {func(a *Anim) { a.Animated[2] = 7 }, "animated_joint[2]"},
		"value": {func(a *Anim) { a.Values[0] = float32(math.NaN()) }, "frame[0].joint[0]"},
	} {
		g := ms11SkinnedFile()
		c.edit(&g.Anims[0])
		b, err := Encode(g)
		if err != nil {
			t.Fatal(err)
		}
		for _, err := range []error{
			func() error { _, err := Read(context.Background(), memSource("bad.mesh", b)); return err }(),
			func() error { _, err := Format{}.Scan(context.Background(), memSource("bad.mesh", b)); return err }(),
		} {
			var fe *decode.FormatError
			if !errors.As(err, &fe) || fe.Section != "animation 0" || fe.Field != c.field || fe.Offset <= 0 {
				t.Errorf("%s: %v", name, err)
			}
		}
	}
}
