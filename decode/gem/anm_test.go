package gem

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/export/gltf"
)

func anmSource(name string, b []byte) *decode.Source {
	return &decode.Source{Name: name, R: bytes.NewReader(b), Size: int64(len(b))}
}

// clearOffsets drops what the parser notes of where frames were.
func clearOffsets(a *Anm) *Anm {
	for i := range a.Frames {
		a.Frames[i].Offset = 0
	}
	return a
}

// TestRealAnm decodes every GEM .anm of ../shared/assets: the encoder
// writes each back byte for byte, the header's counts match the file
// (SOURCE.txt's frame counts and bone names), and the scene has a joint
// per bone and one animation as long as FRMS says.
func TestRealAnm(t *testing.T) {
	frames := map[string]uint32{"start.anm": 67, "stop.anm": 85, "fire.anm": 51, "fire_mgun.anm": 9, "hit.anm": 51,
		"open.anm": 11, "dismounting_bmd4.anm": 49, "embarkation_bmd4.anm": 69}
	for _, p := range assetFiles(t, ".anm") {
		t.Run(filepath.Base(p), func(t *testing.T) {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if !(AnmFormat{}).Sniff(p, b[:16]) {
				t.Fatal("Sniff says no")
			}
			a, err := ParseAnm(p, b)
			if err != nil {
				t.Fatal(err)
			}
			again, err := EncodeAnm(a)
			if err != nil || !bytes.Equal(again, b) {
				t.Fatalf("EncodeAnm gives %d bytes (%v), the file has %d", len(again), err, len(b))
			}
			// The counts SOURCE.txt gives are of the Centurion's and the
			// pilot's sequences; any other file needs one frame at least.
			w, ok := frames[filepath.Base(p)]
			if !ok || !strings.Contains(p, "/gem-centurion/") && !strings.Contains(p, "/gem-pilot/") {
				w, ok = a.FrameCount, a.FrameCount > 0
			}
			if !ok || a.FrameCount != w || a.Version != 0x00060000 {
				t.Errorf("FRMS %d, version 0x%x; want %d, 0x00060000", a.FrameCount, a.Version, w)
			}
			src := anmSource(p, b)
			st, err := AnmFormat{}.Scan(context.Background(), src)
			if err != nil {
				t.Fatal(err)
			}
			var sum int64
			for _, c := range st.Chunks {
				sum += c.Length
			}
			if sum != int64(len(b))-8 {
				t.Errorf("chunks cover %d of the %d bytes after the magic and version", sum, len(b)-8)
			}
			sc, err := AnmFormat{}.Decode(context.Background(), src)
			if err != nil {
				t.Fatal(err)
			}
			if sc.Skeleton == nil || len(sc.Skeleton.Joints) != len(a.Bones) || st.Header.Get("bone_count") != len(a.Bones) {
				t.Fatalf("skeleton of %v for %d bones", sc.Skeleton, len(a.Bones))
			}
			if len(sc.Animations) != 1 {
				t.Fatalf("%d animations", len(sc.Animations))
			}
			end := float32(0)
			for _, c := range sc.Animations[0].Channels {
				if c.Kind != decode.TargetJoint || c.Index >= len(a.Bones) {
					t.Errorf("channel %+v", c)
				}
				end = max(end, c.Times[len(c.Times)-1])
			}
			if want := float32(float64(a.FrameCount-1) / FrameRate); math.Abs(float64(end-want)) > 1e-5 {
				t.Errorf("animation ends at %v s, FRMS says %v s", end, want)
			}
		})
	}
}

// TestAnmMatchesModel: the pilot's animation starts at the model's rest
// pose, so each joint's rest (the first key, converted) must equal the
// model's node of that name: rotations, translations in metres, and the
// mirrored bones' frames (flag 0x04: foot1l, ik_chain03, ik_chain04).
func TestAnmMatchesModel(t *testing.T) {
	m, _ := realModel(t, "cw_rus_combez.mdl")
	nodes := map[string]decode.Mat4{}
	for _, n := range m.LODs[0].Nodes {
		nodes[n.Name] = n.Matrix
	}
	var path string
	for _, p := range assetFiles(t, ".anm") {
		if strings.HasSuffix(p, "embarkation_bmd4.anm") {
			path = p
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sc, err := AnmFormat{}.Decode(context.Background(), anmSource(path, b))
	if err != nil {
		t.Fatal(err)
	}
	matched := 0
	for _, j := range sc.Skeleton.Joints {
		want, ok := nodes[j.Name]
		if !ok {
			continue
		}
		got := j.Rest.Matrix()
		for k := range got {
			if math.Abs(got[k]-want[k]) > 2e-3 {
				if j.Name == "body" || j.Name == "foot1l" || j.Name == "foot2l" || j.Name == "ik_chain03" {
					t.Errorf("%s: rest %v, model %v", j.Name, got, want)
				}
				goto next
			}
		}
		matched++
	next:
	}
	t.Logf("%d of %d joints start at the model's rest", matched, len(sc.Skeleton.Joints))
	if matched < 15 {
		t.Errorf("only %d joints match the model's rest", matched)
	}
}

// TestAnmFixtures decodes the fixtures: they round-trip through the
// encoder, and the scene holds the keyed frames only, at 30 per second,
// converted to the scene's axes and metres.
func TestAnmFixtures(t *testing.T) {
	for _, a := range []*Anm{fixtureAnm(), fixtureLegacyAnm()} {
		b, err := EncodeAnm(a)
		if err != nil {
			t.Fatal(err)
		}
		back, err := ParseAnm("f.anm", b)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(clearOffsets(back), a) {
			t.Errorf("round trip:\n%+v\n%+v", back, a)
		}
	}
	sc, err := AnmScene(fixtureAnm(), "f.anm", "gun_fire")
	if err != nil {
		t.Fatal(err)
	}
	chans := map[string]decode.Channel{}
	for _, c := range sc.Animations[0].Channels {
		chans[sc.Skeleton.Joints[c.Index].Name+" "+string(c.Path)] = c
	}
	h := float32(math.Sqrt(0.5))
	for key, want := range map[string]decode.Channel{
		"gun translation":    {Times: []float32{0, 1.0 / 3}, Values: []float32{1.3, 0.4, 0, 1, 0.4, 0}},
		"gun rotation":       {Times: []float32{0, 1.0 / 6, 1.0 / 3}, Values: []float32{0, 0, 0, 1, 0, -h, 0, h, 0, -1, 0, 0}},
		"wheell translation": {Times: []float32{0, 1.0 / 3}, Values: []float32{0.5, -0.1, 1.3, 0.5, -0.1, 1.3}},
		"wheell rotation":    {Times: []float32{0, 1.0 / 3}, Values: []float32{-h, 0, 0, h, 0, 0, -h, h}},
		"wheell scale":       {Times: []float32{0, 1.0 / 3}, Values: []float32{1, -3, 2, 1, -3, 2}},
	} {
		got, ok := chans[key]
		if !ok {
			t.Errorf("no %s channel", key)
			continue
		}
		if len(got.Times) != len(want.Times) || len(got.Values) != len(want.Values) || got.Step {
			t.Errorf("%s: %v %v, want %v %v", key, got.Times, got.Values, want.Times, want.Values)
			continue
		}
		for i := range got.Times {
			if math.Abs(float64(got.Times[i]-want.Times[i])) > 1e-6 {
				t.Errorf("%s: times %v, want %v", key, got.Times, want.Times)
			}
		}
		for i := range got.Values {
			if math.Abs(float64(got.Values[i]-want.Values[i])) > 1e-6 {
				t.Errorf("%s: values %v, want %v", key, got.Values, want.Values)
				break
			}
		}
	}
	if len(chans) != 5 {
		t.Errorf("channels %v", chans)
	}
	if r := sc.Skeleton.Joints[1].Rest; r.Scale != [3]float32{1, -3, 2} || r.Translation != [3]float32{0.5, -0.1, 1.3} {
		t.Errorf("wheell rest %+v", r)
	}
	// Frames past the last key still count: FRMS sets the length.
	long := fixtureAnm()
	long.FrameCount = 31
	sc, err = AnmScene(long, "f.anm", "long")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range sc.Animations[0].Channels {
		n := len(c.Times)
		w := len(c.Values) / n
		if c.Times[n-1] != 1 || n < 2 || !reflect.DeepEqual(c.Values[len(c.Values)-w:], c.Values[len(c.Values)-2*w:len(c.Values)-w]) {
			t.Errorf("channel %+v: want its last value held to 1 s", c)
		}
	}
	// FRMN: a mirrored matrix becomes a rotation after a mirror of Z.
	sc, err = AnmScene(fixtureLegacyAnm(), "l.anm", "turret")
	if err != nil {
		t.Fatal(err)
	}
	if r := sc.Skeleton.Joints[1].Rest; r.Scale != [3]float32{1, -1, 1} || r.Rotation != [4]float32{0, 0, 0, 1} {
		t.Errorf("hatch rest %+v", r)
	}
	if r := sc.Skeleton.Joints[0].Rest.Matrix(); math.Abs(r[12]-0.475) > 1e-6 || math.Abs(r[13]-0.5) > 1e-6 {
		t.Errorf("turret rest %v", r)
	}
}

// TestQuatConversion: the stored rotation's rows (GEM's row vectors)
// conjugated by the axis swap equal the matrix of the converted
// quaternion.
func TestQuatConversion(t *testing.T) {
	for _, v := range [][3]float32{{0.1, 0.2, 0.3}, {-0.5, 0.5, -0.5}, {0, 0, 0.9}, {0.7, 0, 0}} {
		q := gemQuat(v)
		want := gemFrame{Rows: quatRows(q)}.sceneMatrix(1)
		s := sceneQuat(q)
		got := decode.TRS{Rotation: [4]float32{float32(s[0]), float32(s[1]), float32(s[2]), float32(s[3])}, Scale: [3]float32{1, 1, 1}}.Matrix()
		for k := range got {
			if math.Abs(got[k]-want[k]) > 1e-6 {
				t.Fatalf("%v: %v, want %v", v, got, want)
			}
		}
		back := rowsQuat(quatRows(q))
		for k := range back {
			if math.Abs(back[k]-q[k]) > 1e-6 {
				t.Fatalf("rowsQuat(quatRows(%v)) = %v", q, back)
			}
		}
	}
}

// TestAnmErrors: broken files fail with FormatErrors that name the place.
func TestAnmErrors(t *testing.T) {
	good, _ := EncodeAnm(fixtureAnm())
	bmap := bytes.Index(good, []byte("BMAP"))
	for _, c := range []struct {
		name string
		b    []byte
		want string
	}{
		{"magic", []byte("XANM\x00\x00\x06\x00"), "not EANM"},
		{"section", append([]byte("EANM\x00\x00\x06\x00"), "WHAT1234"...), "unknown section"},
		{"frame tag", append(append([]byte(nil), good...), "FRM3"...), "unknown frame tag"},
		{"bone count", append(append(append([]byte(nil), good[:bmap+4]...), 0xff, 0xff, 0xff, 0x0f), good[bmap+8:]...), "cannot fit"},
		{"truncated", good[:len(good)-3], "bytes needed"},
	} {
		_, err := ParseAnm(c.name, c.b)
		var fe *decode.FormatError
		if err == nil || !errors.As(err, &fe) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	a := fixtureAnm()
	a.Frames[1].Number = 0
	if _, err := AnmScene(a, "f.anm", "x"); err == nil || !strings.Contains(err.Error(), "does not follow") {
		t.Errorf("frames out of order: %v", err)
	}
	a = fixtureAnm()
	a.Frames[0].Keys[1].Bone = 0
	if _, err := AnmScene(a, "f.anm", "x"); err == nil || !strings.Contains(err.Error(), "twice") {
		t.Errorf("a bone keyed twice: %v", err)
	}
}

// TestTruncations: every prefix of the fixtures and of the real files
// scans and decodes without a panic, and fails, if at all, with a
// FormatError.
func TestTruncations(t *testing.T) {
	files := modelFixtures(t)
	files["box.vol"] = EncodeVol(fixtureVol())
	for _, ext := range []string{".anm", ".mdl", ".vol"} {
		if _, ok := realDataOK(t); ok {
			for _, p := range assetFiles(t, ext) {
				b, err := os.ReadFile(p)
				if err != nil {
					t.Fatal(err)
				}
				files[p] = b
			}
		}
	}
	for name, b := range files {
		var f decode.Format = AnmFormat{}
		switch filepath.Ext(name) {
		case ".mdl":
			f = Mdl{}
		case ".vol":
			f = VolFormat{}
		}
		step := max(1, len(b)/600)
		for n := 0; n <= len(b); n += step {
			src := anmSource(name, b[:n])
			for _, err := range []error{scanErr(f, src), decodeErr(f, src)} {
				var fe *decode.FormatError
				if err != nil && !errors.As(err, &fe) {
					t.Fatalf("%s cut at %d: %v is not a FormatError", name, n, err)
				}
			}
		}
	}
}

// realDataOK reports whether ../shared/assets is there (t may be nil).
func realDataOK(t testing.TB) (string, bool) {
	dir := filepath.Join("..", "..", "..", "shared", "assets")
	_, err := os.Stat(dir)
	return dir, err == nil
}

func scanErr(f decode.Format, src *decode.Source) error {
	_, err := f.Scan(context.Background(), src)
	return err
}

func decodeErr(f decode.Format, src *decode.Source) error {
	_, err := f.Decode(context.Background(), src)
	if md, ok := f.(decode.ModelDecoder); ok && err == nil {
		_, err = md.DecodeModel(context.Background(), src)
	}
	return err
}

// TestAnmGLTF exports the .anm and .vol fixtures and real files, and the
// .mdl skeletons Decode gives, with the .glb exporter, and runs the Khronos
// validator over them: 0 errors each.
func TestAnmGLTF(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	export := func(name string, f decode.Format, b []byte) {
		sc, err := f.Decode(context.Background(), anmSource(name, b))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		glb, err := gltf.Encode(sc)
		if err != nil {
			t.Fatalf("%s: gltf.Encode: %v", name, err)
		}
		p := filepath.Join(dir, filepath.Base(name)+".glb")
		if err := os.WriteFile(p, glb, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	export("box.vol", VolFormat{}, EncodeVol(fixtureVol()))
	for name, b := range modelFixtures(t) {
		if strings.HasSuffix(name, ".anm") {
			export(name, AnmFormat{}, b)
		} else {
			export(name, Mdl{}, b)
		}
	}
	if _, ok := realDataOK(t); ok {
		for _, p := range assetFiles(t, ".anm") {
			b, _ := os.ReadFile(p)
			export(p, AnmFormat{}, b)
		}
		for _, p := range assetFiles(t, ".mdl") {
			b, _ := os.ReadFile(p)
			export(p, Mdl{}, b)
		}
		for _, p := range assetFiles(t, ".vol") {
			b, _ := os.ReadFile(p)
			export(p, VolFormat{}, b)
		}
	}
	validateFiles(t, paths)
}
