package unigine

import (
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"strings"
	"testing"

	"github.com/meshfs/meshfs/decode"
)

// TestFloatArraysFirstBad: position and UV arrays long enough to be read
// over several CPUs, with non-finite values at two places, fail at the
// first of them: its offset, its number in the message, as one pass would.
func TestFloatArraysFirstBad(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(4))
	const n = 5 * decode.ParallelGrain
	for _, bad := range [][2]int{{n - 1, -1}, {3, n - 2}, {2*decode.ParallelGrain + 5, 4 * decode.ParallelGrain}, {decode.ParallelGrain, decode.ParallelGrain + 1}} {
		for _, kind := range []struct {
			name string
			comp int
		}{{"positions", 3}, {"uv0", 2}} {
			var b []byte
			if kind.comp == 2 {
				b = appendCompact(b, n) // the UV count
			}
			head := len(b)
			for i := range n {
				for c := range kind.comp {
					f := float32(i) + float32(c)/4
					if i == bad[0] && c == 1 || i == bad[1] && c == 0 {
						f = float32(math.Inf(1 - 2*(i%2)))
					}
					b = binary.LittleEndian.AppendUint32(b, math.Float32bits(f))
				}
			}
			r := newMemReader("f", "s", b, 1000)
			var got any
			if kind.comp == 3 {
				got = r.positions("vertices", n)
			} else {
				got = r.uvs("uv0", n)
			}
			fe, ok := r.err.(*decode.FormatError)
			wantOff := int64(1000 + head + 4*kind.comp*bad[0])
			if !ok || fe.Offset != wantOff || !containsNumber(fe.Msg, bad[0]) {
				t.Fatalf("%s, bad at %v: got %v (%v), want an error at %d naming %d", kind.name, bad, r.err, got != nil, wantOff, bad[0])
			}
		}
	}
}

// containsNumber reports whether msg names item i the way positions and
// uvs do.
func containsNumber(msg string, i int) bool {
	return strings.HasPrefix(msg, fmt.Sprintf("vertex %d is", i)) || strings.HasPrefix(msg, fmt.Sprintf("entry %d is", i))
}
