package unigine

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/meshfs/meshfs/decode"
)

// TestFloatArraysKeepNonFinite: position and UV arrays long enough to be
// read over several CPUs keep every value bit for bit, non-finite ones
// included (decode.Scene.Repair deals with those), and end where they
// should.
func TestFloatArraysKeepNonFinite(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	const n = 5 * decode.ParallelGrain
	for _, bad := range [][2]int{{n - 1, -1}, {3, n - 2}, {2*decode.ParallelGrain + 5, 4 * decode.ParallelGrain}} {
		for _, comp := range []int{3, 2} {
			var b []byte
			if comp == 2 {
				b = appendCompact(b, n) // the UV count
			}
			var want []float32
			for i := range n {
				for c := range comp {
					f := float32(i) + float32(c)/4
					if i == bad[0] && c == 1 || i == bad[1] && c == 0 {
						f = float32(math.Inf(1 - 2*(i%2)))
					}
					want = append(want, f)
					b = binary.LittleEndian.AppendUint32(b, math.Float32bits(f))
				}
			}
			r := newMemReader("f", "s", b, 1000)
			var got []float32
			if comp == 3 {
				for _, v := range r.positions("vertices", n) {
					got = append(got, v[:]...)
				}
			} else {
				for _, v := range r.uvs("uv0", n) {
					got = append(got, v[:]...)
				}
			}
			if r.err != nil || !reflect.DeepEqual(got, want) || r.pos != len(b) {
				t.Fatalf("%d components, non-finite at %v: error %v, read to %d of %d, values equal %v",
					comp, bad, r.err, r.pos, len(b), reflect.DeepEqual(got, want))
			}
		}
	}
}

// multiSurface is an ms15 file of k grid surfaces, large enough to be read
// and converted surface by surface on several CPUs.
func multiSurface(k int) *File {
	f := &File{Magic: MagicMS15}
	for i := range k {
		g := withCollision(grid(150+i, 10))
		g.Name = fmt.Sprintf("s%d", i)
		f.Surfaces = append(f.Surfaces, g)
	}
	f.Bounds = fileBounds(f.Surfaces)
	return f
}

// TestSurfacesInParallel: a file of several large surfaces reads and
// converts on 4 CPUs exactly as on 1; with two surfaces broken, the error
// is the first's.
func TestSurfacesInParallel(t *testing.T) {
	b, err := Encode(multiSurface(4))
	if err != nil {
		t.Fatal(err)
	}
	decodeOn := func(procs int, b []byte) (*File, *decode.Scene, error) {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		f, err := Read(context.Background(), memSource("multi.mesh", b))
		if err != nil {
			return nil, nil, err
		}
		sc, err := Scene(f, "multi.mesh", "multi")
		return f, sc, err
	}
	f1, sc1, err := decodeOn(1, b)
	if err != nil {
		t.Fatal(err)
	}
	f4, sc4, err := decodeOn(4, b)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(f1, f4) || !reflect.DeepEqual(sc1, sc4) {
		t.Fatal("1 and 4 CPUs differ")
	}

	// Reading: overwrite the middle of geometry blocks 1 and 3.
	h, err := parseHeader(newFileReader("multi.mesh", "header", bytes.NewReader(b), int64(len(b))))
	if err != nil {
		t.Fatal(err)
	}
	l, err := locate(memSource("multi.mesh", b), h)
	if err != nil {
		t.Fatal(err)
	}
	var packed int64
	for _, g := range l.geom {
		packed += g.packed
	}
	if packed < 1<<20 {
		t.Fatalf("blocks of %d bytes: too small to be read in parallel", packed)
	}
	bad := append([]byte(nil), b...)
	for _, i := range []int{1, 3} {
		g := l.geom[i]
		for k := g.data() + g.packed/2; k < g.data()+g.packed/2+64; k++ {
			bad[k] = 0xff
		}
	}
	for _, procs := range []int{1, 4} {
		if _, _, err := decodeOn(procs, bad); err == nil || !strings.Contains(err.Error(), "surface 1 ") {
			t.Errorf("%d CPUs: error %v, want surface 1's", procs, err)
		}
	}

	// Converting: indices out of range in surfaces 2 and 3 of a read file.
	for _, procs := range []int{1, 4} {
		f := *f1
		f.Surfaces = append([]Surface(nil), f1.Surfaces...)
		for _, i := range []int{2, 3} {
			f.Surfaces[i].CIndices = append([]uint32(nil), f.Surfaces[i].CIndices...)
			f.Surfaces[i].CIndices[7] = 1 << 30
		}
		func() {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			if _, err := Scene(&f, "multi.mesh", "multi"); err == nil || !strings.Contains(err.Error(), "surface 2") {
				t.Errorf("%d CPUs: error %v, want surface 2's", procs, err)
			}
		}()
	}
}
