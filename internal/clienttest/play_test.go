package clienttest

import (
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/meshfs/meshfs/decode"
)

// play is one animation file's .glb played on a skinned mesh's .glb.
type play struct {
	mesh, anim *meshFolder
	keyed      []string // the joints the animation drives, by source name
}

// wantPlays are the pairs of the UNIGINE samples that must be found: the
// agent's an10 walk and idle drive ms11_mockup_agent's skeleton, the
// kimchi cat's an11 clips its ms13 mesh's.
var wantPlays = map[string]string{
	"unigine/an10_mockup_agent_idle.anim":                               "unigine/ms11_mockup_agent.mesh",
	"unigine/an10_mockup_agent_walk.anim":                               "unigine/ms11_mockup_agent.mesh",
	"unigine/an11_kimchi_8710874e1a379982533e623b2b47e0dc8a423139.anim": "unigine/ms13_kimchi_45ba7bbc757629f72b41fa21ecd35f899996fd2f.mesh",
	"unigine/an11_kimchi_ae4bd81cdeb1828690fd8d5bf26ec9bfeb9188c2.anim": "unigine/ms13_kimchi_45ba7bbc757629f72b41fa21ecd35f899996fd2f.mesh",
}

// plays pairs every animation-only file with every skinned mesh of the same
// source folder whose skeleton has each joint the animation drives (the
// rule of decode.Attach).
func plays(folders []*meshFolder, exp map[*meshFolder]*fileExpect) []play {
	var out []play
	for _, a := range folders {
		ea := exp[a]
		if ea == nil || len(ea.scene.Meshes) > 0 || a.glb == "" {
			continue
		}
		keyed, ok := decode.AnimatedJoints(ea.scene)
		if !ok {
			continue
		}
		for _, m := range folders {
			em := exp[m]
			if em == nil || em.scene.Skeleton == nil || len(em.scene.Meshes) == 0 || m.glb == "" ||
				filepath.Dir(m.source) != filepath.Dir(a.source) {
				continue
			}
			has := map[string]bool{}
			for _, b := range em.bones {
				has[b] = true
			}
			all := true
			for _, k := range keyed {
				all = all && has[k]
			}
			if all {
				out = append(out, play{mesh: m, anim: a, keyed: keyed})
			}
		}
	}
	return out
}

// checkPlays imports each NAME.animated.glb in Blender and plays each of
// its actions (the mesh's own, then one per attached file; keyed bones the armature's; two
// frames move bones and the mesh). It also imports each skinned mesh's .glb,
// then its animation's .glb, puts the animation's action on the mesh's armature and
// checks that every bone it keys is a bone of that armature and that
// playing it (its first frame against its middle one; the rest pose against
// the frame of a one-frame animation) moves bones and the mesh.
func checkPlays(t *testing.T, blender string, folders []*meshFolder, exp map[*meshFolder]*fileExpect) {
	ps := plays(folders, exp)
	found := map[string]string{}
	var jobs []blenderJob
	for _, p := range ps {
		found[p.anim.label()] = p.mesh.label()
		jobs = append(jobs, blenderJob{Path: p.mesh.glb, Animation: p.anim.glb})
	}
	// The meshes with their folder's animations attached.
	var own []*meshFolder
	for _, mf := range folders {
		if mf.animated != "" && exp[mf] != nil {
			own = append(own, mf)
			jobs = append(jobs, blenderJob{Path: mf.animated, Play: true})
		}
	}
	mounted := map[string]bool{}
	for _, mf := range folders {
		mounted[mf.root.label] = true
	}
	var want []string
	for a := range wantPlays {
		want = append(want, a)
	}
	sort.Strings(want)
	for _, a := range want {
		if root := strings.SplitN(a, "/", 2)[0]; mounted[root] && found[a] != wantPlays[a] {
			t.Errorf("%s: found to play on %q, want %s", a, found[a], wantPlays[a])
		}
	}
	if len(jobs) == 0 {
		t.Log("no animation file beside a skinned mesh whose skeleton it drives")
		return
	}
	if len(ps) > 0 && len(own) == 0 {
		t.Errorf("%d animation files drive meshes of their folder, but no folder shows NAME.animated.glb", len(ps))
	}
	reports := runBlender(t, blender, jobs)
	for i, r := range reports[len(ps):] {
		mf := own[i]
		label := mf.label() + "/" + filepath.Base(mf.animated)
		if r.Error != "" {
			t.Errorf("%s: Blender could not import or play it:\n%s", label, r.Error)
			continue
		}
		// The mesh's own animations (a UNIGINE stream's, File.Anims) come
		// first, then one per attached file.
		if want := len(exp[mf].animations) + len(mf.anims); len(r.Played) != want {
			t.Errorf("%s: %d actions, want the mesh's own %q and one per attached file %q", label, len(r.Played), exp[mf].animations, mf.anims)
		}
		if len(r.Armatures) != 1 {
			t.Errorf("%s: %d armatures, want 1", label, len(r.Armatures))
		} else if d := diffNames(r.Armatures[0].Bones, exp[mf].bones); d != "" {
			t.Errorf("%s: armature bones differ from the skeleton's joints: %s", label, d)
		}
		for _, pl := range r.Played {
			switch {
			case len(pl.KeyedBones) == 0:
				t.Errorf("%s: action %q keys no bone", label, pl.Action)
			case len(pl.MissingBones) > 0:
				t.Errorf("%s: action %q keys bones the armature lacks: %q", label, pl.Action, pl.MissingBones)
			case pl.BonesMoved == 0 || pl.MeshMoved < 1e-6:
				t.Errorf("%s: action %q moves %d bones and the mesh by %.3g between frames %v", label, pl.Action, pl.BonesMoved, pl.MeshMoved, pl.Frames)
			}
			t.Logf("%s: action %q keys %d bones; frames %v move %d bones and the mesh by up to %.3g",
				label, pl.Action, len(pl.KeyedBones), pl.Frames, pl.BonesMoved, pl.MeshMoved)
		}
	}
	for i, r := range reports[:len(ps)] {
		p := ps[i]
		label := p.anim.label() + " on " + p.mesh.label()
		if r.Error != "" {
			t.Errorf("%s: Blender could not play it:\n%s", label, r.Error)
			continue
		}
		if len(r.Played) == 0 {
			t.Errorf("%s: importing the animation made no action", label)
		}
		for _, pl := range r.Played {
			keyed := map[string]bool{}
			for _, k := range pl.KeyedBones {
				keyed[k] = true
			}
			for _, k := range p.keyed {
				if !keyed[blenderName(k)] {
					t.Errorf("%s: action %q keys no bone %q, which the animation drives", label, pl.Action, k)
				}
			}
			switch {
			case len(pl.MissingBones) > 0:
				t.Errorf("%s: action %q keys bones the mesh's armature lacks: %q", label, pl.Action, pl.MissingBones)
			case pl.BonesMoved == 0:
				t.Errorf("%s: action %q moves no bone between frames %v", label, pl.Action, pl.Frames)
			case pl.MeshMoved < 1e-6:
				t.Errorf("%s: action %q moves bones but not the mesh between frames %v", label, pl.Action, pl.Frames)
			}
			t.Logf("%s: action %q keys %d bones; frames %v move %d bones and the mesh by up to %.3g",
				label, pl.Action, len(pl.KeyedBones), pl.Frames, pl.BonesMoved, pl.MeshMoved)
		}
	}
}
