package clienttest

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/meshfs/meshfs/decode/decodetest"
	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/internal/fusetest"
)

// repoRoot is the repository root, relative to this package.
const repoRoot = "../.."

// sourceRoot is one folder of source files the test mounts.
type sourceRoot struct {
	label string // "testdata", "realdata", ...: prefixes paths in messages and the warnings list
	dir   string
	// whole: every mesh file of the root must convert (the root holds no
	// deliberately broken file, as testdata/ does).
	whole bool
}

// sharedRoots are the folders of ../shared the test mounts beside
// testdata/: the real files of realdata/ and the UNIGINE and Transport
// Fever samples of issue 17 (every version and the NaN-holding meshes),
// and the GEM mod trees of issue 15, whose meshes resolve their materials
// to textures.
var sharedRoots = []sourceRoot{
	{"realdata", "realdata", true},
	{"unigine", filepath.Join("assets", "unigine"), true},
	{"tf-nan", filepath.Join("assets", "tf-nan"), true},
	{"gem-centurion", filepath.Join("assets", "gem-centurion"), true},
	{"gem-pilot", filepath.Join("assets", "gem-pilot"), true},
}

// sourceRoots returns testdata/ and the sharedRoots that are present
// (decodetest.Shared: under CI a missing one fails the test).
func sourceRoots(t *testing.T) []sourceRoot {
	t.Helper()
	roots := []sourceRoot{{"testdata", filepath.Join(repoRoot, "testdata"), false}}
	for _, sr := range sharedRoots {
		if dir, ok := decodetest.Shared(t, sr.dir); ok {
			roots = append(roots, sourceRoot{sr.label, dir, sr.whole})
		}
	}
	for i := range roots {
		abs, err := filepath.Abs(roots[i].dir)
		if err != nil {
			t.Fatal(err)
		}
		roots[i].dir = abs
	}
	return roots
}

// buildMeshfs builds the command into a temporary folder.
func buildMeshfs(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "meshfs")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/meshfs")
	cmd.Dir = repoRoot
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/meshfs: %v\n%s", err, out)
	}
	return bin
}

// mountTree mounts src with `meshfs mount` and returns the mount point; the
// mount is undone when the test ends.
func mountTree(t *testing.T, bin, src string) string {
	t.Helper()
	mnt := t.TempDir()
	var stderr bytes.Buffer
	// A cache folder of its own: tests never touch the user's real one.
	cmd := exec.Command(bin, "mount", "--cache-dir", t.TempDir(), src, mnt)
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatalf("meshfs mount: %v", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		// meshfs unmounts on SIGTERM; a lazy unmount covers a daemon that
		// died or hangs, so the test never leaves a mount behind.
		cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(20 * time.Second):
			exec.Command("fusermount3", "-u", "-z", mnt).Run()
			cmd.Process.Kill()
			<-exited
		}
		if isMountpoint(mnt) {
			exec.Command("fusermount3", "-u", "-z", mnt).Run()
		}
	})
	// The daemon mounts, then serves; wait for the mount point to change
	// device (or for the daemon to fail). This bounds a start-up, it does
	// not measure anything.
	for i := 0; ; i++ {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("meshfs mount %s exited before mounting: %v\n%s", src, err, stderr.String())
		default:
		}
		if isMountpoint(mnt) {
			return mnt
		}
		if i > 1200 {
			t.Fatalf("meshfs mount %s: not mounted after a minute\n%s", src, stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// isMountpoint reports whether dir is on another device than its parent.
func isMountpoint(dir string) bool {
	var a, b syscall.Stat_t
	if syscall.Stat(dir, &a) != nil || syscall.Stat(filepath.Dir(dir), &b) != nil {
		return false
	}
	return a.Dev != b.Dev
}

// meshFolder is one mesh file's folder as the mount shows it.
type meshFolder struct {
	root   sourceRoot
	rel    string // the source file's path relative to root.dir (= the folder's path in the mount)
	dir    string // the folder in the mount
	source string // the source file
	glb    string // NAME.glb in the mount ("" when absent)
	obj    string // NAME.obj in the mount ("" when absent)
	hasOBJ bool   // the folder table has NAME.obj (outputs.Mesh.HasOBJ)
	// animated is NAME.animated.glb in the mount ("" when absent), and
	// anims the animation files it attaches (outputs.Mesh.Animations).
	animated string
	anims    []string
	errTxt   string // contents of error.txt, if any
}

// label names the folder in messages: "testdata/gem/x.ply".
func (m *meshFolder) label() string { return m.root.label + "/" + filepath.ToSlash(m.rel) }

// meshFolders walks the mounted tree mnt of root and returns every mesh
// folder, in path order. Every source file a format claims must appear as
// one (checked against the source tree, not the mount's own listing).
func meshFolders(t *testing.T, root sourceRoot, mnt string) []*meshFolder {
	t.Helper()
	var out []*meshFolder
	err := filepath.WalkDir(root.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		m, err := outputs.Open(p)
		if err != nil || m == nil {
			return nil // not a mesh (or unreadable): the mount passes it through
		}
		if m.IsModel() {
			return nil // an assembled model: TestModelClients
		}
		rel, _ := filepath.Rel(root.dir, p)
		mf := &meshFolder{root: root, rel: rel, dir: filepath.Join(mnt, rel), source: p, hasOBJ: m.HasOBJ()}
		ents, err := os.ReadDir(mf.dir)
		if err != nil {
			t.Errorf("%s: mesh folder not readable in the mount: %v", mf.label(), err)
			return nil
		}
		for _, e := range ents {
			switch name := e.Name(); {
			case name == m.GLBName():
				mf.glb = filepath.Join(mf.dir, name)
			case name == m.OBJName():
				mf.obj = filepath.Join(mf.dir, name)
			case name == m.AnimatedGLBName():
				mf.animated = filepath.Join(mf.dir, name)
			case name == outputs.ErrorName:
				b, err := os.ReadFile(filepath.Join(mf.dir, name))
				if err != nil {
					b = []byte(err.Error())
				}
				mf.errTxt = strings.TrimSpace(string(b))
			}
		}
		if mf.anims, err = m.Animations(context.Background()); err != nil {
			t.Errorf("%s: animations: %v", mf.label(), err)
		}
		if (len(mf.anims) > 0) != (mf.animated != "") {
			t.Errorf("%s: animation files %q attach, the mount shows %q", mf.label(), mf.anims, mf.animated)
		}
		out = append(out, mf)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].rel < out[j].rel })
	return out
}

// lookTool finds a client program or fails the test: the clients are the
// point of this test, so a missing one is never a skip.
func lookTool(t *testing.T, name, install string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		t.Fatalf("%s not found (%s)", name, install)
	}
	return p
}

// TestMain reaps what the tests leave (internal/fusetest): a daemon or a
// mount outlives no run, however it ends.
func TestMain(m *testing.M) {
	stop := fusetest.StartReaper()
	code := m.Run()
	stop()
	os.Exit(code)
}
