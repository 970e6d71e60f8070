package tfever

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/decodetest"
	"github.com/meshfs/meshfs/export/gltf"
	"github.com/meshfs/meshfs/export/gltf/validator"
	qgltf "github.com/qmuntal/gltf"
	"github.com/qmuntal/gltf/modeler"
)

// animationsFromGLB reads back every animation of a .glb as decode
// channels on mesh 0 (the scenes here have one node each).
func animationsFromGLB(t *testing.T, glb []byte) []decode.Animation {
	t.Helper()
	var doc qgltf.Document
	if err := qgltf.NewDecoder(bytes.NewReader(glb)).Decode(&doc); err != nil {
		t.Fatal(err)
	}
	var out []decode.Animation
	for _, a := range doc.Animations {
		da := decode.Animation{Name: a.Name}
		for _, ch := range a.Channels {
			if ch.Target.Node == nil || doc.Nodes[*ch.Target.Node].Name == "" {
				t.Fatalf("animation %s: channel without a named node", a.Name)
			}
			smp := a.Samplers[ch.Sampler]
			in, err := modeler.ReadAccessor(&doc, doc.Accessors[smp.Input], nil)
			if err != nil {
				t.Fatal(err)
			}
			outv, err := modeler.ReadAccessor(&doc, doc.Accessors[smp.Output], nil)
			if err != nil {
				t.Fatal(err)
			}
			c := decode.Channel{Kind: decode.TargetMesh, Index: 0, Times: in.([]float32)}
			switch ch.Target.Path {
			case qgltf.TRSTranslation:
				c.Path = decode.PathTranslation
			case qgltf.TRSRotation:
				c.Path = decode.PathRotation
			case qgltf.TRSScale:
				c.Path = decode.PathScale
			}
			switch v := outv.(type) {
			case [][3]float32:
				for _, x := range v {
					c.Values = append(c.Values, x[:]...)
				}
			case [][4]float32:
				for _, x := range v {
					c.Values = append(c.Values, x[:]...)
				}
			default:
				t.Fatalf("sampler output is %T", outv)
			}
			da.Channels = append(da.Channels, c)
		}
		out = append(out, da)
	}
	return out
}

// TestGLB exports the fixtures and every real file, validates the .glb
// files with the Khronos validator (0 errors), and checks that the
// animations read back from the .glb still move points as the sources do.
func TestGLB(t *testing.T) {
	if err := validator.Available(); err != nil && os.Getenv("CI") == "" {
		t.Skipf("glTF validator not installed: %v", err)
	}
	type item struct {
		name string
		glb  []byte
	}
	var items []item
	add := func(name string, f decode.Format, src *decode.Source) *decode.Scene {
		s, err := f.Decode(context.Background(), src)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		glb, err := gltf.Encode(s)
		if err != nil {
			t.Fatalf("%s: encode: %v", name, err)
		}
		items = append(items, item{name, glb})
		return s
	}
	for _, name := range []string{"tf2_cube.msh", "trainfever_door.msh"} {
		add(name, Msh{}, fileSource(t, filepath.Join(fixtureDir, name)))
	}
	add("walk.ani", Ani{}, fileSource(t, filepath.Join(fixtureDir, "walk.ani")))
	if dir, ok := decodetest.RealData(t, "transport-fever"); ok {
		files, err := filepath.Glob(filepath.Join(dir, "*.msh"))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range files {
			add(filepath.Base(p), Msh{}, fileSource(t, p))
		}
	}
	tmp := t.TempDir()
	var paths []string
	for _, it := range items {
		p := filepath.Join(tmp, it.name+".glb")
		if err := os.WriteFile(p, it.glb, 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	reports, err := validator.ValidateFiles(paths...)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range reports {
		t.Run(items[i].name, func(t *testing.T) { validator.CheckReport(t, r) })
	}
	for _, it := range items {
		switch it.name {
		case "trainfever_door.msh":
			checkKeyframes(t, trainFeverDoor(), animationsFromGLB(t, it.glb))
		case "walk.ani":
			checkAni(t, animationsFromGLB(t, it.glb))
		}
	}
}
