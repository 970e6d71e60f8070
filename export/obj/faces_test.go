package obj

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
)

// refFaces is writer.faces as first written, number by number with
// strconv: the reference for the line-at-once version.
func refFaces(idx []uint32, nv, nvt, nvn uint64, uv, normal, flip bool) []byte {
	var b []byte
	for t := 0; t+3 <= len(idx); t += 3 {
		b = append(b, 'f')
		tri := [3]uint32{idx[t], idx[t+1], idx[t+2]}
		if flip {
			tri[1], tri[2] = tri[2], tri[1]
		}
		for _, i := range tri {
			b = append(b, ' ')
			b = strconv.AppendUint(b, nv+uint64(i)+1, 10)
			if uv || normal {
				b = append(b, '/')
				if uv {
					b = strconv.AppendUint(b, nvt+uint64(i)+1, 10)
				}
				if normal {
					b = append(b, '/')
					b = strconv.AppendUint(b, nvn+uint64(i)+1, 10)
				}
			}
		}
		b = append(b, '\n')
	}
	return b
}

// TestFaces: every combination of UVs, normals and mirroring, with equal
// and different v/vt/vn offsets, indices of every length up to the
// largest, gives the reference's bytes.
func TestFaces(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	offsets := []uint64{0, 9, 99, 12345, math.MaxUint64 - math.MaxUint32 - 1}
	for trial := range 400 {
		idx := make([]uint32, 3*rng.IntN(20))
		for i := range idx {
			idx[i] = rng.Uint32() >> rng.IntN(33)
		}
		nv := offsets[rng.IntN(len(offsets))]
		nvt, nvn := nv, nv
		if trial%3 == 1 {
			nvt = offsets[rng.IntN(len(offsets))]
		}
		if trial%3 == 2 {
			nvn = offsets[rng.IntN(len(offsets))]
		}
		uv, normal, flip := rng.IntN(2) == 0, rng.IntN(2) == 0, rng.IntN(2) == 0
		var w writer
		w.faces(idx, nv, nvt, nvn, uv, normal, flip)
		if want := refFaces(idx, nv, nvt, nvn, uv, normal, flip); !bytes.Equal(w.b, want) {
			t.Fatalf("faces(%v, %d, %d, %d, %v, %v, %v):\n%s\nwant\n%s", idx, nv, nvt, nvn, uv, normal, flip, w.b, want)
		}
	}
	for _, v := range []uint64{0, 1, 9, 10, 99, 100, 1<<32 - 1, math.MaxUint64} {
		var d [maxDigits]byte
		if got := string(d[:putUint(d[:], v)]); got != strconv.FormatUint(v, 10) {
			t.Errorf("putUint(%d) = %s", v, got)
		}
	}
}
