package fs

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/meshfs/meshfs/decode/decodetest"
	"github.com/meshfs/meshfs/internal/fusetest"
)

// TestSceneFolder mounts a copy of the skyrunner project: a .world is a
// folder that lists and reads (NAME.glb, header.json, chunks/), and
// cube.node's .glb is made again when the .mat it uses changes and when
// the .meta that names that .mat by GUID changes (the copy's .mat has no
// guid attribute of its own, so the .meta alone names it: with its GUID
// changed the material no longer resolves). In both open modes.
func TestSceneFolder(t *testing.T) { bothModes(t, testSceneFolder) }

func testSceneFolder(t *testing.T) {
	shared := filepath.Join(decodetest.NeedShared(t, "assets/unigine-skyrunner"), "data")
	src := t.TempDir()
	data := filepath.Join(src, "data")
	decodetest.CopyTree(t, shared, data)
	matDir := filepath.Join(data, "csharp_template", "template_props", "primitives", "materials")
	mat := filepath.Join(matDir, "cube_mat.mat")
	b, err := os.ReadFile(mat)
	if err != nil {
		t.Fatal(err)
	}
	write(t, mat, regexp.MustCompile(` guid="[0-9a-f]+"`).ReplaceAll(b, nil))

	_, mnt := mountT(t, src, Config{})
	fusetest.GuardMount(t, mnt, fusetest.Guard)
	world := filepath.Join(mnt, "data", "JumpRunTest.world")
	ents, err := os.ReadDir(world)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, e := range ents {
		names[e.Name()] = true
	}
	for _, n := range []string{"JumpRunTest.glb", "header.json", "chunks"} {
		if !names[n] {
			t.Errorf("JumpRunTest.world lists %v: no %s", names, n)
		}
	}
	glb, err := os.ReadFile(filepath.Join(world, "JumpRunTest.glb"))
	if err != nil || !bytes.HasPrefix(glb, []byte("glTF")) || !bytes.Contains(glb, []byte("KHR_lights_punctual")) {
		t.Fatalf("JumpRunTest.glb: %v, %d bytes", err, len(glb))
	}
	if hdr, err := os.ReadFile(filepath.Join(world, "header.json")); err != nil || !bytes.Contains(hdr, []byte(`"format": "unigine-scene"`)) {
		t.Fatalf("header.json: %v\n%.300s", err, hdr)
	}
	if text, err := os.ReadFile(filepath.Join(world, "chunks", "scene.world")); err != nil || !bytes.Contains(text, []byte("<world")) {
		t.Errorf("chunks/scene.world: %v", err)
	}

	cube := filepath.Join(mnt, "data", "csharp_template", "template_props", "primitives", "cube.node")
	// read reads cube.glb and header.json. changing is set while a change
	// of a file they are made from is being told to the kernel: the
	// watcher's notifications drop the folder's names one after another,
	// each file's pages before its name, header.json last (dropOrder), so
	// a read that finds header.json's name still standing, on a node for
	// the version before whose pages are dropped already, gets ESTALE
	// (memory holds no header.json of that version), which is right: the
	// source changed. The name looked up again gives the new version.
	// Without a change no read gets ESTALE, nor ever any other error.
	read := func(changing bool) (g, h []byte, ok bool) {
		g, err := os.ReadFile(filepath.Join(cube, "cube.glb"))
		if err == nil {
			h, err = os.ReadFile(filepath.Join(cube, "header.json"))
		}
		if changing && errors.Is(err, syscall.ESTALE) {
			return nil, nil, false
		} else if err != nil {
			t.Fatal(err)
		}
		return g, h, true
	}
	before, hdr, _ := read(false)
	if !bytes.Contains(hdr, []byte(`cube_mat.mat"`)) || !bytes.Contains(before, []byte("normalTexture")) {
		t.Fatalf("cube.node does not use cube_mat.mat with its normal map:\n%s", hdr)
	}
	remade := func(what string, cond func(glb, hdr []byte) bool) {
		t.Helper()
		var g, h []byte
		stale := 0
		if !waitFor(10*time.Second, func() bool {
			var ok bool
			if g, h, ok = read(true); !ok {
				stale++
				return false
			}
			return !bytes.Equal(g, before) && cond(g, h)
		}) {
			t.Fatalf("after %s cube.glb is not made again (%d reads got ESTALE):\n%s", what, stale, h)
		}
		before = g
	}

	b, err = os.ReadFile(mat)
	if err != nil {
		t.Fatal(err)
	}
	write(t, mat, bytes.Replace(b, []byte("0.113725498 0.305882365 0.529411793 1"), []byte("1 0 0 1"), 1))
	remade("a change of cube_mat.mat", func(g, _ []byte) bool {
		return bytes.Contains(g, []byte(`"baseColorFactor":[1,0,0,1]`))
	})

	meta := mat + ".meta"
	b, err = os.ReadFile(meta)
	if err != nil {
		t.Fatal(err)
	}
	// Its <guid> and the runtime it lists (the .mat itself, of the same
	// GUID), both, or the runtime would still name the .mat as its asset.
	write(t, meta, bytes.ReplaceAll(b, []byte("856a527c0a972ae0b1a7012ba883608a786bfe78"), []byte("856a527c0a972ae0b1a7012ba883608a786bfe79")))
	remade("a change of the GUID in cube_mat.mat.meta", func(g, h []byte) bool {
		return !bytes.Contains(g, []byte("normalTexture")) && bytes.Contains(h, []byte(`"source": null`))
	})
}
