package gem

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"github.com/meshfs/meshfs/decode"
)

func scanFixture(t *testing.T, name string) map[string]any {
	t.Helper()
	b := allFixtureBytes(t)[name]
	st, err := Format{}.Scan(context.Background(), &decode.Source{Name: name + ".ply", R: bytes.NewReader(b), Size: int64(len(b))})
	if err != nil {
		t.Fatal(err)
	}
	j, err := decode.HeaderJSON(st.Header)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(j, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// get walks a decoded JSON value by keys and indices.
func get(t *testing.T, v any, path ...any) any {
	t.Helper()
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, ok := v.(map[string]any)
			if !ok {
				t.Fatalf("%v: not an object at %q", path, k)
			}
			v = m[k]
		case int:
			a, ok := v.([]any)
			if !ok || k >= len(a) {
				t.Fatalf("%v: no element %d", path, k)
			}
			v = a[k]
		}
	}
	return v
}

// TestHeaderFields checks header.json of fixtures against the values the
// fixtures were built from.
func TestHeaderFields(t *testing.T) {
	h := scanFixture(t, "eply_skinned_0x800")
	for _, c := range []struct {
		path []any
		want any
	}{
		{[]any{"magic"}, "EPLY"},
		{[]any{"chunks", 0, "fourcc"}, "BNDS"},
		{[]any{"chunks", 0, "offset"}, 4.0},
		{[]any{"chunks", 0, "length"}, 28.0},
		{[]any{"skin", "bones", 3}, "head"},
		{[]any{"vertices", "size"}, 40.0},
		{[]any{"vertices", "flags_hex"}, "0x7"},
		{[]any{"submeshes", 0, "kind"}, "MESH"},
		{[]any{"submeshes", 0, "fvf"}, "0x1118"},
		{[]any{"submeshes", 0, "vertex_elements", 1, "usage"}, "BLENDWEIGHT"},
		{[]any{"submeshes", 0, "vertex_elements", 2, "type"}, "BYTE4"},
		{[]any{"submeshes", 0, "vertex_elements", 3, "offset"}, 20.0},
		{[]any{"submeshes", 0, "flags_hex"}, "0xc14"},
		{[]any{"submeshes", 0, "flags"}, []any{"realtime_light", "skinned", "material", "sub_skin"}},
		{[]any{"submeshes", 0, "material"}, "body.mtl"},
		{[]any{"submeshes", 0, "bone_map"}, []any{0.0, 4.0, 2.0}},
		{[]any{"submeshes", 0, "bone_map_bones"}, []any{"(mesh matrix)", "head", "spine"}},
		{[]any{"submeshes", 0, "bone_map_rule"}, "0x800"},
		{[]any{"counts", "triangles"}, 8.0},
		{[]any{"counts", "vertices"}, 9.0},
		{[]any{"counts", "bones"}, 4.0},
	} {
		if got := get(t, h, c.path...); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%v = %#v, want %#v", c.path, got, c.want)
		}
	}

	h = scanFixture(t, "bply_map_as2")
	for _, c := range []struct {
		path []any
		want any
	}{
		{[]any{"indices", "fourcc"}, "IND4"},
		{[]any{"indices", "width"}, 32.0},
		{[]any{"basis", "polygons", "axis_y"}, []any{0.0, -4.0}},
		{[]any{"basis", "texture", "center"}, []any{0.5, 0.25}},
		{[]any{"info_grid", "grid_start"}, []any{-2.0, -3.0}},
		{[]any{"info_grid", "face_count"}, 4.0},
		{[]any{"markup", "size"}, 12.0},
		{[]any{"vertices", "colors_halved"}, true},
		{[]any{"submeshes", 1, "kind"}, "SUBM-AS2"},
		{[]any{"submeshes", 1, "declaration", 2, "type_usage"}, "0x26"},
		{[]any{"submeshes", 1, "vertex_elements", 2, "type"}, "COLOR"},
		{[]any{"submeshes", 1, "unknown"}, []any{0.0, 900.0}},
		{[]any{"submeshes", 1, "extra_vertex_bytes"}, 8.0},
		{[]any{"submeshes", 1, "face_start"}, 8.0},
	} {
		if got := get(t, h, c.path...); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%v = %#v, want %#v", c.path, got, c.want)
		}
	}

	h = scanFixture(t, "pm01_gem3")
	if got := get(t, h, "submeshes", 0, "kind"); got != "SUBM-GEM3" {
		t.Errorf("kind %v", got)
	}
	if got := get(t, h, "submeshes", 0, "flags"); !reflect.DeepEqual(got, []any{"two_sided", "skin"}) {
		t.Errorf("GEM3 flags %v", got)
	}
	if got := len(get(t, h, "submeshes", 0, "vertex_elements").([]any)); got != 12 {
		// pos, normal, 2 colours, 4 UVs, tangent, weights, indices, wind
		t.Errorf("0xFFF gives %d elements, want 12", got)
	}
	h = scanFixture(t, "eply_mirrored_mror")
	if get(t, h, "mirrored") != true {
		t.Error("MROR not reported")
	}
	h = scanFixture(t, "eply_tangents_textures")
	if got := get(t, h, "submeshes", 1, "textures"); !reflect.DeepEqual(got, map[string]any{"diffuse": "d.dds", "specular": "s.dds", "bump": "n.dds"}) {
		t.Errorf("textures %v", got)
	}
	if got := get(t, h, "submeshes", 0, "specular_color"); !reflect.DeepEqual(got, []any{229.0, 229.0, 229.0, 25.0}) {
		t.Errorf("specular colour %v", got)
	}
}

func TestDecodeCanceled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	b := allFixtureBytes(t)["eply_multi_uv"]
	_, err := Format{}.Decode(ctx, &decode.Source{Name: "c.ply", R: bytes.NewReader(b), Size: int64(len(b))})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("canceled decode: %v", err)
	}
}

// TestHeaderNonFinite: JSON has no NaN; such values become strings.
func TestHeaderNonFinite(t *testing.T) {
	b := le("EPLY", "BNDS", bytes.Repeat([]byte{0xFF}, 12), le(float32(1), float32(2), float32(3)))
	st, err := Format{}.Scan(context.Background(), &decode.Source{Name: "n.ply", R: bytes.NewReader(b), Size: int64(len(b))})
	if err != nil {
		t.Fatal(err)
	}
	j, err := decode.HeaderJSON(st.Header)
	if err != nil || !bytes.Contains(j, []byte(`"NaN"`)) {
		t.Fatalf("header.json with NaN bounds: %v\n%s", err, j)
	}
}
