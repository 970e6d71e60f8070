package fs

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/internal/fusetest"
	"github.com/meshfs/meshfs/internal/meshgen"
)

// The tests of this file attack the mount with its source tree, as a user
// who can write into the asset folder would: companions that are links out
// of the tree, FIFOs where files are expected, a mesh swapped for a FIFO
// while it is read. Each runs under fusetest.Watchdog, so a regression
// that blocks the daemon fails the test instead of wedging it.

// secretMark starts every line of the secret file: no byte sequence of
// the mount may contain it.
const secretMark = "MESHFS-SECRET-"

// secretFile writes a root-only 0600 file outside any source tree, big
// enough for every region a test mesh claims from its companion.
func secretFile(t testing.TB) string {
	t.Helper()
	var b bytes.Buffer
	for i := 0; b.Len() < 64<<10; i++ {
		fmt.Fprintf(&b, "%s%06d\n", secretMark, i)
	}
	p := filepath.Join(t.TempDir(), "shadow")
	if err := os.WriteFile(p, b.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// tfeverTriangle returns a Transport Fever mesh script and its blob.
func tfeverTriangle(t testing.TB) (script, blob []byte) {
	t.Helper()
	script, blob, err := meshgen.TFever(0)
	if err != nil {
		t.Fatal(err)
	}
	return script, blob
}

// readEverything reads every file under mnt that is not a link (a link
// is shown as one; a reader who follows it resolves it outside the mount,
// with their own rights) and returns the bytes read by path and the
// errors met.
func readEverything(mnt string) (files map[string][]byte, errs map[string]error) {
	files, errs = map[string][]byte{}, map[string]error{}
	filepath.WalkDir(mnt, func(p string, d fs.DirEntry, err error) error {
		rel, _ := filepath.Rel(mnt, p)
		if err != nil {
			errs[rel] = err
			return nil
		}
		if d.IsDir() || d.Type()&fs.ModeSymlink != 0 {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			errs[rel] = err
		}
		files[rel] = b
		return nil
	})
	return files, errs
}

// noGeometry fails t unless the broken mesh NAME.msh shows no geometry: a
// broken mesh's folder lists none, and a reader naming one gets an error.
func noGeometry(t *testing.T, mnt, name string) {
	t.Helper()
	for _, ext := range []string{".glb", ".obj", ".mtl"} {
		p := filepath.Join(mnt, name+".msh", name+ext)
		if _, err := os.ReadFile(p); err == nil {
			t.Errorf("%s reads", p)
		}
	}
}

// TestCompanionLinkLeaksNothing: a mesh whose companion is a link to a
// root-only file outside the tree (leak.msh.blob -> shadow), or a relative
// link out of it, fails with an error naming the link; no byte of the
// target appears anywhere in the mount, and a good mesh beside them still
// converts.
func TestCompanionLinkLeaksNothing(t *testing.T) {
	bothModes(t, func(t *testing.T) {
		secret := secretFile(t)
		src := t.TempDir()
		script, blob := tfeverTriangle(t)
		write(t, filepath.Join(src, "good.msh"), script)
		write(t, filepath.Join(src, "good.msh.blob"), blob)
		write(t, filepath.Join(src, "leak.msh"), script)
		os.Symlink(secret, filepath.Join(src, "leak.msh.blob"))
		write(t, filepath.Join(src, "up.msh"), script)
		rel, _ := filepath.Rel(src, secret)
		os.Symlink(rel, filepath.Join(src, "up.msh.blob"))
		// A mesh entry that is itself a link is shown as a link.
		os.Symlink(secret, filepath.Join(src, "linked.msh"))
		_, mnt := mountT(t, src, Config{})

		fusetest.Watchdog(t, mnt, func() {
			files, errs := readEverything(mnt)
			for p, b := range files {
				if bytes.Contains(b, []byte(secretMark)) {
					t.Errorf("%s holds bytes of the secret", p)
				}
			}
			for _, m := range []string{"leak", "up"} {
				e := string(files[filepath.Join(m+".msh", outputs.ErrorName)])
				if !strings.Contains(e, m+".msh.blob") || !strings.Contains(e, "symbolic link, not followed") {
					t.Errorf("%s.msh/error.txt = %q, want the link refused, by name", m, e)
				}
				noGeometry(t, mnt, m)
			}
			if b := files[filepath.Join("good.msh", "good.glb")]; len(b) < 12 || string(b[:4]) != "glTF" {
				t.Errorf("good.msh/good.glb: %d bytes, %v", len(b), errs[filepath.Join("good.msh", "good.glb")])
			}
			if fi, err := os.Lstat(filepath.Join(mnt, "linked.msh")); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
				t.Errorf("linked.msh: %v, %v: want a link", fi, err)
			}
			if len(files) < 8 {
				t.Errorf("only %d files read: %v", len(files), errs)
			}
		}, src)
	})
}

// TestFIFOCompanion: a mesh whose companion is a FIFO lists and reads at
// once, every file with its bytes or an error; error.txt names the FIFO.
func TestFIFOCompanion(t *testing.T) {
	bothModes(t, func(t *testing.T) {
		src := t.TempDir()
		script, _ := tfeverTriangle(t)
		write(t, filepath.Join(src, "f.msh"), script)
		if err := syscall.Mkfifo(filepath.Join(src, "f.msh.blob"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, mnt := mountT(t, src, Config{})
		fusetest.Watchdog(t, mnt, func() {
			names(t, filepath.Join(mnt, "f.msh"))
			files, _ := readEverything(mnt)
			e := string(files[filepath.Join("f.msh", outputs.ErrorName)])
			if !strings.Contains(e, "f.msh.blob") || !strings.Contains(e, "not a regular file (fifo)") {
				t.Errorf("f.msh/error.txt = %q, want the FIFO refused, by name", e)
			}
			noGeometry(t, mnt, "f")
			// The FIFO itself is left out of the tree, as every special
			// file is.
			if _, err := os.Stat(filepath.Join(mnt, "f.msh.blob")); !errors.Is(err, syscall.ENOENT) {
				t.Errorf("f.msh.blob: %v, want ENOENT", err)
			}
		}, src)
	})
}

// TestFIFOEntries: FIFOs named like meshes of each kind, and one named
// like a plain file, are left out of the listing and their lookups fail,
// at once (no sniff may open them).
func TestFIFOEntries(t *testing.T) {
	bothModes(t, func(t *testing.T) {
		src := t.TempDir()
		fifos := []string{"a.msh", "b" + fakeExt, "c.mesh", "d.ply", "notes.txt"}
		for _, n := range fifos {
			if err := syscall.Mkfifo(filepath.Join(src, n), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		write(t, filepath.Join(src, "good"+fakeExt), fakeMesh(3, 1))
		_, mnt := mountT(t, src, Config{})
		fusetest.Watchdog(t, mnt, func() {
			got := names(t, mnt)
			if len(got) != 1 {
				t.Errorf("listed %v", got)
			}
			for _, n := range fifos {
				if _, err := os.ReadFile(filepath.Join(mnt, n)); !errors.Is(err, syscall.ENOENT) {
					t.Errorf("reading %s: %v, want ENOENT", n, err)
				}
			}
			if b, err := os.ReadFile(filepath.Join(mnt, "good"+fakeExt, "good.glb")); err != nil || string(b[:4]) != "glTF" {
				t.Errorf("good.glb: %v", err)
			}
		}, src)
	})
}

// TestSwapMeshForFIFO: a loop renames a FIFO over a mesh and a mesh back
// over it (as `mv` would), again and again, while readers list, stat, open
// and read the tree. Nothing hangs, every read gets bytes or an error, and
// the rest of the tree serves throughout and after.
func TestSwapMeshForFIFO(t *testing.T) {
	bothModes(t, func(t *testing.T) {
		src := t.TempDir()
		stage := t.TempDir() // same file system: renames are atomic
		// keep holds a link to every FIFO renamed into the tree, so that
		// after a hang the watchdog can reach the FIFO a blocked open holds.
		keep := filepath.Join(stage, "keep")
		os.Mkdir(keep, 0o755)
		script, blob := tfeverTriangle(t)
		good := fakeMesh(4, 2)
		// In a folder of its own: a change of a companion renews the
		// version of every mesh of its folder, whose readers may then get
		// ESTALE (the default mode's rule for a changed source).
		os.Mkdir(filepath.Join(src, "stable"), 0o755)
		write(t, filepath.Join(src, "stable", "good"+fakeExt), good)
		write(t, filepath.Join(src, "swap"+fakeExt), fakeMesh(5, 1))
		write(t, filepath.Join(src, "tf.msh"), script)
		write(t, filepath.Join(src, "tf.msh.blob"), blob)
		write(t, filepath.Join(src, "plain.txt"), []byte("plain\n"))
		os.Mkdir(filepath.Join(src, "sub"), 0o755)
		write(t, filepath.Join(src, "sub", "s"+fakeExt), fakeMesh(2, 4))
		_, mnt := mountT(t, src, Config{})
		want, err := os.ReadFile(filepath.Join(mnt, "stable", "good"+fakeExt, "good.glb"))
		if err != nil {
			t.Fatal(err)
		}

		fusetest.Watchdog(t, mnt, func() {
			const swaps = 200
			var stop atomic.Bool
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer stop.Store(true)
				for i := range swaps {
					// A FIFO over the mesh, over the companion and over a
					// folder, then files back over them.
					for _, p := range []string{"swap" + fakeExt, "tf.msh.blob", "tf.msh", "plain.txt"} {
						k := filepath.Join(keep, fmt.Sprintf("%d%s", i, p))
						f := filepath.Join(stage, "fifo")
						if err := syscall.Mkfifo(k, 0o644); err != nil {
							t.Error(err)
							return
						}
						os.Link(k, f)
						os.Rename(f, filepath.Join(src, p))
					}
					os.Rename(filepath.Join(src, "sub"), filepath.Join(stage, "sub"))
					k := filepath.Join(keep, fmt.Sprintf("%dsub", i))
					syscall.Mkfifo(k, 0o644)
					os.Link(k, filepath.Join(src, "sub"))
					for p, b := range map[string][]byte{"swap" + fakeExt: fakeMesh(5, float32(i)), "tf.msh.blob": blob, "tf.msh": script, "plain.txt": []byte("plain\n")} {
						f := filepath.Join(stage, "file")
						os.WriteFile(f, b, 0o644)
						os.Rename(f, filepath.Join(src, p))
					}
					os.Remove(filepath.Join(src, "sub"))
					os.Rename(filepath.Join(stage, "sub"), filepath.Join(src, "sub"))
				}
			}()
			var reads atomic.Int64
			for range 4 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					for !stop.Load() {
						readEverything(mnt)
						for _, p := range []string{"swap" + fakeExt + "/swap.glb", "swap" + fakeExt + "/chunks/POS.x2",
							"tf.msh/tf.glb", "tf.msh/chunks", "sub/s" + fakeExt + "/s.obj", "swap" + fakeExt, "plain.txt", "sub"} {
							os.ReadFile(filepath.Join(mnt, p))
							os.ReadDir(filepath.Join(mnt, p))
						}
						reads.Add(1)
					}
				}()
			}
			// The rest of the tree serves throughout.
			wg.Add(1)
			go func() {
				defer wg.Done()
				for !stop.Load() {
					b, err := os.ReadFile(filepath.Join(mnt, "stable", "good"+fakeExt, "good.glb"))
					if err != nil || !bytes.Equal(b, want) {
						t.Errorf("good.glb during the swaps: %d bytes, %v", len(b), err)
						return
					}
				}
			}()
			wg.Wait()
			t.Logf("%d swaps, %d rounds of reads", swaps, reads.Load())
			// Settled: the last version of each serves.
			if b, err := os.ReadFile(filepath.Join(mnt, "stable", "good"+fakeExt, "good.glb")); err != nil || !bytes.Equal(b, want) {
				t.Errorf("good.glb after the swaps: %v", err)
			}
			ok := waitFor(guardSettle, func() bool {
				b, err := os.ReadFile(filepath.Join(mnt, "tf.msh", "tf.glb"))
				return err == nil && string(b[:4]) == "glTF"
			})
			if !ok {
				t.Errorf("tf.msh/tf.glb does not serve after the swaps")
			}
		}, src, keep)
	})
}

// guardSettle bounds the wait for the watcher to catch up with the last
// swap; it only fails a test that never settles.
const guardSettle = 20 * time.Second
