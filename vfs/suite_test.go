package vfs_test

// The tree's behaviour, once (rclone's vfstest pattern): every check of
// the table runs through the vfs API and through a real FUSE mount of the
// same source (package fs), and after it the two trees must agree entry
// by entry and byte for byte.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/meshfs/meshfs/decode/decodetest"
	"github.com/meshfs/meshfs/export/outputs"
	mfs "github.com/meshfs/meshfs/fs"
	"github.com/meshfs/meshfs/internal/fusetest"
	"github.com/meshfs/meshfs/vfs"
	"github.com/meshfs/meshfs/vfs/vfstest"
)

func TestMain(m *testing.M) {
	stop := fusetest.StartReaper()
	code := m.Run()
	code = fusetest.NoLeaks(code) // every tree and mount was closed
	stop()
	os.Exit(code)
}

// door is one way to the tree of a source.
type door struct {
	name string
	open func(t *testing.T, src string) vfs.Tree
}

var doors = []door{
	{"vfs", func(t *testing.T, src string) vfs.Tree { return newTree(t, src) }},
	{"mount", func(t *testing.T, src string) vfs.Tree { return mountAt(t, src) }},
}

// mountAt mounts src for real (no disk cache, the default no-open mode)
// under the FUSE watchdog, unmounted when the test ends.
func mountAt(t testing.TB, src string) vfs.Tree {
	t.Helper()
	f, err := mfs.New(mfs.Config{Source: src, Log: log.New(io.Discard, "", 0)})
	if err != nil {
		t.Fatal(err)
	}
	mnt := fusetest.Mount(t, f, mfs.Unmount, false)
	fusetest.GuardMount(t, mnt, fusetest.Guard)
	return vfstest.OS(mnt)
}

// A check is one behaviour: setup makes its source folder (nil: the
// source is used as it is), run checks one door's tree of it.
type check struct {
	name string
	src  func(t *testing.T, dir string) string // dir: where to make it
	run  func(t *testing.T, tr vfs.Tree, src string)
}

var checks = []check{
	{name: "testdata", src: fixed(filepath.Join("..", "testdata")), run: wantListing("gem", "orientation", "tfever", "unigine")},
	{name: "gem-model", src: fixed(filepath.Join("..", "..", "shared", "assets", "gem-pilot")), run: wantFolder("resource/entity/humanskin/cw/cw_fr_pilot/cw_rus_combez.mdl", "header.json", "cw_rus_combez.glb")},
	{name: "tf-model", src: fixed(filepath.Join("..", "..", "shared", "assets", "tf-roadsign")), run: wantFolder("res/models/model/bh_uk_roadsigns/larger_roadside/bh_100ydjn.mdl", "header.json", "bh_100ydjn.glb")},
	{name: "unigine-mesh", src: uniginePick, run: wantFolder("ms13_kimchi_box.mesh", "header.json", "ms13_kimchi_box.glb", "ms13_kimchi_box.obj", "chunks")},
	{name: "names", src: orientation, run: checkNames},
	{name: "archive", src: withArchive, run: checkArchive},
	{name: "broken", src: withBroken, run: checkBroken},
	{name: "narrowed", src: modelTree, run: checkNarrowed},
	{name: "part-change", src: modelTree, run: checkPartChange},
}

// TestBehaviour runs every check through every door, then requires the
// doors' trees of the check's source to agree.
func TestBehaviour(t *testing.T) {
	for _, c := range checks {
		t.Run(c.name, func(t *testing.T) {
			var snaps []map[string]string
			made := filepath.Join(t.TempDir(), "src")
			for _, d := range doors {
				t.Run(d.name, func(t *testing.T) {
					// A source of its own, made afresh at the same path
					// with the same times (stamp): a check may change it,
					// and error texts name it.
					if err := os.RemoveAll(made); err != nil {
						t.Fatal(err)
					}
					src := c.src(t, made)
					tr := d.open(t, src)
					c.run(t, tr, src)
					snaps = append(snaps, snapshot(t, tr))
				})
			}
			if len(snaps) == len(doors) && !t.Failed() {
				agree(t, doors[0].name, snaps[0], doors[1].name, snaps[1])
			}
		})
	}
}

func fixed(dir string) func(*testing.T, string) string {
	return func(t *testing.T, _ string) string {
		if _, err := os.Stat(dir); err != nil {
			decodetest.CannotRun(t, "no %s: %v", dir, err)
		}
		return dir
	}
}

// snapshot walks the whole tree (vfstest.Snapshot): every entry's type,
// permissions, owner, time and size, and every file's bytes (their
// digest); an entry that cannot be stat'ed or read fails the test.
func snapshot(t *testing.T, tr vfs.Tree) map[string]string {
	t.Helper()
	return vfstest.Lines(vfstest.Snapshot(t, tr), func(p string, e vfstest.Entry) string {
		if e.Err != nil {
			t.Fatalf("%s: %v", p, e.Err)
		}
		i := e.Info
		line := fmt.Sprintf("%v uid=%d gid=%d mtime=%d size=%d", i.Mode, i.Uid, i.Gid, i.ModTime.UnixNano(), i.Size)
		if e.Sum != "" {
			line += " sha256=" + e.Sum
		}
		return line
	})
}

// agree fails the test where the two snapshots differ.
func agree(t *testing.T, an string, a map[string]string, bn string, b map[string]string) {
	t.Helper()
	vfstest.Agree(t, an, a, bn, b)
}

func readAll(t *testing.T, tr vfs.Tree, name string) []byte {
	t.Helper()
	f, err := tr.Open(context.Background(), name)
	if err != nil {
		t.Fatalf("Open(%q): %v", name, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.NewSectionReader(f, 0, 1<<40))
	if err != nil {
		t.Fatalf("reading %s: %v", name, err)
	}
	return b
}

func names(t *testing.T, tr vfs.Tree, dir string) []string {
	t.Helper()
	list, err := tr.ReadDir(context.Background(), dir)
	if err != nil {
		t.Fatalf("ReadDir(%q): %v", dir, err)
	}
	var ns []string
	for _, e := range list {
		ns = append(ns, e.Name)
	}
	slices.Sort(ns)
	return ns
}

func wantListing(want ...string) func(*testing.T, vfs.Tree, string) {
	return func(t *testing.T, tr vfs.Tree, _ string) {
		if got := names(t, tr, ""); !slices.Equal(got, want) {
			t.Errorf("root lists %v, want %v", got, want)
		}
	}
}

// wantFolder: dir is a folder (a mesh's, a model's) listing at least want,
// and its .glb is a glTF file.
func wantFolder(dir string, want ...string) func(*testing.T, vfs.Tree, string) {
	return func(t *testing.T, tr vfs.Tree, _ string) {
		got := names(t, tr, dir)
		for _, w := range want {
			if !slices.Contains(got, w) {
				t.Errorf("%s lists %v: no %s", dir, got, w)
			}
			if strings.HasSuffix(w, ".glb") {
				if b := readAll(t, tr, dir+"/"+w); !bytes.HasPrefix(b, []byte("glTF")) {
					t.Errorf("%s/%s is no glTF file: % x", dir, w, b[:min(len(b), 16)])
				}
			}
		}
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// replace writes b over the file p, by rename, as editors and games' tools do.
func replace(t *testing.T, p string, b []byte) {
	t.Helper()
	tmp := filepath.Join(filepath.Dir(p), ".new-"+filepath.Base(p))
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, p); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{p, filepath.Dir(p)} {
		if err := os.Chtimes(q, stamped.Add(time.Hour), stamped.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
}

// stamped is the time stamp gives every file of a made source.
var stamped = time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)

// stamp sets the times of everything under src to stamped and returns src.
func stamp(t *testing.T, src string) string {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, _ iofs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		return os.Chtimes(p, stamped, stamped)
	})
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func uniginePick(t *testing.T, src string) string {
	dir := fixed(filepath.Join("..", "..", "shared", "assets", "unigine"))(t, "")
	for _, n := range []string{"ms13_kimchi_box.mesh", "ms12_draganddrop_box.mesh", "dds_mockup_blue_alb.dds", "xml_skyrunner_mesh_base_0.mat"} {
		copyFile(t, filepath.Join(dir, n), filepath.Join(src, n))
	}
	return stamp(t, src)
}

func orientation(t *testing.T, _ string) string {
	return filepath.Join("..", "testdata", "orientation")
}

// checkNames: a missing name, a name below a file and one below an
// output are not there, through every door; a folder's entry is Stat's.
func checkNames(t *testing.T, tr vfs.Tree, _ string) {
	ctx := context.Background()
	for _, name := range []string{"nope", "gem/nope.ply", "gem/orient.ply/nope.glb", "gem/orient.ply/header.json/x", "gem/orient.ply/chunks/99_NOPE.bin", "tfever/orient.msh/orient.msh.blob"} {
		if _, err := tr.Stat(ctx, name); !errors.Is(err, iofs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			t.Errorf("Stat(%q) = %v, want not there", name, err)
		}
		if _, err := tr.Open(ctx, name); !errors.Is(err, iofs.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			t.Errorf("Open(%q) = %v, want not there", name, err)
		}
	}
	if got := names(t, tr, "tfever"); !slices.Equal(got, []string{"orient.msh"}) {
		t.Errorf("tfever lists %v: the companion .msh.blob is hidden, the mesh is a folder", got)
	}
}

// withArchive is a folder holding testdata/orientation loose and as a ZIP.
func withArchive(t *testing.T, src string) string {
	for _, n := range []string{"gem/orient.ply", "tfever/orient.msh", "tfever/orient.msh.blob", "unigine/orient.mesh"} {
		copyFile(t, filepath.Join("..", "testdata", "orientation", n), filepath.Join(src, "loose", n))
	}
	decodetest.ZipTree(t, filepath.Join(src, "loose"), filepath.Join(src, "pack.zip"), 0)
	return stamp(t, src)
}

// checkArchive: an archive is a folder of its tree, whose meshes are
// folders of the same outputs as loose.
func checkArchive(t *testing.T, tr vfs.Tree, _ string) {
	i, err := tr.Stat(context.Background(), "pack.zip")
	if err != nil || !i.IsDir() {
		t.Fatalf("pack.zip: %v %v, want a folder", i.Mode, err)
	}
	if got := names(t, tr, "pack.zip"); !slices.Equal(got, []string{"gem", "tfever", "unigine"}) {
		t.Errorf("pack.zip lists %v", got)
	}
	for _, p := range []string{"gem/orient.ply/orient.glb", "tfever/orient.msh/orient.obj", "tfever/orient.msh/chunks/normal.bin", "unigine/orient.mesh/chunks/01_ramp.collision.bin"} {
		if a, b := readAll(t, tr, "loose/"+p), readAll(t, tr, "pack.zip/"+p); !bytes.Equal(a, b) {
			t.Errorf("%s: %d bytes loose, %d in the archive, not the same", p, len(a), len(b))
		}
	}
}

// withBroken holds a mesh cut short: its scan fails.
func withBroken(t *testing.T, src string) string {
	b, err := os.ReadFile(filepath.Join("..", "testdata", "orientation", "gem", "orient.ply"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "cut.ply"), b[:len(b)/3], 0o644); err != nil {
		t.Fatal(err)
	}
	copyFile(t, filepath.Join("..", "testdata", "orientation", "gem", "orient.ply"), filepath.Join(src, "whole.ply"))
	return stamp(t, src)
}

// checkBroken: a broken mesh's folder shows error.txt, naming the file,
// and no geometry; a sound one beside it no error.txt.
func checkBroken(t *testing.T, tr vfs.Tree, _ string) {
	got := names(t, tr, "cut.ply")
	if !slices.Contains(got, outputs.ErrorName) || slices.Contains(got, "cut.glb") {
		t.Fatalf("cut.ply lists %v, want error.txt and no cut.glb", got)
	}
	if b := readAll(t, tr, "cut.ply/"+outputs.ErrorName); !bytes.Contains(b, []byte("cut.ply")) {
		t.Errorf("error.txt does not name the file: %q", b)
	}
	if _, err := tr.Stat(context.Background(), "cut.ply/cut.glb"); !errors.Is(err, iofs.ErrNotExist) {
		t.Errorf("cut.ply/cut.glb: %v, want not there", err)
	}
	if got := names(t, tr, "whole.ply"); slices.Contains(got, outputs.ErrorName) || !slices.Contains(got, "whole.glb") {
		t.Errorf("whole.ply lists %v", got)
	}
}

// modelParts are a GEM model and the files it is made from.
var modelParts = []string{"tank_small.mdl", "eply_tangents_textures.ply", "eply_multi_uv.ply", "eply_mirrored_mror.ply", "gun_fire.anm", "box.vol"}

func modelTree(t *testing.T, src string) string {
	for _, n := range modelParts {
		copyFile(t, filepath.Join("..", "testdata", "gem", n), filepath.Join(src, n))
	}
	return stamp(t, src)
}

// checkNarrowed: a model part its owner alone may read narrows the
// model's folder and outputs to the owner, once the model was read.
func checkNarrowed(t *testing.T, tr vfs.Tree, src string) {
	ctx := context.Background()
	if err := os.Chmod(filepath.Join(src, "eply_multi_uv.ply"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(filepath.Join(src, "eply_multi_uv.ply"), 0o644) })
	readAll(t, tr, "tank_small.mdl/tank_small.glb")
	want := map[string]iofs.FileMode{
		"tank_small.mdl":                                iofs.ModeDir | 0o500,
		"tank_small.mdl/tank_small.glb":                 0o400,
		"tank_small.mdl/header.json":                    0o400,
		"eply_multi_uv.ply/header.json":                 0o400,
		"eply_mirrored_mror.ply":                        iofs.ModeDir | 0o555,
		"eply_mirrored_mror.ply/eply_mirrored_mror.glb": 0o444,
	}
	// The mount tells the kernel of a narrowing found by a read after
	// that read's reply (fs's DepsFound): the folder's attributes the
	// kernel holds from before may stand a moment longer. Wait for them,
	// within the watchdog's bound (a bug's bound, not a speed).
	deadline := time.Now().Add(fusetest.Guard / 2)
	for {
		var wrong []string
		for p, w := range want {
			if i, err := tr.Stat(ctx, p); err != nil || i.Mode != w {
				wrong = append(wrong, fmt.Sprintf("%s: %v (%v), want %v", p, i.Mode, err, w))
			}
		}
		if len(wrong) == 0 {
			return
		} else if time.Now().After(deadline) {
			slices.Sort(wrong)
			t.Fatal(strings.Join(wrong, "\n"))
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// checkPartChange: a model's part replaced remakes the model: its .glb
// becomes what a fresh tree of the changed source shows.
func checkPartChange(t *testing.T, tr vfs.Tree, src string) {
	const glb = "tank_small.mdl/tank_small.glb"
	before := readAll(t, tr, glb)
	other, err := os.ReadFile(filepath.Join("..", "testdata", "gem", "pm01_gem3.ply"))
	if err != nil {
		t.Fatal(err)
	}
	replace(t, filepath.Join(src, "eply_multi_uv.ply"), other)
	fresh, err := vfs.New(vfs.Config{Source: src, NoWatch: true})
	if err != nil {
		t.Fatal(err)
	}
	want := readAll(t, fresh, glb)
	fresh.Close()
	if bytes.Equal(want, before) {
		t.Fatalf("the part's change does not change the model")
	}
	// The change reaches a door through its watcher: wait for it, within
	// the watchdog's bound (a bug's bound, not a speed).
	deadline := time.Now().Add(fusetest.Guard / 2)
	for {
		got := readAll(t, tr, glb)
		if bytes.Equal(got, want) {
			return
		} else if time.Now().After(deadline) {
			t.Fatalf("%s: still %d bytes (%d before the change), want the changed model's %d", glb, len(got), len(before), len(want))
		}
		time.Sleep(20 * time.Millisecond)
	}
}
