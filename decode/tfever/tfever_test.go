package tfever

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/decodetest"
	"github.com/meshfs/meshfs/decode/tfever/luasandbox"
)

func TestSniff(t *testing.T) {
	for _, c := range []struct {
		f    decode.Format
		name string
		head string
		want bool
	}{
		{Msh{}, "a.msh", "function data()\n", true},
		{Msh{}, "A.MSH", "-- comment\r\nfunc", true},
		{Msh{}, "a.msh", "\x00\x01binary mesh", false},
		{Msh{}, "a.msh.blob", "function data()\n", false},
		{Msh{}, "a.ani", "function data()\n", false},
		{Ani{}, "walk.ani", "function data()\n", true},
		{Ani{}, "walk.ani", "\x89PNG", false},
	} {
		if got := c.f.Sniff(c.name, []byte(c.head)); got != c.want {
			t.Errorf("%s.Sniff(%q, %q) = %v", c.f.Name(), c.name, c.head, got)
		}
	}
	if got := (Msh{}).StripExt("a.b.msh"); got != "a.b" {
		t.Errorf("StripExt %q", got)
	}
	if got := (Ani{}).StripExt("walk.ani"); got != "walk" {
		t.Errorf("StripExt %q", got)
	}
	exists := func(names ...string) func(string) bool {
		return func(n string) bool {
			for _, x := range names {
				if x == n {
					return true
				}
			}
			return false
		}
	}
	if !(Msh{}).IsCompanion("a.msh.blob", exists("a.msh", "a.msh.blob")) {
		t.Error("a.msh.blob beside a.msh is not a companion")
	}
	if (Msh{}).IsCompanion("a.msh.blob", exists("a.msh.blob")) {
		t.Error("a lone a.msh.blob is a companion")
	}
	if (Msh{}).IsCompanion("a.msh", exists("a.msh", "a.msh.blob")) {
		t.Error("a.msh is a companion")
	}
}

// checkAgainstSpec asserts that every corner of every submesh of the decoded
// scene carries the values the encoder was given for it (converted to Y up).
func checkAgainstSpec(t *testing.T, m *EncMesh, s *decode.Scene) {
	t.Helper()
	if len(s.Meshes) != 1 || len(s.Meshes[0].Primitives) != len(m.SubMeshes) {
		t.Fatalf("scene has %d meshes", len(s.Meshes))
	}
	attr := map[string]EncAttr{}
	for _, a := range m.Attrs {
		attr[a.Name] = a
	}
	item := func(name string, i uint32) []float32 {
		a := attr[name]
		return a.Data[int(i)*a.NumComp : int(i+1)*a.NumComp]
	}
	for si, sm := range m.SubMeshes {
		p := s.Meshes[0].Primitives[si]
		pl := sm.Indices["position"]
		if len(p.Indices) != len(pl) || len(p.Indices)/3 != len(pl)/3 {
			t.Fatalf("submesh %d: %d indices, want %d (%d triangles)", si, len(p.Indices), len(pl), len(pl)/3)
		}
		for c := range pl {
			v := p.Indices[c]
			x := item("position", pl[c])
			if p.Positions[v] != decode.ZUpToYUp([3]float32{x[0], x[1], x[2]}) {
				t.Fatalf("submesh %d corner %d: position %v, want %v", si, c, p.Positions[v], x)
			}
			x = item("normal", sm.Indices["normal"][c])
			if p.Normals[v] != decode.ZUpToYUp([3]float32{x[0], x[1], x[2]}) {
				t.Fatalf("submesh %d corner %d: normal %v, want %v", si, c, p.Normals[v], x)
			}
			x = item("tangent", sm.Indices["tangent"][c])
			y := decode.ZUpToYUp([3]float32{x[0], x[1], x[2]})
			if p.Tangents[v] != [4]float32{y[0], y[1], y[2], x[3]} {
				t.Fatalf("submesh %d corner %d: tangent %v, want %v", si, c, p.Tangents[v], x)
			}
			for k, set := range []string{"uv0", "uv1"} {
				x = item(set, sm.Indices[set][c])
				if p.UVs[k][v] != [2]float32{x[0], x[1]} {
					t.Fatalf("submesh %d corner %d: %s %v, want %v", si, c, set, p.UVs[k][v], x)
				}
			}
			if l, ok := sm.Indices["color0"]; ok {
				x = item("color0", l[c])
				if p.Colors[0][v] != [4]float32{x[0], x[1], x[2], x[3]} {
					t.Fatalf("submesh %d corner %d: color %v, want %v", si, c, p.Colors[0][v], x)
				}
			}
		}
		// Vertices are exactly the distinct index tuples.
		tuples := map[[6]uint32]bool{}
		for c := range pl {
			var k [6]uint32
			for j, n := range []string{"position", "normal", "tangent", "uv0", "uv1", "color0"} {
				if l, ok := sm.Indices[n]; ok {
					k[j] = l[c]
				}
			}
			tuples[k] = true
		}
		if len(p.Positions) != len(tuples) {
			t.Errorf("submesh %d: %d vertices for %d distinct index tuples", si, len(p.Positions), len(tuples))
		}
	}
}

func TestRoundTrip(t *testing.T) {
	for name, m := range map[string]*EncMesh{"tf2": tf2Cube(), "trainfever": trainFeverDoor()} {
		t.Run(name, func(t *testing.T) {
			s, st := decodeMsh(t, m)
			checkAgainstSpec(t, m, s)
			checkWinding(t, s)
			// Scan reports the layout the encoder wrote.
			subs := st.Header.Get("subMeshes").([]decode.Fields)
			for si, sm := range m.SubMeshes {
				if got := subs[si].Get("triangles"); got != int64(len(sm.Indices["position"])/3) {
					t.Errorf("submesh %d: header triangles %v", si, got)
				}
			}
			// The same mesh in natural blob order decodes to the same scene.
			m2 := *m
			m2.Shuffle = 0
			s2, _ := decodeMsh(t, &m2)
			if !sceneEqual(s, s2) {
				t.Error("the blob's region order changed the scene")
			}
		})
	}
}

func sceneEqual(a, b *decode.Scene) bool {
	if len(a.Meshes) != len(b.Meshes) || len(a.Materials) != len(b.Materials) || len(a.Animations) != len(b.Animations) {
		return false
	}
	for i := range a.Meshes {
		pa, pb := a.Meshes[i].Primitives, b.Meshes[i].Primitives
		if len(pa) != len(pb) {
			return false
		}
		for j := range pa {
			if len(pa[j].Positions) != len(pb[j].Positions) || len(pa[j].Indices) != len(pb[j].Indices) {
				return false
			}
			for k := range pa[j].Positions {
				if pa[j].Positions[k] != pb[j].Positions[k] || pa[j].Normals[k] != pb[j].Normals[k] {
					return false
				}
			}
			for k := range pa[j].Indices {
				if pa[j].Indices[k] != pb[j].Indices[k] {
					return false
				}
			}
		}
	}
	return true
}

// checkWinding asserts that every non-degenerate triangle's
// counter-clockwise face normal agrees with its vertex normals.
func checkWinding(t *testing.T, s *decode.Scene) {
	t.Helper()
	for _, m := range s.Meshes {
		for pi, p := range m.Primitives {
			if p.Normals == nil {
				continue
			}
			bad, n := 0, 0
			for i := 0; i+2 < len(p.Indices); i += 3 {
				a, b, c := p.Positions[p.Indices[i]], p.Positions[p.Indices[i+1]], p.Positions[p.Indices[i+2]]
				e1 := [3]float64{float64(b[0] - a[0]), float64(b[1] - a[1]), float64(b[2] - a[2])}
				e2 := [3]float64{float64(c[0] - a[0]), float64(c[1] - a[1]), float64(c[2] - a[2])}
				f := [3]float64{e1[1]*e2[2] - e1[2]*e2[1], e1[2]*e2[0] - e1[0]*e2[2], e1[0]*e2[1] - e1[1]*e2[0]}
				if math.Sqrt(f[0]*f[0]+f[1]*f[1]+f[2]*f[2]) < 1e-9 {
					continue
				}
				var d float64
				for _, v := range p.Indices[i : i+3] {
					nv := p.Normals[v]
					d += f[0]*float64(nv[0]) + f[1]*float64(nv[1]) + f[2]*float64(nv[2])
				}
				n++
				if d <= 0 {
					bad++
				}
			}
			if bad > 0 {
				t.Errorf("%s primitive %d: %d of %d triangles wind against their normals", m.Name, pi, bad, n)
			}
		}
	}
}

func TestMaterials(t *testing.T) {
	s, _ := decodeMsh(t, trainFeverDoor())
	want := []string{"vehicle/train/door.mtl", "vehicle/train/frame.mtl", "vehicle/train/door.mtl"}
	for i, p := range s.Meshes[0].Primitives {
		if p.Material < 0 || s.Materials[p.Material].Name != want[i] {
			t.Errorf("submesh %d: material %d", i, p.Material)
		}
	}
	if len(s.Materials) != 2 {
		t.Errorf("%d materials, want 2 (shared by name)", len(s.Materials))
	}
	s, _ = decodeMsh(t, tf2Cube())
	for i, p := range s.Meshes[0].Primitives {
		if p.Material != -1 {
			t.Errorf("TF2 submesh %d has material %d", i, p.Material)
		}
	}
}

// rotZYX builds Rz·Ry·Rx from degrees with plain matrices, independently of
// the decoder's quaternions.
func rotZYX(rot [3]float64) [3][3]float64 {
	rad := func(d float64) (float64, float64) { return math.Cos(d * math.Pi / 180), math.Sin(d * math.Pi / 180) }
	cz, sz := rad(rot[0])
	cy, sy := rad(rot[1])
	cx, sx := rad(rot[2])
	rz := [3][3]float64{{cz, -sz, 0}, {sz, cz, 0}, {0, 0, 1}}
	ry := [3][3]float64{{cy, 0, sy}, {0, 1, 0}, {-sy, 0, cy}}
	rx := [3][3]float64{{1, 0, 0}, {0, cx, -sx}, {0, sx, cx}}
	return matMul(rz, matMul(ry, rx))
}

func matMul(a, b [3][3]float64) [3][3]float64 {
	var c [3][3]float64
	for i := 0; i < 3; i++ {
		for j := 0; j < 3; j++ {
			for k := 0; k < 3; k++ {
				c[i][j] += a[i][k] * b[k][j]
			}
		}
	}
	return c
}

func apply(m [3][3]float64, v [3]float64) [3]float64 {
	return [3]float64{
		m[0][0]*v[0] + m[0][1]*v[1] + m[0][2]*v[2],
		m[1][0]*v[0] + m[1][1]*v[1] + m[1][2]*v[2],
		m[2][0]*v[0] + m[2][1]*v[1] + m[2][2]*v[2],
	}
}

// trsApply applies a glTF node's translation, rotation and scale to v.
func trsApply(t [3]float64, q [4]float64, s [3]float64, v [3]float64) [3]float64 {
	v = [3]float64{v[0] * s[0], v[1] * s[1], v[2] * s[2]}
	r := quat(q).rotate(v)
	return [3]float64{r[0] + t[0], r[1] + t[1], r[2] + t[2]}
}

func near(a, b [3]float64, tol float64) bool {
	for i := range a {
		if math.Abs(a[i]-b[i]) > tol {
			return false
		}
	}
	return true
}

// sample is one key of a decoded channel set: time, translation, rotation, scale.
type sample struct {
	time float64
	t    [3]float64
	q    [4]float64
	s    [3]float64
}

func samples(t *testing.T, a decode.Animation) []sample {
	t.Helper()
	var out []sample
	for _, c := range a.Channels {
		for i, tm := range c.Times {
			if len(out) <= i {
				out = append(out, sample{time: float64(tm), s: [3]float64{1, 1, 1}, q: [4]float64{0, 0, 0, 1}})
			}
			if float64(tm) != out[i].time {
				t.Fatalf("channels of %s have different times", a.Name)
			}
			switch c.Path {
			case decode.PathTranslation:
				out[i].t = [3]float64{float64(c.Values[3*i]), float64(c.Values[3*i+1]), float64(c.Values[3*i+2])}
			case decode.PathScale:
				out[i].s = [3]float64{float64(c.Values[3*i]), float64(c.Values[3*i+1]), float64(c.Values[3*i+2])}
			case decode.PathRotation:
				out[i].q = [4]float64{float64(c.Values[4*i]), float64(c.Values[4*i+1]), float64(c.Values[4*i+2]), float64(c.Values[4*i+3])}
			}
		}
	}
	return out
}

// TestKeyframeTransforms checks that at every key the node's transform moves
// points where the source's keyframe does: v' = R(v − origin) + origin +
// transl in Z up, seen in Y up.
func TestKeyframeTransforms(t *testing.T) {
	m := trainFeverDoor()
	s, _ := decodeMsh(t, m)
	checkKeyframes(t, m, s.Animations)
}

func checkKeyframes(t *testing.T, m *EncMesh, anims []decode.Animation) {
	t.Helper()
	if len(anims) != len(m.Animations) {
		t.Fatalf("%d animations, want %d", len(anims), len(m.Animations))
	}
	probes := [][3]float64{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {0.3, -0.7, 2}}
	for ai, src := range m.Animations {
		a := anims[ai]
		if a.Name != src.Name {
			t.Errorf("animation %d is %q, want %q", ai, a.Name, src.Name)
		}
		for _, c := range a.Channels {
			if c.Kind != decode.TargetMesh || c.Index != 0 {
				t.Errorf("%s: channel targets %v %d", a.Name, c.Kind, c.Index)
			}
		}
		ss := samples(t, a)
		if len(ss) != len(src.Keyframes) {
			t.Fatalf("%s: %d keys, want %d", a.Name, len(ss), len(src.Keyframes))
		}
		for ki, k := range src.Keyframes {
			if math.Abs(ss[ki].time-k.TimeMs/1000) > 1e-6 {
				t.Errorf("%s key %d: time %v s, want %v ms", a.Name, ki, ss[ki].time, k.TimeMs)
			}
			r := rotZYX(k.Rot)
			for _, v := range probes {
				d := apply(r, [3]float64{v[0] - src.Origin[0], v[1] - src.Origin[1], v[2] - src.Origin[2]})
				want := zUpToYUp64([3]float64{d[0] + src.Origin[0] + k.Transl[0], d[1] + src.Origin[1] + k.Transl[1], d[2] + src.Origin[2] + k.Transl[2]})
				got := trsApply(ss[ki].t, ss[ki].q, ss[ki].s, zUpToYUp64(v))
				if !near(got, want, 1e-5) {
					t.Errorf("%s key %d: point %v goes to %v, want %v", a.Name, ki, v, got, want)
				}
			}
		}
	}
}

func decodeAni(t *testing.T) *decode.Scene {
	t.Helper()
	times, ms := aniTrack()
	src := memSource("walk.ani", map[string][]byte{"walk.ani": EncodeAni(times, ms)})
	s, err := Ani{}.Decode(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestAniTransforms checks that the node's TRS at every key maps points as
// the file's matrix does, in Y up.
func TestAniTransforms(t *testing.T) {
	s := decodeAni(t)
	checkAni(t, s.Animations)
	if len(s.Meshes) != 1 || len(s.Meshes[0].Primitives) != 0 || s.Meshes[0].Name != "walk" {
		t.Errorf("ani scene meshes: %+v", s.Meshes)
	}
	times, _ := aniTrack()
	st, err := Ani{}.Scan(context.Background(), memSource("walk.ani", map[string][]byte{"walk.ani": EncodeAni(aniTrack())}))
	if err != nil {
		t.Fatal(err)
	}
	if st.Header.Get("matrixCount") != len(times) || st.Header.Get("durationMs") != times[len(times)-1] {
		t.Errorf("header %v", st.Header)
	}
}

func checkAni(t *testing.T, anims []decode.Animation) {
	t.Helper()
	times, ms := aniTrack()
	if len(anims) != 1 {
		t.Fatalf("%d animations", len(anims))
	}
	ss := samples(t, anims[0])
	if len(ss) != len(times) {
		t.Fatalf("%d keys, want %d", len(ss), len(times))
	}
	for i, m := range ms {
		if math.Abs(ss[i].time-times[i]/1000) > 1e-6 {
			t.Errorf("key %d: time %v", i, ss[i].time)
		}
		for _, v := range [][3]float64{{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {0, 0, 1}, {0.3, -0.7, 2}} {
			w := [3]float64{
				m[0]*v[0] + m[4]*v[1] + m[8]*v[2] + m[12],
				m[1]*v[0] + m[5]*v[1] + m[9]*v[2] + m[13],
				m[2]*v[0] + m[6]*v[1] + m[10]*v[2] + m[14],
			}
			got := trsApply(ss[i].t, ss[i].q, ss[i].s, zUpToYUp64(v))
			if want := zUpToYUp64(w); !near(got, want, 1e-5) {
				t.Errorf("key %d: point %v goes to %v, want %v", i, v, got, want)
			}
		}
	}
}

// realDir is ../shared/realdata/transport-fever (decodetest.NeedRealData:
// absent, the test fails under CI and skips elsewhere).
func realDir(t *testing.T) string {
	return decodetest.NeedRealData(t, "transport-fever")
}

// TestRealFiles decodes every real pair: triangles per submesh equal the
// position index count / 3, windings agree with normals, and the chunks
// reproduce the blob's regions.
func TestRealFiles(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(realDir(t), "*.msh"))
	if err != nil {
		t.Fatal(err)
	}
	if len(files) == 0 {
		t.Fatal("no .msh in the real data folder")
	}
	for _, p := range files {
		t.Run(filepath.Base(p), func(t *testing.T) {
			src := fileSource(t, p)
			st, err := Msh{}.Scan(context.Background(), src)
			if err != nil {
				t.Fatalf("scan: %v", err)
			}
			s, err := Msh{}.Decode(context.Background(), src)
			if err != nil {
				t.Fatalf("decode: %v", err)
			}
			blob, err := os.ReadFile(p + ".blob")
			if err != nil {
				t.Fatal(err)
			}
			subs := st.Header.Get("subMeshes").([]decode.Fields)
			if len(subs) != len(s.Meshes[0].Primitives) {
				t.Fatalf("%d submeshes in the header, %d primitives", len(subs), len(s.Meshes[0].Primitives))
			}
			for si, sub := range subs {
				var posCount int64 = -1
				for _, l := range sub.Get("indices").([]decode.Fields) {
					if l.Get("name") == "position" {
						posCount = l.Get("count").(int64)
					}
				}
				if got := len(s.Meshes[0].Primitives[si].Indices) / 3; int64(got) != posCount/4/3 {
					t.Errorf("submesh %d: %d triangles, position list has %d bytes", si, got, posCount)
				}
			}
			checkWinding(t, s)
			covered := 0
			for _, c := range st.Chunks {
				b, err := c.Bytes(src.R)
				if err != nil {
					t.Fatalf("chunk %s: %v", c.Name, err)
				}
				if c.Name == "data.lua" {
					continue
				}
				covered += len(b)
				if string(b) != string(blob[c.Offset:c.Offset+c.Length]) {
					t.Errorf("chunk %s differs from the blob's bytes", c.Name)
				}
			}
			// FORMATS.md: the regions cover the blob exactly once.
			if covered != len(blob) {
				t.Errorf("chunks cover %d of the blob's %d bytes", covered, len(blob))
			}
		})
	}
}

// TestBadLayouts breaks one thing at a time and checks the error names the
// file, section, field and offset.
func TestBadLayouts(t *testing.T) {
	script, blob, err := EncodeMsh(tf2Cube())
	if err != nil {
		t.Fatal(err)
	}
	sub := func(old, new string) []byte {
		s := string(script)
		if !strings.Contains(s, old) {
			t.Fatalf("fixture script lacks %q", old)
		}
		return []byte(strings.Replace(s, old, new, 1))
	}
	// Region lines as the encoder writes them, found by parsing the script.
	src := memSource("m.msh", map[string][]byte{"m.msh": script, "m.msh.blob": blob})
	_, m, err := Msh{}.load(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	uv0 := m.attr("uv0")
	nrm := m.SubMeshes[1].index("normal")
	pos := m.SubMeshes[0].index("position")
	badIndex := append([]byte(nil), blob...)
	badIndex[pos.Offset+4*5] = 200 // corner 5 of submesh 0 → position 200
	for _, c := range []struct {
		name           string
		script, blob   []byte
		file, section  string
		field          string
		offset         int64
		msg            string
		wantTruncation bool
	}{
		{"missing blob", script, nil, "m.msh.blob", "blob", "", 0, "cannot open", false},
		{"region past the end", sub("count = 32,\n\t\t\tnumComp = 2,", "count = 4096,\n\t\t\tnumComp = 2,"), blob,
			"m.msh.blob", "vertexAttr.uv0", "offset", uv0.Offset, "runs past", true},
		{"count not a multiple", sub("count = 32,\n\t\t\tnumComp = 2,", "count = 30,\n\t\t\tnumComp = 2,"), blob,
			"m.msh.blob", "vertexAttr.uv0", "count", uv0.Offset, "multiple", false},
		{"unequal lists", []byte(strings.Replace(string(script), "count = 48,\n\t\t\t\t\toffset = "+itoa(nrm.Offset), "count = 24,\n\t\t\t\t\toffset = "+itoa(nrm.Offset), 1)), blob,
			"m.msh.blob", "submesh 1 indices.normal", "count", nrm.Offset, "equal lengths", false},
		{"index out of range", script, badIndex,
			"m.msh.blob", "submesh 0 indices.position", "index[5]", pos.Offset + 20, "out of range", false},
		{"no data()", []byte("x = 1"), blob, "m.msh", "data.lua", "data()", 0, "no function data()", false},
		{"not a number", sub("numComp = 2,", "numComp = \"two\","), blob, "m.msh", "data()", "vertexAttr.uv0.numComp", 0, "want a number", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			files := map[string][]byte{"m.msh": c.script}
			if c.blob != nil {
				files["m.msh.blob"] = c.blob
			}
			src := memSource("m.msh", files)
			_, err := Msh{}.Decode(context.Background(), src)
			var fe *decode.FormatError
			if !errors.As(err, &fe) {
				t.Fatalf("err %v is not a FormatError", err)
			}
			if filepath.Base(fe.File) != c.file || fe.Section != c.section || fe.Field != c.field || fe.Offset != c.offset ||
				!strings.Contains(err.Error(), c.msg) {
				t.Errorf("err %q: file %s section %q field %q offset %d; want %s %q %q %d %q",
					err, fe.File, fe.Section, fe.Field, fe.Offset, c.file, c.section, c.field, c.offset, c.msg)
			}
			if c.wantTruncation != errors.Is(err, decode.ErrTruncated) {
				t.Errorf("errors.Is(ErrTruncated) = %v", !c.wantTruncation)
			}
			// Scan still reports the script's tables when it can run.
			st, _ := Msh{}.Scan(context.Background(), src)
			if st == nil || st.Header.Get("scriptBytes") == nil {
				t.Errorf("scan returned no header")
			}
		})
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestHostileScript checks that a hostile .msh fails as a FormatError that
// wraps decode.ErrLimit, through the format's configurable limits.
func TestHostileScript(t *testing.T) {
	f := Msh{Limits: luasandbox.Limits{MaxInstructions: 10000}}
	src := memSource("m.msh", map[string][]byte{"m.msh": []byte("function data() while true do end end")})
	_, err := f.Decode(context.Background(), src)
	var fe *decode.FormatError
	if !errors.As(err, &fe) || fe.Section != "data.lua" || !errors.Is(err, decode.ErrLimit) || !errors.Is(err, luasandbox.ErrLimit) {
		t.Fatalf("err %v", err)
	}
	src = memSource("m.msh", map[string][]byte{"m.msh": []byte(`function data() os.execute("true") end`)})
	if _, err := f.Scan(context.Background(), src); !errors.Is(err, luasandbox.ErrScript) || !strings.Contains(err.Error(), "not available") {
		t.Fatalf("err %v", err)
	}
}

// TestReusedRegions checks that a short script cannot make a small blob
// decode into far more output by naming one index list many times.
func TestReusedRegions(t *testing.T) {
	var b strings.Builder
	b.WriteString("function data() return { vertexAttr = { position = { count = 36, numComp = 3, offset = 0 } }, subMeshes = {")
	for i := 0; i < 20; i++ {
		b.WriteString("{ indices = { position = { count = 12, offset = 36 } } },")
	}
	b.WriteString("} } end")
	blob := make([]byte, 48)
	blob[36+4], blob[36+8] = 1, 2 // triangle 0 1 2
	src := memSource("m.msh", map[string][]byte{"m.msh": []byte(b.String()), "m.msh.blob": blob})
	_, err := Msh{}.Decode(context.Background(), src)
	var fe *decode.FormatError
	if !errors.As(err, &fe) || !errors.Is(err, decode.ErrLimit) || fe.Section != "subMeshes" || !strings.Contains(err.Error(), "reused") {
		t.Fatalf("err %v", err)
	}
	// Four uses fit the bound and decode.
	src = memSource("m.msh", map[string][]byte{"m.msh": []byte(strings.Replace(b.String(), strings.Repeat("{ indices = { position = { count = 12, offset = 36 } } },", 16), "", 1)), "m.msh.blob": blob})
	s, err := Msh{}.Decode(context.Background(), src)
	if err != nil || len(s.Meshes[0].Primitives) != 4 {
		t.Fatalf("4 submeshes: %v", err)
	}
}

func TestChunkNames(t *testing.T) {
	// Two long names alike in the bytes SafeName keeps must stay apart
	// after it (found by export/outputs/hostile): convert and the mount name
	// chunk files by decode.SafeName(Name).
	long := strings.Repeat("L", 200)
	script := `function data() return { vertexAttr = {
		position = { count = 12, numComp = 3, offset = 0 },
		["a/b"] = { count = 4, numComp = 1, offset = 12 },
		["a_b"] = { count = 4, numComp = 1, offset = 16 },
		["` + long + `1"] = { count = 4, numComp = 1, offset = 12 },
		["` + long + `2"] = { count = 4, numComp = 1, offset = 16 },
	}, subMeshes = {} } end`
	src := memSource("m.msh", map[string][]byte{"m.msh": []byte(script), "m.msh.blob": make([]byte, 20)})
	st, err := Msh{}.Scan(context.Background(), src)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, c := range st.Chunks {
		if seen[c.Name] || c.Name != decode.SafeName(c.Name) {
			t.Errorf("chunk name %q repeated or unsafe", c.Name)
		}
		seen[c.Name] = true
	}
	if len(st.Chunks) != 6 {
		t.Errorf("%d chunks", len(st.Chunks))
	}
}

// TestKeyframeLimit: a short script cannot loop out keyframes without end
// (found by export/outputs/hostile: 100 000 keys of a 4 KiB script made
// 840 MiB of allocations downstream).
func TestKeyframeLimit(t *testing.T) {
	script := func(n int) string {
		return fmt.Sprintf(`function data() return { vertexAttr = {
		position = { count = 36, numComp = 3, offset = 0 },
	}, subMeshes = { { indices = { position = { count = 12, offset = 36 } } } },
	animations = { a = { type = "KEYFRAME", params = { keyframes = (function()
		local t = {} for i = 1, %d do t[i] = { time = i, rot = {0, 0, 0}, transl = {0, 0, 0} } end return t
	end)() } } } } end`, n)
	}
	blob := make([]byte, 48)
	blob[36+4], blob[36+8] = 1, 2
	for _, n := range []int{MaxKeyframes, MaxKeyframes + 1} {
		src := memSource("m.msh", map[string][]byte{"m.msh": []byte(script(n)), "m.msh.blob": blob})
		_, err := Msh{}.Decode(context.Background(), src)
		if n <= MaxKeyframes && err != nil {
			t.Errorf("%d keyframes: %v", n, err)
		}
		if n > MaxKeyframes && (!errors.Is(err, decode.ErrLimit) || !strings.Contains(err.Error(), "keyframes")) {
			t.Errorf("%d keyframes: err %v, want the keyframe limit", n, err)
		}
	}
}

// TestRegionLimit: nor can it loop out attributes (found by
// export/outputs/hostile: 100 000 made 240 MiB of allocations downstream).
func TestRegionLimit(t *testing.T) {
	script := func(n int) string {
		return fmt.Sprintf(`function data() return { vertexAttr = (function()
		local t = { position = { count = 36, numComp = 3, offset = 0 } }
		for i = 2, %d do t["a" .. i] = { count = 4, numComp = 1, offset = 0 } end return t
	end)(), subMeshes = { { indices = { position = { count = 12, offset = 36 } } } } } end`, n)
	}
	blob := make([]byte, 48)
	blob[36+4], blob[36+8] = 1, 2
	for _, n := range []int{MaxRegions - 1, MaxRegions + 1} {
		src := memSource("m.msh", map[string][]byte{"m.msh": []byte(script(n)), "m.msh.blob": blob})
		_, err := Msh{}.Scan(context.Background(), src)
		if n < MaxRegions && err != nil {
			t.Errorf("%d attributes: %v", n, err)
		}
		if n > MaxRegions && (!errors.Is(err, decode.ErrLimit) || !strings.Contains(err.Error(), "attributes and index lists")) {
			t.Errorf("%d attributes: err %v, want the region limit", n, err)
		}
	}
}
