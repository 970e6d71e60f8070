package gem

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/meshfs/meshfs/decode"
)

// fixtureVol is a box 4 × 2 × 1 units with two triangles a side, wound as
// the real files are: clockwise seen from outside in GEM's space.
func fixtureVol() *Vol {
	v := &Vol{}
	for i := 0; i < 8; i++ {
		v.Vertices = append(v.Vertices, [3]float32{float32(i&1)*4 - 2, float32(i>>1&1)*2 - 1, float32(i >> 2 & 1)})
	}
	// Counter-clockwise from outside, then reversed.
	quads := [][4]uint16{{0, 2, 3, 1}, {4, 5, 7, 6}, {0, 1, 5, 4}, {2, 6, 7, 3}, {0, 4, 6, 2}, {1, 3, 7, 5}}
	for s, q := range quads {
		v.Indices = append(v.Indices, q[0], q[2], q[1], q[0], q[3], q[2])
		v.Sides = append(v.Sides, byte(s+1), byte(s+1))
	}
	return v
}

// outward counts the triangles of a scene mesh whose counter-clockwise
// normal points away from the vertices' centroid, and the others.
func outward(p decode.Primitive) (out, in int) {
	var c [3]float32
	for _, v := range p.Positions {
		for k := range c {
			c[k] += v[k] / float32(len(p.Positions))
		}
	}
	for f := 0; f+2 < len(p.Indices); f += 3 {
		a, b, d := p.Positions[p.Indices[f]], p.Positions[p.Indices[f+1]], p.Positions[p.Indices[f+2]]
		if dot3(cross3(sub3(b, a), sub3(d, a)), sub3(a, c)) > 0 {
			out++
		} else {
			in++
		}
	}
	return out, in
}

// TestVol: the fixture and every real .vol round-trip through the
// encoder, decode to one mesh facing outward, and their scans cover the
// file.
func TestVol(t *testing.T) {
	files := map[string][]byte{"box.vol": EncodeVol(fixtureVol())}
	if _, ok := realDataOK(t); ok {
		for _, p := range assetFiles(t, ".vol") {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			files[p] = b
		}
	}
	if len(files) < 11 {
		t.Logf("%d .vol files (the Centurion has 10)", len(files))
	}
	for name, b := range files {
		v, err := ParseVol(name, b)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !bytes.Equal(EncodeVol(v), b) {
			t.Errorf("%s: EncodeVol differs from the file", name)
		}
		src := anmSource(name, b)
		head := b[:min(16, len(b))]
		if !(VolFormat{}).Sniff(name, head) {
			t.Errorf("%s: Sniff says no", name)
		}
		st, err := VolFormat{}.Scan(context.Background(), src)
		if err != nil {
			t.Fatal(err)
		}
		var sum int64 = 4
		for _, c := range st.Chunks {
			sum += c.Length
		}
		if sum != int64(len(b)) {
			t.Errorf("%s: chunks cover %d of %d bytes", name, sum, len(b))
		}
		sc, err := VolFormat{}.Decode(context.Background(), src)
		if err != nil {
			t.Fatal(err)
		}
		p := sc.Meshes[0].Primitives[0]
		if out, in := outward(p); in != 0 || out != len(v.Indices)/3 {
			t.Errorf("%s: %d triangles face out, %d in", filepath.Base(name), out, in)
		}
		if p.Positions[0] != [3]float32{v.Vertices[0][0], v.Vertices[0][2], v.Vertices[0][1]} {
			t.Errorf("%s: vertex 0 at %v, stored %v", name, p.Positions[0], v.Vertices[0])
		}
	}
}

// TestFixturesVol checks the committed box.vol against the encoder.
func TestFixturesVol(t *testing.T) {
	decodetestGolden(t, "box.vol", EncodeVol(fixtureVol()))
}
