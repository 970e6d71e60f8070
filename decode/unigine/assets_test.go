package unigine

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/meshfs/meshfs/decode"
)

// TestAssetFiles: every UNIGINE mesh in ../shared/assets/unigine decodes
// and scans; triangles are a third of the coordinate indices; normals agree
// with counter-clockwise faces; the skinned ones have the bone counts their
// source names (the cat 289, the agent 56; several roots get one synthetic
// root) and every vertex of theirs is weighted.
func TestAssetFiles(t *testing.T) {
	files := assetFiles(t)
	if len(files) == 0 {
		t.Skip("../shared/assets/unigine absent")
	}
	bones := map[string]int{"ms13_kimchi_45ba7bbc": 289, "ms11_mockup_agent": 56, "ms11_fpsdemo1_arm": 40}
	for _, p := range files {
		name := filepath.Base(p)
		t.Run(name, func(t *testing.T) {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			src := memSource(p, b)
			if _, err := (Format{}).Scan(context.Background(), src); err != nil {
				t.Fatalf("scan: %v", err)
			}
			sc, err := Format{}.Decode(context.Background(), src)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			f, err := Read(context.Background(), src)
			if err != nil {
				t.Fatal(err)
			}
			var indices int
			for _, s := range f.Surfaces {
				indices += len(s.CIndices)
			}
			if tri := sc.Count().Triangles; tri != indices/3 || tri == 0 {
				t.Errorf("%d triangles for %d coordinate indices", tri, indices)
			}
			var agree, total int
			for _, m := range sc.Meshes {
				for _, prim := range m.Primitives {
					agree, total := faceAgreement(&prim)
					if total == 0 || agree < total*95/100 {
						t.Errorf("%s: %d of %d faces agree with their normals", prim.Name, agree, total)
					}
				}
				for _, prim := range m.Primitives {
					a, n := bitangentAlongV(&prim)
					agree, total = agree+a, total+n
				}
			}
			// Every version's tangent frames give the glTF bitangent
			// (cross(N, T)·w) the direction of increasing v on most faces
			// (all but 2 % in each file but the cat, whose UVs leave most
			// faces out and agree on 71 % of the rest); ms10's sign byte
			// read as w's sign would turn its box's 12 of 12 into 0.
			if total > 0 && 2*agree <= total {
				t.Errorf("%d of %d faces have their bitangent along +v", agree, total)
			}
			want := 0
			for prefix, n := range bones {
				if strings.HasPrefix(name, prefix) {
					want = n
				}
			}
			if len(f.Joints) != want {
				t.Fatalf("%d bones, want %d", len(f.Joints), want)
			}
			if want == 0 {
				if sc.Skeleton != nil {
					t.Errorf("a skeleton without bones")
				}
				return
			}
			roots := 0
			for _, j := range f.Joints {
				if j.Parent < 0 {
					roots++
				}
			}
			if roots > 1 {
				want++ // the synthetic root
			}
			if sc.Skeleton == nil || len(sc.Skeleton.Joints) != want {
				t.Fatalf("skeleton of %d joints, want %d (%d roots)", len(sc.Skeleton.Joints), want, roots)
			}
			checkBindMatchesRest(t, sc.Skeleton)
			for _, m := range sc.Meshes {
				for _, prim := range m.Primitives {
					if len(prim.Joints) != len(prim.Positions) || len(prim.Weights) != len(prim.Positions) {
						t.Errorf("%s: %d joints, %d weights for %d vertices", prim.Name, len(prim.Joints), len(prim.Weights), len(prim.Positions))
					}
				}
			}
		})
	}
}

// TestStreamTail: bytes between a stream's last surface and a final magic
// that ends the file are kept and shown (header.json, chunks/); a stream
// that does not end with its magic, or has bytes after a magic that
// follows its last surface, is still refused.
func TestStreamTail(t *testing.T) {
	f := ms11TailFile()
	b, err := Encode(f)
	if err != nil {
		t.Fatal(err)
	}
	src := memSource("tail.mesh", b)
	st, err := Format{}.Scan(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	if n := st.Header.Get("unknown_tail_bytes"); n != len(f.Tail) {
		t.Errorf("unknown_tail_bytes %v", n)
	}
	last := st.Chunks[len(st.Chunks)-1]
	if got, err := last.Bytes(src.R); err != nil || !strings.HasSuffix(last.Name, "_tail.bin") || string(got) != string(f.Tail) {
		t.Errorf("chunk %s: %q, %v", last.Name, got, err)
	}
	if _, err := (Format{}).Decode(context.Background(), src); err != nil {
		t.Errorf("decode: %v", err)
	}
	plain, _ := Encode(ms11File())
	for name, bad := range map[string][]byte{
		"cut":          b[:len(b)-1],
		"after magic":  append(append([]byte{}, plain...), "junkms11"...),
		"no end magic": append(append([]byte{}, plain[:len(plain)-4]...), "junk"...),
	} {
		if _, err := Read(context.Background(), memSource(name+".mesh", bad)); err == nil {
			t.Errorf("%s: accepted", name)
		}
		if _, err := (Format{}).Scan(context.Background(), memSource(name+".mesh", bad)); err == nil {
			t.Errorf("%s: scan accepted", name)
		}
	}
}

// bitangentAlongV counts the faces whose first corner's glTF bitangent,
// cross(N, T)·w, points the way v grows across the face, out of those with
// UVs that span it.
func bitangentAlongV(p *decode.Primitive) (agree, total int) {
	if len(p.UVs) == 0 || len(p.Tangents) == 0 {
		return 0, 0
	}
	uv := p.UVs[0]
	for k := 0; k+2 < len(p.Indices); k += 3 {
		i0, i1, i2 := p.Indices[k], p.Indices[k+1], p.Indices[k+2]
		e1, e2 := sub(p.Positions[i1], p.Positions[i0]), sub(p.Positions[i2], p.Positions[i0])
		du1, dv1 := uv[i1][0]-uv[i0][0], uv[i1][1]-uv[i0][1]
		du2, dv2 := uv[i2][0]-uv[i0][0], uv[i2][1]-uv[i0][1]
		det := du1*dv2 - du2*dv1
		if det == 0 {
			continue
		}
		var alongV [3]float32
		for c := range 3 {
			alongV[c] = (e2[c]*du1 - e1[c]*du2) / det
		}
		tg := p.Tangents[i0]
		b := cross(p.Normals[i0], [3]float32{tg[0], tg[1], tg[2]})
		total++
		if dot(b, alongV)*tg[3] > 0 {
			agree++
		}
	}
	return agree, total
}

// TestAssetArmPose: the public skinned ms11 arm stores, after its 40 bone
// transforms, the animation its name list names ("scene"): 40 animated
// joints (0 to 39), mask 0x7f, one frame whose records (flags 0x7f) are
// float positions, short rotations and float scales. Read so, 38 of the 40
// positions are the bind transforms' (to the last bits: they were computed
// apart), every rotation is a unit quaternion and every scale 1; the scene has the animation "scene" with a
// channel per joint and path, and header.json lists it.
func TestAssetArmPose(t *testing.T) {
	p := assetFile(t, "ms11_fpsdemo1_arm_skinned.mesh")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	src := memSource(p, b)
	f, err := Read(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Anims) != 1 || len(f.Names) != 1 || f.Names[0] != "scene" {
		t.Fatalf("%d animations for names %q", len(f.Anims), f.Names)
	}
	a := f.Anims[0]
	if a.Frames != 1 || len(a.Animated) != 40 || a.Mask != 0x7f {
		t.Fatalf("%d frames of %d joints, mask %#x", a.Frames, len(a.Animated), a.Mask)
	}
	offs := a.offsets()
	same := 0
	for k, j := range a.Animated {
		if int(j) != k || a.Flags[k] != 0x7f {
			t.Fatalf("record %d: joint %d, flags %#x", k, j, a.Flags[k])
		}
		tr := a.record(k, offs, identityTransform)
		near := true
		for c, v := range tr.Position {
			near = near && math.Abs(float64(v-f.Bind[j].Position[c])) <= 1e-4*max(1, math.Abs(float64(v)))
		}
		if near {
			same++
		}
		q := tr.Rotation
		if n := q[0]*q[0] + q[1]*q[1] + q[2]*q[2] + q[3]*q[3]; math.Abs(float64(n)-1) > 2e-3 {
			t.Errorf("joint %d: rotation %v is not unit", j, q)
		}
		for _, v := range tr.Scale {
			if math.Abs(float64(v)-1) > 1e-4 {
				t.Errorf("joint %d: scale %v", j, tr.Scale)
			}
		}
	}
	if same != 38 {
		t.Errorf("%d of 40 frame positions are the bind's, want 38", same)
	}
	sc, err := Format{}.Decode(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	if len(sc.Animations) != 1 || sc.Animations[0].Name != "scene" || len(sc.Animations[0].Channels) != 3*40 {
		t.Fatalf("animations %d", len(sc.Animations))
	}
	st, err := Format{}.Scan(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	anims, _ := st.Header.Get("animations").([]decode.Fields)
	if len(anims) != 1 || anims[0].Get("name") != "scene" || anims[0].Get("frames") != 1 || anims[0].Get("animated_joint_count") != 40 {
		t.Errorf("header.json animations %v", st.Header.Get("animations"))
	}
}
