package fs

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/meshfs/meshfs/export/gltf/validator"
	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/vfs/vfstest"
)

// glbAnimations returns the names of the animations of a .glb's JSON chunk.
func glbAnimations(t *testing.T, glb []byte) []string {
	t.Helper()
	if len(glb) < 20 || string(glb[:4]) != "glTF" {
		t.Fatalf("not a .glb (%d bytes)", len(glb))
	}
	n := binary.LittleEndian.Uint32(glb[12:16])
	var doc struct {
		Animations []struct {
			Name string `json:"name"`
		} `json:"animations"`
	}
	if err := json.Unmarshal(glb[20:20+n], &doc); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, a := range doc.Animations {
		names = append(names, a.Name)
	}
	return names
}

// TestAnimatedMesh: a skinned UNIGINE mesh beside an .anim that drives its
// bones offers NAME.animated.glb with that animation (and not with the
// .anim beside it that drives other bones); it validates and is the file
// `convert` writes; a second matching .anim adds an animation; when no
// .anim matches any more, the file leaves the folder.
func TestAnimatedMesh(t *testing.T) {
	fixtures := filepath.Join("..", "testdata", "unigine")
	bothModes(t, func(t *testing.T) {
		src := t.TempDir()
		for _, n := range []string{"ms13_skinned.mesh", "an11_bend.anim", "an11_wave.anim"} {
			b, err := os.ReadFile(filepath.Join(fixtures, n))
			if err != nil {
				t.Fatal(err)
			}
			write(t, filepath.Join(src, n), b)
		}
		_, mnt := mountT(t, src, Config{})
		dir := filepath.Join(mnt, "ms13_skinned.mesh")
		animated := filepath.Join(dir, "ms13_skinned.animated.glb")
		listed := func() bool {
			ents, err := os.ReadDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			return slices.ContainsFunc(ents, func(e os.DirEntry) bool { return e.Name() == filepath.Base(animated) })
		}
		if !listed() {
			t.Fatalf("%s not listed", animated)
		}
		one, err := os.ReadFile(animated)
		if err != nil {
			t.Fatal(err)
		}
		if got := glbAnimations(t, one); !slices.Equal(got, []string{"an11_bend"}) {
			t.Errorf("animations %q, want [an11_bend] (an11_wave drives other bones)", got)
		}
		validator.Check(t, one)

		// `convert` writes the same file.
		m, err := outputs.Open(filepath.Join(src, "ms13_skinned.mesh"))
		if err != nil || m == nil {
			t.Fatalf("open: %v", err)
		}
		out := t.TempDir()
		if err := vfstest.Convert(t, m.Path, &m.Limits, out); err != nil {
			t.Fatal(err)
		}
		if conv, err := os.ReadFile(filepath.Join(out, "ms13_skinned.animated.glb")); err != nil || !bytes.Equal(conv, one) {
			t.Errorf("convert's NAME.animated.glb differs from the mount's (%d bytes, %v; mount %d)", len(conv), err, len(one))
		}

		// A second .anim of the same bones: two animations.
		b, _ := os.ReadFile(filepath.Join(src, "an11_bend.anim"))
		write(t, filepath.Join(src, "an11_bend_again.anim"), b)
		var two []byte
		if !waitFor(10*time.Second, func() bool {
			two, _ = os.ReadFile(animated)
			return len(two) > len(one)
		}) {
			t.Fatalf("adding a matching .anim left NAME.animated.glb at %d bytes", len(two))
		}
		if got := glbAnimations(t, two); !slices.Equal(got, []string{"an11_bend", "an11_bend_again"}) {
			t.Errorf("animations %q, want [an11_bend an11_bend_again]", got)
		}
		if fi, err := os.Stat(animated); err != nil || fi.Size() != int64(len(two)) {
			t.Errorf("stat after the change: %v, size %v, want %d", err, fi, len(two))
		}

		// Changed into .anim files of other bones: no file any more.
		w, _ := os.ReadFile(filepath.Join(src, "an11_wave.anim"))
		write(t, filepath.Join(src, "an11_bend.anim"), w)
		write(t, filepath.Join(src, "an11_bend_again.anim"), w)
		if !waitFor(10*time.Second, func() bool {
			_, err := os.Stat(animated)
			return errors.Is(err, syscall.ENOENT) && !listed()
		}) {
			t.Fatalf("NAME.animated.glb still there after its .anim files changed to other bones")
		}
		// The .anim files are companions of the mesh: their change renews
		// the mesh's version, so a node of NAME.glb the kernel still holds
		// from the listings above may answer ESTALE until it looks the
		// name up again (kernel.go); any other error is a failure.
		if !waitFor(10*time.Second, func() bool {
			_, err = os.ReadFile(filepath.Join(dir, "ms13_skinned.glb"))
			return err == nil || !errors.Is(err, syscall.ESTALE)
		}) || err != nil {
			t.Errorf("NAME.glb: %v", err)
		}
	})
}

// An .anim changed while nothing was mounted: the next mount with the same
// disk cache serves NAME.animated.glb made with the new one, not the old
// bytes.
func TestDiskCacheAnimChangedWhileUnmounted(t *testing.T) {
	fixtures := filepath.Join("..", "testdata", "unigine")
	src := t.TempDir()
	for _, n := range []string{"ms13_skinned.mesh", "an11_bend.anim"} {
		b, err := os.ReadFile(filepath.Join(fixtures, n))
		if err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(src, n), b)
	}
	animated := filepath.Join("ms13_skinned.mesh", "ms13_skinned.animated.glb")
	dir := t.TempDir()
	_, mnt, stop := mountDisk(t, src, dir, false)
	one, err := os.ReadFile(filepath.Join(mnt, animated))
	if err != nil {
		t.Fatal(err)
	}
	stop()
	b, _ := os.ReadFile(filepath.Join(src, "an11_bend.anim"))
	write(t, filepath.Join(src, "an11_bend_again.anim"), b)
	_, mnt, _ = mountDisk(t, src, dir, false)
	two, err := os.ReadFile(filepath.Join(mnt, animated))
	if err != nil {
		t.Fatal(err)
	}
	if got := glbAnimations(t, two); len(got) != 2 || bytes.Equal(one, two) {
		t.Fatalf("after an .anim came while unmounted: animations %q (%d bytes, before %d)", got, len(two), len(one))
	}
}
