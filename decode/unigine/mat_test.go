package unigine

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/decodetest"
)

func TestParseMat(t *testing.T) {
	src := `<?xml version="1.0" encoding="utf-8"?>
<material version="2.15.0.1" name="ball" guid="842f" base_material="mesh_base">
	<parameter name="albedo_color" expression="0">0.1 1 0.15 1</parameter>
	<parameter name="metalness">0.5</parameter>
	<parameter name="mode">alpha test</parameter>
	<texture name="albedo">textures/ball_alb.dds</texture>
	<texture name="normal">guid://9a22</texture>
</material>`
	m, err := ParseMat("ball.mat", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := &Mat{Name: "ball", Version: "2.15.0.1", GUID: "842f", BaseMaterial: "mesh_base",
		Params: []MatParam{{Name: "albedo_color", Values: []float64{0.1, 1, 0.15, 1}}, {Name: "metalness", Values: []float64{0.5}},
			{Name: "mode", Text: "alpha test"}},
		Textures: []MatTexture{{"albedo", "textures/ball_alb.dds"}, {"normal", "guid://9a22"}}}
	if !reflect.DeepEqual(m, want) {
		t.Errorf("got %+v\nwant %+v", m, want)
	}
	if m.Texture("albedo") != "textures/ball_alb.dds" || m.Param("metalness")[0] != 0.5 {
		t.Error("lookups")
	}
	for _, bad := range []string{"", "<materia", "<node/>", "<material><parameter></material>"} {
		_, err := ParseMat("bad.mat", []byte(bad))
		var fe *decode.FormatError
		if !errors.As(err, &fe) || fe.File != "bad.mat" {
			t.Errorf("%q: %v", bad, err)
		}
	}
}

func TestRealMat(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(decodetest.NeedShared(t, "assets/unigine"), "*.mat"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no .mat under ../shared/assets/unigine: %v", err)
	}
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		m, err := ParseMat(p, b)
		if err != nil {
			t.Fatal(err)
		}
		if m.GUID == "" || m.BaseMaterial == "" || len(m.Params)+len(m.Textures) == 0 {
			t.Errorf("%s: %+v", filepath.Base(p), m)
		}
		if strings.Contains(p, "skyrunner") && len(m.Param("albedo_color")) != 4 {
			t.Errorf("%s: albedo_color %v", p, m.Param("albedo_color"))
		}
	}
}
