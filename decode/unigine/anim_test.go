package unigine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/decodetest"
	"github.com/meshfs/meshfs/export/gltf"
)

// animFixtures are the committed animation samples, each built by
// EncodeAnim.
var animFixtures = []struct {
	name  string
	build func() *Anim
}{
	{"an10_wave.anim", an10File},
	{"an11_wave.anim", an11File},
	{"an12_wave.anim", an12File},
	{"an11_bend.anim", an11BendFile},
}

// an11BendFile bends joint "child" of the skinned ms14, ms13 and ms11
// fixtures (one skeleton: root_a, child, root_b) about Z over four frames:
// beside them in testdata/unigine, it is the animation their folders attach
// in NAME.animated.glb.
func an11BendFile() *Anim {
	f := ms14File()
	a := &Anim{Magic: MagicAN11, Joints: f.Joints, Bind: f.Bind, Animated: []int16{1}, Frames: 4}
	for fr := range a.Frames {
		q := quatZ(float64(15 * fr))
		addKey(a, 3, [10]float32{0.5, 0, 0, q[0], q[1], q[2], q[3]})
	}
	return a
}

// animJoints is a chain of three joints along +X with a second root, as
// parent-relative transforms.
func animJoints() ([]Joint, []Transform) {
	id := [4]float32{0, 0, 0, 1}
	one := [3]float32{1, 1, 1}
	return []Joint{{"hip", -1}, {"knee", 0}, {"foot", 1}, {"prop", -1}},
		[]Transform{
			{[3]float32{0, 0, 1}, id, one},
			{[3]float32{0.5, 0, 0}, id, one},
			{[3]float32{0.5, 0, 0}, id, one},
			{[3]float32{2, 0, 0}, quatZ(30), one},
		}
}

// an11File animates the knee and the hip over five frames with every
// flag combination an11 writes: all, position and rotation, rotation
// only, scale only, none.
func an11File() *Anim {
	js, bind := animJoints()
	a := &Anim{Magic: MagicAN11, Joints: js, Bind: bind, Animated: []int16{1, 0}, Frames: 5}
	flags := []uint8{7, 3, 2, 4, 0}
	for f := range a.Frames {
		q := quatZ(float64(20 * f))
		addKey(a, flags[f], [10]float32{0.5, 0, 0, q[0], q[1], q[2], q[3], 1, 1 + 0.1*float32(f), 1}) // knee
		addKey(a, 1, [10]float32{0, 0.1 * float32(f), 1})                                             // hip
	}
	return a
}

// addKey appends a record: its flags and the values of v they call for.
func addKey(a *Anim, flags uint8, v [10]float32) {
	a.Flags = append(a.Flags, flags)
	for c := range v {
		if keyHas(a.Magic, flags, c) {
			a.Values = append(a.Values, v[c])
		}
	}
}

// keyHas reports whether flags store value c of a key.
func keyHas(magic string, flags uint8, c int) bool {
	if magic == MagicAN10 {
		switch {
		case c < 3:
			return flags>>c&1 != 0
		case c < 7:
			return flags&8 != 0
		}
		return flags>>(4+c-7)&1 != 0
	}
	return flags>>[10]int{0, 0, 0, 1, 1, 1, 1, 2, 2, 2}[c]&1 != 0
}

// an12File is an11File as an12: no transforms, a skeleton reference, 24
// frames per second and root motion.
func an12File() *Anim {
	a := an11File()
	a.Magic, a.Bind = MagicAN12, nil
	a.SkeletonGUID, a.SkeletonPath = "0123456789abcdef", "characters/leg.skeleton"
	a.FPS, a.RootMotion = 24, true
	return a
}

// an10File animates the knee's rotation and the hip's height, quantised,
// over four frames: frame 0 has every component, later frames only what
// changes (nothing, in frame 3).
func an10File() *Anim {
	js, bind := animJoints()
	a := &Anim{Magic: MagicAN10, Joints: js, Bind: bind, Names: []string{"wave"}, Animated: []int16{0, 1}, Frames: 4, Mask: 0x7f,
		Bounds: Bounds{Min: [3]float32{1e9, 1e9, 1e9}, Max: [3]float32{-1e9, -1e9, -1e9}, SphereRadius: -1},
		Quant:  AnimQuant{PosMin: [3]float32{-1, -1, 0}, PosRange: [3]float32{2, 2, 2}, ScaleMin: [3]float32{0.5, 0.5, 0.5}, ScaleRange: [3]float32{1, 1, 1}}}
	qp := func(v float32, c int) float32 { return quantize(v, a.Quant.PosMin[c], a.Quant.PosRange[c]) }
	qs := func(v float32, c int) float32 { return quantize(v, a.Quant.ScaleMin[c], a.Quant.ScaleRange[c]) }
	for f := range a.Frames {
		q := quatZ(float64(25 * f))
		var rot [4]float32
		for c := range 4 {
			rot[c] = float32(math.Round(float64(q[c]) * 32767))
		}
		hip := [10]float32{qp(0, 0), qp(0, 1), qp(1+0.1*float32(f), 2), 0, 0, 0, 32767, qs(1, 0), qs(1, 1), qs(1, 2)}
		knee := [10]float32{qp(0.5, 0), qp(0, 1), qp(0, 2), rot[0], rot[1], rot[2], rot[3], qs(1, 0), qs(1, 1), qs(1, 2)}
		switch f {
		case 0:
			addKey(a, 0x7f, hip)
			addKey(a, 0x7f, knee)
		case 3:
			addKey(a, 0, hip)
			addKey(a, 0, knee)
		default:
			addKey(a, 0x04, hip)  // the height only
			addKey(a, 0x08, knee) // the rotation only
		}
	}
	return a
}

// quantize is the u16 an10 stores for v in [lo, lo+rng].
func quantize(v, lo, rng float32) float32 {
	return float32(math.Round(math.Max(0, math.Min(65535, float64((v-lo)/rng*65535)))))
}

func TestFixturesAnim(t *testing.T) {
	for _, fx := range animFixtures {
		b, err := EncodeAnim(fx.build())
		if err != nil {
			t.Fatalf("%s: %v", fx.name, err)
		}
		decodetest.Golden(t, filepath.Join(fixtureDir, fx.name), b, *update, "go test ./decode/unigine -run TestFixtures -update")
	}
}

// TestAnimRoundTrip: each fixture reads back as built, from the encoder
// and from the committed file.
func TestAnimRoundTrip(t *testing.T) {
	for _, fx := range animFixtures {
		want := fx.build()
		b, err := EncodeAnim(want)
		if err != nil {
			t.Fatal(err)
		}
		old, err := os.ReadFile(filepath.Join(fixtureDir, fx.name))
		if err != nil {
			t.Fatal(err)
		}
		for _, bb := range [][]byte{b, old} {
			got, err := ReadAnim(context.Background(), memSource(fx.name, bb))
			if err != nil {
				t.Fatalf("%s: %v", fx.name, err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s: round trip differs:\n got %+v\nwant %+v", fx.name, got, want)
			}
		}
	}
}

// TestAnimTracks: an11 leaves out what its flags clear (defaults), an10
// carries the frame before; dequantised values are within a step.
func TestAnimTracks(t *testing.T) {
	a := an11File()
	knee := a.track(0, a.offsets(), nil)
	if k := knee[3]; k.Position != ([3]float32{}) || k.Rotation != ([4]float32{0, 0, 0, 1}) || k.Scale[1] != 1.3 {
		t.Errorf("an11 frame 3 knee (scale only) %+v", k)
	}
	if knee[4] != identityTransform {
		t.Errorf("an11 frame 4 knee (no flags) %+v", knee[4])
	}
	if hip := a.track(1, a.offsets(), nil); hip[2].Position != ([3]float32{0, 0.2, 1}) || hip[2].Rotation != identityTransform.Rotation {
		t.Errorf("an11 frame 2 hip %+v", hip[2])
	}
	b := an10File()
	hips, knees := b.track(0, b.offsets(), nil), b.track(1, b.offsets(), nil)
	for f := range b.Frames {
		hip, knee := hips[f], knees[f]
		wantZ := 1 + 0.1*float64(min(f, 2))
		if math.Abs(float64(hip.Position[2])-wantZ) > 1e-4 || math.Abs(float64(knee.Position[0])-0.5) > 1e-4 {
			t.Errorf("an10 frame %d: hip %v knee %v", f, hip.Position, knee.Position)
		}
		q := quatZ(float64(25 * min(f, 2)))
		for c := range 4 {
			if math.Abs(float64(knee.Rotation[c]-q[c])) > 1e-4 {
				t.Errorf("an10 frame %d: knee rotation %v, want %v", f, knee.Rotation, q)
				break
			}
		}
		if math.Abs(float64(hip.Scale[0])-1) > 1e-4 {
			t.Errorf("an10 frame %d: hip scale %v", f, hip.Scale)
		}
	}
}

// TestAnimScene: one channel per path and animated joint, on the joint
// of that name (behind the synthetic root of the two roots), times at the
// file's rate, one key for a component that never changes.
func TestAnimScene(t *testing.T) {
	for _, fx := range animFixtures {
		a := fx.build()
		sc, err := AnimScene(a, fx.name, "wave")
		if err != nil {
			t.Fatal(err)
		}
		if sc.Skeleton == nil || len(sc.Skeleton.Joints) != len(a.Joints)+1 {
			t.Fatalf("%s: skeleton %+v", fx.name, sc.Skeleton)
		}
		checkBindMatchesRest(t, sc.Skeleton)
		if len(sc.Animations) != 1 || len(sc.Animations[0].Channels) != 3*len(a.Animated) {
			t.Fatalf("%s: animations %+v", fx.name, sc.Animations)
		}
		for i, ch := range sc.Animations[0].Channels {
			j := a.Animated[i/3]
			if ch.Kind != decode.TargetJoint || sc.Skeleton.Joints[ch.Index].Name != a.Joints[j].Name {
				t.Errorf("%s: channel %d on %d", fx.name, i, ch.Index)
			}
			// All frames at the file's rate, or one key where the
			// component never changes.
			tr := a.track(i/3, a.offsets(), nil)
			changes := false
			for _, x := range tr {
				switch ch.Path {
				case decode.PathTranslation:
					changes = changes || x.Position != tr[0].Position
				case decode.PathRotation:
					changes = changes || x.Rotation != tr[0].Rotation
				default:
					changes = changes || x.Scale != tr[0].Scale
				}
			}
			last := float32(a.Frames-1) / float32(a.Rate())
			if changes && (len(ch.Times) != a.Frames || ch.Times[len(ch.Times)-1] != last) || !changes && !reflect.DeepEqual(ch.Times, []float32{0}) {
				t.Errorf("%s: channel %d (changes %v) times %v", fx.name, i, changes, ch.Times)
			}
		}
	}
	if (an12File()).Rate() != 24 || (an11File()).Rate() != DefaultFPS {
		t.Error("rates")
	}
}

func TestAnimSniff(t *testing.T) {
	cases := []struct {
		name, head string
		want       bool
	}{
		{"walk.anim", "an11\x05", true}, {"Walk.ANIM", "an10", true}, {"walk.anim", "an99", true},
		{"walk.anim", "animVersion 1.1;", false}, {"walk.anim", "an1", false}, {"walk.mesh", "an11", false},
	}
	for _, c := range cases {
		if got := (AnimFormat{}).Sniff(c.name, []byte(c.head)); got != c.want {
			t.Errorf("Sniff(%q, %q) = %v", c.name, c.head, got)
		}
	}
	if (Format{}).Sniff("walk.anim", []byte("an11")) {
		t.Error("the mesh format claims .anim")
	}
	if (AnimFormat{}).StripExt("a.b.anim") != "a.b" {
		t.Error("StripExt")
	}
}

// TestAnimRefusals: hostile headers and records fail with a FormatError
// naming the field.
func TestAnimRefusals(t *testing.T) {
	good, _ := EncodeAnim(an11File())
	cases := []struct {
		name  string
		edit  func(a *Anim)
		field string
	}{
		{"duplicate joint", func(a *Anim) { a.Animated[1] = a.Animated[0] }, "animated_joint[1]"},
		{"joint out of range", func(a *Anim) { a.Animated[1] = 9 }, "animated_joint[1]"},
		{"bad flags", func(a *Anim) { a.Flags[3] |= 0x10 }, "frame[1].joint[1].flags"},
		{"nan", func(a *Anim) { a.Values[0] = float32(math.NaN()) }, "frame[0].joint[0]"},
	}
	for _, c := range cases {
		a := an11File()
		c.edit(a)
		b, err := EncodeAnim(a)
		if err != nil {
			t.Fatal(err)
		}
		_, err = ReadAnim(context.Background(), memSource("x.anim", b))
		var fe *decode.FormatError
		if !errors.As(err, &fe) || fe.Field != c.field {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	// Every truncation fails cleanly, and so does a huge frame count.
	for n := 0; n < len(good); n++ {
		if _, err := ReadAnim(context.Background(), memSource("x.anim", good[:n])); err == nil {
			t.Fatalf("truncated at %d: no error", n)
		}
	}
	huge := append([]byte{}, good...)
	at := strings.Index(string(huge), "\x02\x01\x00\x00\x00") + 5 // animated list, then the frame count
	huge[at] = 0xbf
	huge = append(huge[:at+1], append([]byte{0xff, 0xff, 0x7f}, huge[at+1:]...)...)
	if _, err := ReadAnim(context.Background(), memSource("x.anim", huge)); err == nil {
		t.Error("huge frame count accepted")
	}
}

// TestAnimAssets: every .anim in ../shared/assets/unigine decodes with the
// joint and frame counts of its source, each animated joint's channels
// land on the joint of its name, the an10 files animate the ms11 agent's
// bone names and the an11 kimchi files the ms13 cat's; every fixture and
// asset .glb passes the validator.
func TestAnimAssets(t *testing.T) {
	dir := assetDir(t)
	want := map[string][2]int{ // joints, frames
		"an10_mockup_agent_idle.anim": {53, 56}, "an10_mockup_agent_walk.anim": {53, 26},
		"an11_cppapi218_Fast_Run.anim": {52, 17}, "an11_kimchi_8710874e1a379982533e623b2b47e0dc8a423139.anim": {289, 1},
		"an11_kimchi_ae4bd81cdeb1828690fd8d5bf26ec9bfeb9188c2.anim": {289, 31},
	}
	files := assetAnims(t)
	if len(files) == 0 {
		t.Skip("../shared/assets/unigine absent")
	}
	meshJoints := func(name string) map[string]bool {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		f, err := Read(context.Background(), memSource(name, b))
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]bool{}
		for _, j := range f.Joints {
			m[j.Name] = true
		}
		return m
	}
	agent, cat := meshJoints("ms11_mockup_agent.mesh"), meshJoints("ms13_kimchi_45ba7bbc757629f72b41fa21ecd35f899996fd2f.mesh")
	for _, p := range files {
		name := filepath.Base(p)
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		src := memSource(p, b)
		if _, err := (AnimFormat{}).Scan(context.Background(), src); err != nil {
			t.Errorf("%s: scan: %v", name, err)
		}
		a, err := ReadAnim(context.Background(), src)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if w := want[name]; len(a.Joints) != w[0] || a.Frames != w[1] || len(a.Animated) != len(a.Joints) {
			t.Errorf("%s: %d joints, %d animated, %d frames; want %v", name, len(a.Joints), len(a.Animated), a.Frames, w)
		}
		sc, err := AnimFormat{}.Decode(context.Background(), src)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		chans := sc.Animations[0].Channels
		for i, j := range a.Animated {
			if sc.Skeleton.Joints[chans[3*i].Index].Name != a.Joints[j].Name {
				t.Errorf("%s: channel %d on joint %q", name, 3*i, sc.Skeleton.Joints[chans[3*i].Index].Name)
			}
		}
		var mesh map[string]bool
		switch {
		case strings.HasPrefix(name, "an10_mockup"):
			mesh = agent
		case strings.HasPrefix(name, "an11_kimchi"):
			mesh = cat
		}
		for _, j := range a.Joints {
			if mesh != nil && !mesh[j.Name] {
				t.Errorf("%s: joint %q is not a bone of its mesh", name, j.Name)
			}
		}
	}
}

// TestAnimAllocation: converting a long animation (Scan, Decode and the
// .glb) allocates within the hostile corpus's bound, 32 × the file's size
// + 4 MiB, both when every record is a lone flag byte (the most output per
// input byte the format allows, were every channel written out) and when
// every record holds every value.
func TestAnimAllocation(t *testing.T) {
	for _, flags := range []uint8{0, 7, 1} {
		js := make([]Joint, 100)
		a := &Anim{Magic: MagicAN11, Frames: 3000}
		for i := range js {
			js[i] = Joint{Name: fmt.Sprintf("j%d", i), Parent: int16(i - 1)}
			a.Bind = append(a.Bind, identityTransform)
			a.Animated = append(a.Animated, int16(i))
		}
		a.Joints = js
		for f := range a.Frames {
			for range js {
				q := quatZ(float64(f % 360))
				addKey(a, flags, [10]float32{float32(f), 0, 0, q[0], q[1], q[2], q[3], 1, 1, 1})
			}
		}
		b, err := EncodeAnim(a)
		if err != nil {
			t.Fatal(err)
		}
		src := memSource("long.anim", b)
		var m runtimeMem
		m.start()
		if _, err := (AnimFormat{}).Scan(context.Background(), src); err != nil {
			t.Fatal(err)
		}
		sc, err := AnimFormat{}.Decode(context.Background(), src)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := gltf.Encode(sc); err != nil {
			t.Fatal(err)
		}
		got, limit := m.stop(), uint64(32*len(b)+4<<20)
		t.Logf("flags %d: %d bytes, %d allocated (%.1f×)", flags, len(b), got, float64(got)/float64(len(b)))
		if got > limit {
			t.Errorf("flags %d: %d bytes allocated for a %d-byte file, limit %d", flags, got, len(b), limit)
		}
	}
}
