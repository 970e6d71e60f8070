package decode

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"
)

// headerJSONReference is HeaderJSON as first written: marshal, indent.
func headerJSONReference(f Fields) ([]byte, error) { return headerJSONMarshal(f) }

type flagWord uint32

func (w flagWord) MarshalJSON() ([]byte, error) { return []byte(`{ "bits" : [ 1, 2 ] }`), nil }

// randomValue is a header value of any kind header.json holds, nested.
func randomValue(r *rand.Rand, depth int) any {
	switch r.IntN(20) {
	case 0:
		return int(r.Int64N(1<<40) - 1<<39)
	case 1:
		return uint32(r.Uint32())
	case 2:
		return uint64(r.Uint64())
	case 3:
		return int64(-r.Int64())
	case 4:
		return r.Float64()*1e6 - 5e5
	case 5:
		return float32(r.Float32())
	case 6:
		return []float32{1.5, float32(math.NaN()), float32(math.Inf(-1)), 1e-7}
	case 7:
		return "text <&> \u2028 \"quoted\" ünï [{"
	case 8:
		return r.IntN(2) == 0
	case 9:
		return nil
	case 10:
		return []int{}
	case 11:
		return []string{"a", "b[", "{c"}
	case 12:
		return map[string]any{"z": 1, "a": []any{2.5, "x", nil}}
	case 13:
		return flagWord(7)
	case 14:
		return Fields{}
	case 15:
		return math.Inf(1)
	case 16:
		return []any{
			uint8(r.IntN(256)), float32(r.NormFloat64() * 1e-7), r.NormFloat64() * 1e22, float32(3e38), 1e-300, 0.0,
			math.Copysign(0, -1), []float32{1e-7, -2.5e21, 0.1, 3}, []float32{}, []float32(nil), []string{"plain", "x"},
			[]string(nil), []Fields(nil), []Fields{}, []Fields{{}}, "plain ascii", "tab\t", [2]uint32{1, 2}, float32(0.1),
		}[r.IntN(19)]
	}
	if depth > 3 {
		return uint16(r.IntN(1 << 16))
	}
	if r.IntN(2) == 0 {
		var list []Fields
		for range r.IntN(3) {
			list = append(list, randomFields(r, depth+1))
		}
		return list
	}
	return randomFields(r, depth+1)
}

func randomFields(r *rand.Rand, depth int) Fields {
	var f Fields
	for i := range r.IntN(6) {
		key := []string{"count", "name", "<flags>", "vertices", "a\"b"}[i%5]
		f.Add(key, randomValue(r, depth))
	}
	return f
}

// HeaderJSON writes the bytes the marshal-and-indent path writes, for
// every kind of value, nested, with NaN and infinities, HTML characters,
// and values that marshal themselves; and fails where it fails.
func TestHeaderJSONSameBytes(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 20000 {
		f := randomFields(r, 0)
		got, err := HeaderJSON(f)
		want, werr := headerJSONReference(f)
		if (err != nil) != (werr != nil) || !bytes.Equal(got, want) {
			t.Fatalf("case %d: %v\ngot  %s (%v)\nwant %s (%v)", i, f, got, err, want, werr)
		}
	}
	bad := Fields{{"ok", 1}, {"bad", func() {}}}
	_, err := HeaderJSON(bad)
	_, werr := headerJSONReference(bad)
	if err == nil || werr == nil || err.Error() != werr.Error() {
		t.Fatalf("unmarshallable value: %v, want %v", err, werr)
	}
}

// benchFields is a header like a small mesh's, for the benchmarks.
func benchFields() Fields {
	f := randomFields(rand.New(rand.NewPCG(3, 4)), 0)
	var counts Fields
	counts.Add("submeshes", 3)
	counts.Add("triangles", uint32(120))
	counts.Add("vertices", uint32(96))
	f.Add("counts", counts)
	return f
}

func BenchmarkHeaderJSON(b *testing.B) {
	f := benchFields()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := HeaderJSON(f); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkHeaderJSONReference is the marshal-and-indent path, to compare.
func BenchmarkHeaderJSONReference(b *testing.B) {
	f := benchFields()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := headerJSONReference(f); err != nil {
			b.Fatal(err)
		}
	}
}
