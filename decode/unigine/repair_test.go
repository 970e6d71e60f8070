package unigine

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/decodetest"
)

// TestNaNRepairsInHeader: the fixtures with NaN/±Inf in a position and in
// UVs list Repair's changes under header.json's "repairs", from Scan and
// from ScanDecode alike, and the same as the decoded scene's; the sound
// fixtures list none.
func TestNaNRepairsInHeader(t *testing.T) {
	floor := func(attr string) decode.Repair {
		return decode.Repair{Mesh: "floor", Primitive: "floor", Attribute: attr, Vertices: 1, Action: decode.RepairDropTriangles, Triangles: 6}
	}
	want := map[string][]decode.Repair{
		"ms13_nan_repaired.mesh": {floor("position"), floor("uv0"), floor("uv1")},
		"ms11_nan_repaired.mesh": {floor("position"), floor("uv0")},
	}
	ctx := context.Background()
	for _, fx := range fixtures {
		b, err := os.ReadFile(filepath.Join(fixtureDir, fx.name))
		if err != nil {
			t.Fatal(err)
		}
		w := want[fx.name]
		st, err := Format{}.Scan(ctx, memSource(fx.name, b))
		if err != nil {
			t.Fatalf("%s: %v", fx.name, err)
		}
		if got := st.Header.Get("repairs"); !reflect.DeepEqual(got, decode.RepairFields(w)) {
			t.Errorf("%s: scan's repairs %v, want %v", fx.name, got, decode.RepairFields(w))
		}
		sc, err := Format{}.Decode(ctx, memSource(fx.name, b))
		if err != nil {
			t.Fatalf("%s: %v", fx.name, err)
		}
		if !reflect.DeepEqual(sc.Repairs, w) {
			t.Errorf("%s: the scene's repairs %+v, want %+v", fx.name, sc.Repairs, w)
		}
		if st2, _, err := (Format{}).ScanDecode(ctx, memSource(fx.name, b)); err == nil {
			if !reflect.DeepEqual(st2.Header, st.Header) {
				t.Errorf("%s: ScanDecode's header differs from Scan's:\n%v\n%v", fx.name, st2.Header, st.Header)
			}
		}
		if w == nil {
			continue
		}
		for _, m := range sc.Meshes {
			for _, p := range m.Primitives {
				if m.Name == "floor" && len(p.Indices)/3 != 32-12 {
					t.Errorf("%s: %d triangles left, want 20", fx.name, len(p.Indices)/3)
				}
				for v := range p.Positions {
					ok := decode.Finite(p.Positions[v][:]...)
					for _, uv := range p.UVs {
						ok = ok && decode.Finite(uv[v][:]...)
					}
					if !ok {
						t.Fatalf("%s: vertex %d of %s is not finite", fx.name, v, m.Name)
					}
				}
			}
		}
	}
}

// TestRealRepairsInHeader: the real meshes of ../shared list under
// "repairs" exactly what their decoded scenes repair (Scan, ScanDecode and
// Decode agree).
func TestRealRepairsInHeader(t *testing.T) {
	files := assetFiles(t)
	if real, ok := decodetest.Shared(t, "realdata/unigine"); ok {
		m, _ := filepath.Glob(filepath.Join(real, "*.mesh*"))
		files = append(files, m...)
	}
	if len(files) == 0 {
		t.Skip("no real UNIGINE meshes")
	}
	ctx := context.Background()
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		st, err := Format{}.Scan(ctx, memSource(p, b))
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		sc, err := Format{}.Decode(ctx, memSource(p, b))
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		if got := st.Header.Get("repairs"); !reflect.DeepEqual(got, decode.RepairFields(sc.Repairs)) {
			t.Errorf("%s: header.json repairs %v, the scene's %+v", p, got, sc.Repairs)
		}
		if st2, _, err := (Format{}).ScanDecode(ctx, memSource(p, b)); err == nil && !reflect.DeepEqual(st2.Header.Get("repairs"), st.Header.Get("repairs")) {
			t.Errorf("%s: ScanDecode's repairs %v, Scan's %v", p, st2.Header.Get("repairs"), st.Header.Get("repairs"))
		}
	}
}
