package decode

import (
	"errors"
	"math"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestNormalizeWeights(t *testing.T) {
	tests := []struct {
		name    string
		joints  []uint16
		weights []float32
		wantJ   [4]uint16
		wantW   [4]float32
	}{
		{"one", []uint16{3}, []float32{0.5}, [4]uint16{3}, [4]float32{1}},
		{"none", nil, nil, [4]uint16{}, [4]float32{1}},
		{"zero and negative dropped", []uint16{1, 2, 3}, []float32{0, -1, 2}, [4]uint16{3}, [4]float32{1}},
		{"duplicates merged", []uint16{5, 5, 6}, []float32{0.25, 0.25, 0.5}, [4]uint16{5, 6}, [4]float32{0.5, 0.5}},
		{"keep four largest", []uint16{1, 2, 3, 4, 5, 6}, []float32{0.05, 0.3, 0.1, 0.2, 0.25, 0.1},
			[4]uint16{2, 5, 4, 3}, [4]float32{0.3 / 0.85, 0.25 / 0.85, 0.2 / 0.85, 0.1 / 0.85}},
		{"NaN dropped", []uint16{1, 2}, []float32{float32(math.NaN()), 1}, [4]uint16{2}, [4]float32{1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j, w := NormalizeWeights(tt.joints, tt.weights)
			if j != tt.wantJ {
				t.Errorf("joints = %v, want %v", j, tt.wantJ)
			}
			var sum float32
			for i := range w {
				sum += w[i]
				if math.Abs(float64(w[i]-tt.wantW[i])) > 1e-6 {
					t.Errorf("weights = %v, want %v", w, tt.wantW)
					break
				}
			}
			if sum != 1 {
				t.Errorf("float32 sum = %v, want exactly 1", sum)
			}
		})
	}
}

func TestHeaderJSONKeepsOrder(t *testing.T) {
	var inner Fields
	inner.Add("z", 1)
	inner.Add("a", []int{1, 2})
	var f Fields
	f.Add("magic", "EPLY")
	f.Add("b", inner)
	f.Add("a", Hex(0x444))
	got, err := HeaderJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"magic\": \"EPLY\",\n  \"b\": {\n    \"z\": 1,\n    \"a\": [\n      1,\n      2\n    ]\n  },\n  \"a\": \"0x444\"\n}\n"
	if string(got) != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	if f.Get("a") != "0x444" || f.Get("missing") != nil {
		t.Error("Get returned the wrong value")
	}
}

func TestSafeName(t *testing.T) {
	long := strings.Repeat("x", 4096)
	for _, in := range []string{"../../etc/passwd", "a\x00b", "..", ".", "", long, "\xff\xfe", "C:\\win", " spaced "} {
		got := SafeName(in)
		if got == "" || got == "." || got == ".." || strings.ContainsAny(got, "/\\\x00") || len(got) > 96 || !utf8.ValidString(got) {
			t.Errorf("SafeName(%q) = %q is not a safe path element", in, got)
		}
	}
	if got := SafeName("body_01"); got != "body_01" {
		t.Errorf("SafeName changed a plain name: %q", got)
	}
}

func TestCursorErrorsCarryPosition(t *testing.T) {
	c := NewCursor("x.ply", []byte{1, 0, 0, 0, 2}, 100)
	c.Section = "VERT"
	if v := c.U32("vertex_count"); v != 1 {
		t.Fatalf("U32 = %d", v)
	}
	if c.Need("vertices", 1<<31, 32) {
		t.Fatal("Need accepted 2^31 vertices in 1 byte")
	}
	var fe *FormatError
	if !errors.As(c.Err(), &fe) || fe.Offset != 104 || fe.Field != "vertices" || !errors.Is(c.Err(), ErrTruncated) {
		t.Fatalf("error %v lacks position or field", c.Err())
	}
	msg := c.Err().Error()
	for _, part := range []string{"x.ply", "VERT", "0x68", "vertices"} {
		if !strings.Contains(msg, part) {
			t.Errorf("message %q lacks %q", msg, part)
		}
	}
	// Sticky: later reads return zero and keep the first error.
	if c.U8("next") != 0 || c.Err() != error(fe) {
		t.Error("error is not sticky")
	}
}

func TestZUpToYUpIsARotation(t *testing.T) {
	// Up (Z) becomes up (Y); forward (Y) becomes -Z; right stays right.
	if got := ZUpToYUp([3]float32{0, 0, 1}); got != [3]float32{0, 1, 0} {
		t.Errorf("up = %v", got)
	}
	if got := ZUpToYUp([3]float32{0, 1, 0}); got != [3]float32{0, 0, -1} {
		t.Errorf("forward = %v", got)
	}
	// Determinant +1: x × y = z must survive.
	x, y, z := ZUpToYUp([3]float32{1, 0, 0}), ZUpToYUp([3]float32{0, 1, 0}), ZUpToYUp([3]float32{0, 0, 1})
	cross := [3]float32{x[1]*y[2] - x[2]*y[1], x[2]*y[0] - x[0]*y[2], x[0]*y[1] - x[1]*y[0]}
	if cross != z {
		t.Errorf("x × y = %v, want %v", cross, z)
	}
}

// TestHeaderJSONNonFinite: broken files hold NaN and infinities, which JSON
// cannot; header.json shows them as strings instead of failing (found by the
// hostile corpus: an ms14 joint transform of 0xffffffff words).
func TestHeaderJSONNonFinite(t *testing.T) {
	nan := float32(math.NaN())
	var inner Fields
	inner.Add("scale", [3]float32{1, nan, 2})
	var f Fields
	f.Add("joint", inner)
	f.Add("list", []any{math.Inf(1), 1.5, "x", map[string]float64{"k": math.Inf(-1)}})
	f.Add("ok", 2.5)
	b, err := HeaderJSON(f)
	if err != nil {
		t.Fatal(err)
	}
	want := `{
  "joint": {
    "scale": [
      1,
      "NaN",
      2
    ]
  },
  "list": [
    "+Inf",
    1.5,
    "x",
    {
      "k": "-Inf"
    }
  ],
  "ok": 2.5
}
`
	if string(b) != want {
		t.Errorf("got\n%s\nwant\n%s", b, want)
	}
}
