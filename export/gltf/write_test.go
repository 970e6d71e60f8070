package gltf

import (
	"bytes"
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/meshfs/meshfs/decode"
)

// TestWritersFallback: each writer gives the same bytes through its view
// of the chunk (aligned destination) as through its per-component
// fallback (a destination one byte off, as a big-endian host would get
// for every destination), for data full of NaN, ±Inf, −0 and values out
// of range; and those bytes are the little-endian encoding of what the
// scalar helpers (fin, unit3, clamp01, the tangent w rule) say.
func TestWritersFallback(t *testing.T) {
	r := rand.New(rand.NewPCG(9, 10))
	f := func() float32 {
		switch r.IntN(8) {
		case 0:
			return float32(math.NaN())
		case 1:
			return float32(math.Inf(1 - 2*r.IntN(2)))
		case 2:
			return float32(math.Copysign(0, -1))
		case 3:
			return 1
		}
		return float32(r.NormFloat64() * 3)
	}
	const n = 1001
	v2, v3, v4 := make([][2]float32, n), make([][3]float32, n), make([][4]float32, n)
	idx := make([]uint32, n)
	for i := range n {
		v2[i] = [2]float32{f(), f()}
		v3[i] = [3]float32{f(), f(), f()}
		v4[i] = [4]float32{f(), f(), f(), f()}
		idx[i] = r.Uint32()
	}
	le := func(vals ...float32) []byte {
		var out []byte
		for _, v := range vals {
			out = append(out, 0, 0, 0, 0)
			putF(out[len(out)-4:], v)
		}
		return out
	}
	var want2, want3, wantU, want4, wantT, want16, want32 []byte
	var maxIdx uint32
	for i := range n {
		maxIdx = max(maxIdx, idx[i])
		want2 = append(want2, le(fin(v2[i][0]), fin(v2[i][1]))...)
		want3 = append(want3, le(fin(v3[i][0]), fin(v3[i][1]), fin(v3[i][2]))...)
		u := unit3(v3[i])
		wantU = append(wantU, le(u[0], u[1], u[2])...)
		want4 = append(want4, le(clamp01(v4[i][0]), clamp01(v4[i][1]), clamp01(v4[i][2]), clamp01(v4[i][3]))...)
		t := unit3([3]float32{v4[i][0], v4[i][1], v4[i][2]})
		sign := float32(1)
		if v4[i][3] < 0 {
			sign = -1
		}
		wantT = append(wantT, le(t[0], t[1], t[2], sign)...)
		want16 = append(want16, byte(idx[i]), byte(idx[i]>>8))
		want32 = append(want32, byte(idx[i]), byte(idx[i]>>8), byte(idx[i]>>16), byte(idx[i]>>24))
	}
	for _, c := range []struct {
		name  string
		size  int
		write func([]byte)
		want  []byte
	}{
		{"finite2", 8, func(d []byte) { writeFinite2(d, v2) }, want2},
		{"finite3", 12, func(d []byte) { writeFinite3(d, v3) }, want3},
		{"unit3", 12, func(d []byte) { writeUnit3(d, v3) }, wantU},
		{"clamped4", 16, func(d []byte) { writeClamped4(d, v4) }, want4},
		{"tangents", 16, func(d []byte) { writeTangents(d, v4) }, wantT},
		{"indices16", 2, func(d []byte) {
			if m := writeIndices16(d, idx); m != maxIdx {
				t.Errorf("writeIndices16 returned largest index %d, want %d", m, maxIdx)
			}
		}, want16},
		{"indices32", 4, func(d []byte) {
			if m := writeIndices32(d, idx); m != maxIdx {
				t.Errorf("writeIndices32 returned largest index %d, want %d", m, maxIdx)
			}
		}, want32},
	} {
		for _, shift := range []int{0, 1} {
			buf := make([]byte, c.size*n+8)
			d := buf[shift : shift+c.size*n]
			if shift == 0 && hostLE && view[uint16](d, 1) == nil {
				t.Fatalf("%s: no view of an aligned destination on a little-endian host", c.name)
			}
			if shift == 1 && view[uint32](d, 1) != nil {
				t.Fatalf("%s: a view of a destination one byte off", c.name)
			}
			c.write(d)
			if !bytes.Equal(d, c.want) {
				t.Errorf("%s, destination offset %d: bytes differ from the scalar encoding", c.name, shift)
			}
		}
	}
}

// oldUnit3 is unit3 as it was before the writers inlined its test: the
// bytes of every normal and tangent must stay what it gave.
func oldUnit3(v [3]float32) [3]float32 {
	l2 := float64(v[0])*float64(v[0]) + float64(v[1])*float64(v[1]) + float64(v[2])*float64(v[2])
	if l2 >= 1-4e-6 && l2 <= 1+4e-6 {
		return v
	}
	return decode.Normalize3(v)
}

// TestUnitFastPath: normals and tangents that are unit length, or just
// inside or just outside unit3's window (|v|² within 4e-6 of 1), or not
// unit at all, or zero, NaN or infinite, are written bit for bit as the
// old per-vector unit3 wrote them, through the view and the fallback.
func TestUnitFastPath(t *testing.T) {
	r := rand.New(rand.NewPCG(13, 14))
	const n = 20000
	v3, v4 := make([][3]float32, n), make([][4]float32, n)
	for i := range n {
		d := [3]float64{r.NormFloat64(), r.NormFloat64(), r.NormFloat64()}
		l := math.Sqrt(d[0]*d[0] + d[1]*d[1] + d[2]*d[2])
		// Scale so that |v|² lands at 1, near the window's edges
		// (1 ± 4e-6, where the float32 rounding decides) or far out.
		var s float64
		switch r.IntN(6) {
		case 0:
			s = 1
		case 1:
			s = math.Sqrt(1 + 4e-6*(1+(r.Float64()-0.5)*1e-3))
		case 2:
			s = math.Sqrt(1 - 4e-6*(1+(r.Float64()-0.5)*1e-3))
		case 3:
			s = math.Sqrt(1 + (r.Float64()*2-1)*1e-5)
		case 4:
			s = r.Float64() * 3
		case 5:
			s = []float64{0, math.NaN(), math.Inf(1), 1e-30}[r.IntN(4)]
		}
		for c := range 3 {
			v3[i][c] = float32(d[c] / l * s)
		}
		v4[i] = [4]float32{v3[i][0], v3[i][1], v3[i][2], []float32{1, -1, 0, float32(math.Copysign(0, -1)), float32(math.NaN()), 0.5, -3}[r.IntN(7)]}
	}
	var wantU, wantT []byte
	var inside int
	for i := range n {
		u := oldUnit3(v3[i])
		if u == v3[i] {
			inside++
		}
		for _, x := range u {
			wantU = binary.LittleEndian.AppendUint32(wantU, math.Float32bits(x))
		}
		tu := oldUnit3([3]float32(v4[i][:3]))
		tw := float32(1)
		if v4[i][3] < 0 {
			tw = -1
		}
		for _, x := range [4]float32{tu[0], tu[1], tu[2], tw} {
			wantT = binary.LittleEndian.AppendUint32(wantT, math.Float32bits(x))
		}
	}
	if inside < n/3 || inside > n*3/4 {
		t.Fatalf("%d of %d vectors kept as they are: the data do not test both sides of the window", inside, n)
	}
	for _, shift := range []int{0, 1} {
		buf := make([]byte, 16*n+8)
		d := buf[shift : shift+12*n]
		writeUnit3(d, v3)
		if !bytes.Equal(d, wantU) {
			t.Errorf("normals, destination offset %d: bytes differ from the old unit3's", shift)
		}
		d = buf[shift : shift+16*n]
		writeTangents(d, v4)
		if !bytes.Equal(d, wantT) {
			t.Errorf("tangents, destination offset %d: bytes differ from the old unit3's", shift)
		}
	}
}

// TestMaxIndexSerial: the four-chain maximum, and the index writers'
// maxima, are the plain one for every length around the unrolled steps,
// wherever the largest value sits, through the view and the fallback.
func TestMaxIndexSerial(t *testing.T) {
	r := rand.New(rand.NewPCG(15, 16))
	for n := range 40 {
		for at := range n {
			idx := make([]uint32, n)
			for i := range idx {
				idx[i] = r.Uint32N(1000)
			}
			idx[at] = 5000 + uint32(at)
			if got := maxIndexSerial(idx); got != idx[at] {
				t.Fatalf("n %d, largest at %d: got %d, want %d", n, at, got, idx[at])
			}
			for _, shift := range []int{0, 1} {
				buf := make([]byte, 4*n+8)
				if got := writeIndices16(buf[shift:shift+2*n], idx); got != idx[at] {
					t.Fatalf("writeIndices16, n %d, largest at %d, offset %d: got %d, want %d", n, at, shift, got, idx[at])
				}
				if got := writeIndices32(buf[shift:shift+4*n], idx); got != idx[at] {
					t.Fatalf("writeIndices32, n %d, largest at %d, offset %d: got %d, want %d", n, at, shift, got, idx[at])
				}
			}
		}
	}
	if got := maxIndexSerial(nil); got != 0 {
		t.Fatalf("empty list: %d", got)
	}
}

// TestClampedFastPath: colours in [0, 1] (copied as bits) and out of it
// (through clamp01) give clamp01's bytes, −0 becoming +0.
func TestClampedFastPath(t *testing.T) {
	vals := []float32{0, float32(math.Copysign(0, -1)), 1, math.Nextafter32(1, 2), math.Nextafter32(0, 1), 0.5,
		-0.5, 2, float32(math.NaN()), -float32(math.NaN()), float32(math.Inf(1)), float32(math.Inf(-1))}
	var vs [][4]float32
	var want []byte
	for i := range vals {
		for j := range vals {
			v := [4]float32{vals[i], vals[j], vals[(i+j)%len(vals)], vals[(i*j)%len(vals)]}
			vs = append(vs, v)
			for _, x := range v {
				want = binary.LittleEndian.AppendUint32(want, math.Float32bits(clamp01(x)))
			}
		}
	}
	d := make([]byte, 16*len(vs))
	writeClamped4(d, vs)
	if !bytes.Equal(d, want) {
		t.Fatal("bytes differ from clamp01's")
	}
}

// BenchmarkWriteIndices32 writes 3 M indices (a million triangles) into a
// fresh output in the ranges runJobs gives one task, taking their maximum.
func BenchmarkWriteIndices32(b *testing.B) {
	const n = 3 << 20
	src := make([]uint32, n)
	for i := range src {
		src[i] = uint32(i * 7 % 500000)
	}
	b.SetBytes(4 * n)
	b.ReportAllocs()
	for b.Loop() {
		w := newOutput(4 * n)
		var m uint32
		for lo := 0; lo < n; lo += chunkElems {
			hi := min(lo+chunkElems, n)
			m = max(m, writeIndices32(w[4*lo:4*hi], src[lo:hi]))
		}
		if m != 499999 {
			b.Fatal(m)
		}
	}
}

// unitNormals returns n random unit vectors, as decoders hand them over.
func unitNormals(n int) [][3]float32 {
	r := rand.New(rand.NewPCG(19, 20))
	vs := make([][3]float32, n)
	for i := range vs {
		vs[i] = decode.Normalize3([3]float32{float32(r.NormFloat64()), float32(r.NormFloat64()), float32(r.NormFloat64())})
	}
	return vs
}

// BenchmarkWriteUnit3 writes the normals of a million-triangle mesh
// (501 264 unit vectors) into a fresh output in runJobs' task ranges.
func BenchmarkWriteUnit3(b *testing.B) {
	vs := unitNormals(501264)
	b.SetBytes(int64(12 * len(vs)))
	b.ReportAllocs()
	for b.Loop() {
		w := newOutput(12 * len(vs))
		for lo := 0; lo < len(vs); lo += chunkElems {
			hi := min(lo+chunkElems, len(vs))
			writeUnit3(w[12*lo:12*hi], vs[lo:hi])
		}
	}
}

// TestSurelyUnitImpliesWindow: whenever the float32 prefilter keeps a
// vector, unit3's float64 window keeps it too, for a million vectors whose
// float32 squared length lies at the prefilter's edges (where its rounding
// matters) or in between; and the prefilter keeps most exactly
// normalised vectors, or it would save nothing.
func TestSurelyUnitImpliesWindow(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	kept, unitKept := 0, 0
	const n = 1000000
	for i := range n {
		d := [3]float64{r.NormFloat64(), r.NormFloat64(), r.NormFloat64()}
		if i%4 == 0 { // axis-heavy vectors, as flat surfaces give
			d[r.IntN(3)] *= 1e3
		}
		l := math.Sqrt(d[0]*d[0] + d[1]*d[1] + d[2]*d[2])
		s := 1.0
		if i%2 == 1 {
			s = math.Sqrt(1 + float64(1-2*r.IntN(2))*3.5e-6*(1+(r.Float64()-0.5)*0.6))
		}
		x, y, z := float32(d[0]/l*s), float32(d[1]/l*s), float32(d[2]/l*s)
		if !surelyUnit(x*x + y*y + z*z) {
			continue
		}
		kept++
		if i%2 == 0 {
			unitKept++
		}
		if l2 := float64(x)*float64(x) + float64(y)*float64(y) + float64(z)*float64(z); !unitWindow(l2) {
			t.Fatalf("(%v, %v, %v): prefilter keeps it, window (|v|² = %v) does not", x, y, z, l2)
		}
	}
	if unitKept < n/2*99/100 {
		t.Fatalf("prefilter keeps only %d of %d normalised vectors", unitKept, n/2)
	}
	if kept == unitKept {
		t.Fatal("no vector at the prefilter's edges was kept: the edges are not tested")
	}
}

// TestCheckThenCopy: finiteWords and writeClamped4 copy ranges that need
// no repair and repair the others, giving fin's and clamp01's bits either
// way: for every length up to 40 words, at both alignments of the source,
// with one bad word at each position or none.
func TestCheckThenCopy(t *testing.T) {
	bad := []uint32{0x7f800000, 0xff800000, 0x7fc00001, 0xffffffff, 0x7f800001}
	for n := range 41 {
		for at := -1; at < n; at++ {
			backing := make([]uint32, n+1)
			for shift := range 2 {
				src := backing[shift : shift+n]
				for i := range src {
					src[i] = math.Float32bits(float32(i) / 64) // finite, in [0, 1)
				}
				if at >= 0 {
					src[at] = bad[(n+at)%len(bad)]
				}
				w := make([]uint32, n)
				finiteWords(w, src)
				for i, x := range src {
					if want := math.Float32bits(fin(math.Float32frombits(x))); w[i] != want {
						t.Fatalf("finiteWords, %d words from offset %d, bad at %d: word %d = %#x, want %#x", n, shift, at, i, w[i], want)
					}
				}
				if n%4 != 0 {
					continue
				}
				vs := make([][4]float32, n/4)
				for i := range vs {
					for c := range 4 {
						vs[i][c] = math.Float32frombits(src[4*i+c])
					}
				}
				if at >= 0 && at%3 == 1 {
					vs[at/4][at%4] = 1.5 // finite but out of range
				}
				d := make([]byte, 4*n)
				writeClamped4(d, vs)
				for i, v := range vs {
					for c := range 4 {
						got := binary.LittleEndian.Uint32(d[16*i+4*c:])
						if want := math.Float32bits(clamp01(v[c])); got != want {
							t.Fatalf("writeClamped4, %d colours, bad at %d: component %d.%d = %#x, want %#x", n/4, at, i, c, got, want)
						}
					}
				}
			}
		}
	}
}
