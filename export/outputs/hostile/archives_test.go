package hostile

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/internal/source"
)

// Archive variants: ZIPs of fixture trees (a GEM model with its parts and
// animation, a TF mesh with its blob, UNIGINE meshes; stored and deflated
// entries) cut at many points, with bytes flipped, and with the counts,
// sizes and offsets of their end record and central directory records set
// to 0, 2^16−1 and 2^32−1, each read as the mount and `convert` read it:
// every folder listed through the source view, every entry read whole,
// every mesh entry converted (each output on its own, as the store makes
// it: produce) under a deadline. None may panic, hang, list a name that
// leaves its folder, or allocate more than its bound: the reading of the
// archive outside the conversions, and each conversion, within heapMultiple
// × its size + binaryConstant (a conversion's own preview's previewBytes
// on top).

// packedTree is the fixture tree the variants are made of.
func packedTree(t *testing.T) []byte {
	files := map[string]string{
		"gem/tank_small.mdl": "gem/tank_small.mdl", "gem/eply_tangents_textures.ply": "gem/eply_tangents_textures.ply",
		"gem/eply_multi_uv.ply": "gem/eply_multi_uv.ply", "gem/eply_mirrored_mror.ply": "gem/eply_mirrored_mror.ply",
		"gem/gun_fire.anm": "gem/gun_fire.anm", "gem/box.vol": "gem/box.vol",
		"tf/tf2_cube.msh": "tfever/tf2_cube.msh", "tf/tf2_cube.msh.blob": "tfever/tf2_cube.msh.blob",
		"uni/ms11_skinned.mesh": "unigine/ms11_skinned.mesh", "uni/an11_bend.anim": "unigine/an11_bend.anim",
	}
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	i := 0
	for _, name := range []string{"gem/tank_small.mdl", "gem/eply_tangents_textures.ply", "gem/eply_multi_uv.ply",
		"gem/eply_mirrored_mror.ply", "gem/gun_fire.anm", "gem/box.vol", "tf/tf2_cube.msh", "tf/tf2_cube.msh.blob",
		"uni/ms11_skinned.mesh", "uni/an11_bend.anim"} {
		m := zip.Store
		if i++; i%2 == 0 {
			m = zip.Deflate
		}
		f, err := w.CreateHeader(&zip.FileHeader{Name: name, Method: m})
		if err != nil {
			t.Fatal(err)
		}
		f.Write(fixture(t, files[name]))
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// archiveVariants are the broken copies of z, named.
func archiveVariants(z []byte, rng *rand.Rand, n int) map[string][]byte {
	out := map[string][]byte{"whole": z}
	for i := range n {
		cut := rng.IntN(len(z))
		out[fmt.Sprintf("cut%d", cut)] = z[:cut]
		b := bytes.Clone(z)
		for range 1 + i%4 {
			b[rng.IntN(len(b))] ^= byte(1 + rng.IntN(255))
		}
		out[fmt.Sprintf("flip%d", i)] = b
	}
	// The end record's counts, size and offset; each central directory
	// record's sizes, offset and name length.
	end := bytes.LastIndex(z, []byte("PK\x05\x06"))
	for _, v := range []uint32{0, 0xffff, 0xffffffff} {
		for _, f := range []struct{ off, width int }{{8, 2}, {10, 2}, {12, 4}, {16, 4}} {
			b := bytes.Clone(z)
			put(b[end+f.off:], v, f.width)
			out[fmt.Sprintf("end%d=%x", f.off, v)] = b
		}
		for at := 0; ; at++ {
			i := bytes.Index(z[at:], []byte("PK\x01\x02"))
			if i < 0 {
				break
			}
			at += i
			for _, f := range []struct{ off, width int }{{20, 4}, {24, 4}, {28, 2}, {42, 4}} {
				b := bytes.Clone(z)
				put(b[at+f.off:], v, f.width)
				out[fmt.Sprintf("cd%d+%d=%x", at, f.off, v)] = b
			}
		}
	}
	return out
}

func put(b []byte, v uint32, width int) {
	if width == 2 {
		binary.LittleEndian.PutUint16(b, uint16(v))
	} else {
		binary.LittleEndian.PutUint32(b, v)
	}
}

// TestHostileArchives: the rule above, for a deterministic sample (more
// with MESHFS_HOSTILE=full).
func TestHostileArchives(t *testing.T) {
	n := 60
	if full() {
		n = 600
	}
	dir := t.TempDir()
	vs := archiveVariants(packedTree(t), rand.New(rand.NewPCG(18, 18)), n)
	for name, b := range vs {
		p := filepath.Join(dir, strings.ReplaceAll(name, "=", "_")+".zip")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		done := make(chan string, 1)
		meshes := 0
		var most, conv uint64
		go func() {
			defer func() {
				if r := recover(); r != nil {
					done <- fmt.Sprintf("panic: %v\n%s", r, debug.Stack())
				}
			}()
			done <- readArchive(p, &meshes, &most, &conv)
		}()
		select {
		case problem := <-done:
			if problem != "" {
				t.Errorf("%s: %s", name, problem)
			}
			if name == "whole" && meshes < 8 {
				t.Errorf("the sound archive converted %d meshes", meshes)
			}
		case <-time.After(4 * hangAfter):
			t.Fatalf("%s: hung", name)
		}
		runtime.ReadMemStats(&after)
		if alloc, lim := after.TotalAlloc-before.TotalAlloc-conv, heapMultiple*uint64(len(b))+binaryConstant; alloc > lim {
			t.Errorf("%s: reading allocated %d bytes for %d, beyond %d", name, alloc, len(b), lim)
		}
		if lim := heapMultiple*uint64(len(b)) + binaryConstant + previewBytes; most > lim {
			t.Errorf("%s: a conversion allocated %d bytes for %d, beyond %d", name, most, len(b), lim)
		}
	}
	t.Logf("%d archive variants", len(vs))
}

// readArchive walks, reads and converts everything in the archive at p
// (counting the meshes, with the most one conversion allocated and what
// they all did: produce), and says what broke the rule.
func readArchive(p string, meshes *int, most, conv *uint64) string {
	var problems []string
	limits := outputs.DefaultLimits
	limits.View = source.NewView()
	view := limits.View
	var walk func(dir string)
	walk = func(dir string) {
		ents, _ := view.ReadDir(dir)
		for _, e := range ents {
			if n := e.Name(); n == "" || n == "." || n == ".." || strings.ContainsAny(n, "/\x00") {
				problems = append(problems, fmt.Sprintf("entry name %q in %s", n, dir))
				continue
			}
			ep := path.Join(dir, e.Name())
			if e.IsDir() {
				walk(ep)
				continue
			}
			if f, err := view.Open(ep); err == nil {
				buf := make([]byte, 64<<10)
				for off := int64(0); off < f.Size(); off += int64(len(buf)) {
					if _, err := f.ReadAt(buf, off); err != nil {
						break
					}
				}
				f.Close()
			}
			m, err := outputs.OpenSource(ep, limits)
			if err != nil || m == nil {
				continue
			}
			*meshes++
			m.Tree, m.Limits.Timeout = p, deadline
			one, all, _ := produce(context.Background(), m, func(name string, b []byte) error { return nil })
			*most, *conv = max(*most, one), *conv+all
		}
	}
	walk(p)
	return strings.Join(problems, "; ")
}
