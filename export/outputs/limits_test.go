package outputs_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/vfs/vfstest"
)

// convertDir converts m within its limits into a fresh folder as `meshfs
// convert` does (the tree the mount shows: vfstest.Convert) and returns the
// folder and its failure.
func convertDir(t *testing.T, m *outputs.Mesh) (string, error) {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "out")
	return dst, vfstest.Convert(t, m.Path, &m.Limits, dst)
}

// wantLimitError checks that cause (the error of the output that made the
// folder fail, as its own function gives it) is a limit's FormatError,
// that err (the folder's failure) and the folder's error.txt report the
// limit called flag, and that the folder has no output named in absent.
func wantLimitError(t *testing.T, dir string, err, cause error, flag string, absent ...string) {
	t.Helper()
	if !errors.Is(cause, decode.ErrLimit) {
		t.Fatalf("error %v does not wrap decode.ErrLimit", cause)
	}
	var fe *decode.FormatError
	if !errors.As(cause, &fe) {
		t.Fatalf("error %v is not a FormatError", cause)
	}
	if err == nil || !strings.Contains(err.Error(), flag) {
		t.Fatalf("the folder's failure %v does not name the %s limit", err, flag)
	}
	msg, rerr := os.ReadFile(filepath.Join(dir, outputs.ErrorName))
	if rerr != nil {
		t.Fatalf("no error.txt: %v", rerr)
	}
	if !strings.Contains(string(msg), flag) {
		t.Errorf("error.txt does not name the %s limit:\n%s", flag, msg)
	}
	if _, err := os.Stat(filepath.Join(dir, outputs.HeaderName)); err != nil {
		t.Errorf("no header.json beside error.txt: %v", err)
	}
	for _, name := range absent {
		if _, err := os.Stat(filepath.Join(dir, name)); err == nil {
			t.Errorf("%s was written despite the limit", name)
		}
	}
}

func openFixture(t *testing.T, rel string) *outputs.Mesh {
	t.Helper()
	m, err := outputs.Open(filepath.Join(repoRoot(t), "testdata", rel))
	if err != nil || m == nil {
		t.Fatalf("%s: %v (mesh %v)", rel, err, m)
	}
	return m
}

func TestDefaultLimits(t *testing.T) {
	m := openFixture(t, "gem/pm01_gem3.ply")
	if !reflect.DeepEqual(m.Limits, outputs.DefaultLimits) {
		t.Errorf("Open gave limits %+v, want the defaults %+v", m.Limits, outputs.DefaultLimits)
	}
	d := outputs.DefaultLimits
	if d.MaxSourceSize <= 0 || d.Timeout <= 0 || d.MaxOutputSize <= 0 {
		t.Errorf("a default limit is off: %+v", d)
	}
}

func TestMaxSourceSize(t *testing.T) {
	m := openFixture(t, "gem/pm01_gem3.ply")
	fi, _ := os.Stat(m.Path)
	m.Limits.MaxSourceSize = fi.Size() - 1
	dir, err := convertDir(t, m)
	_, cause := m.GLBFile(context.Background())
	wantLimitError(t, dir, err, cause, outputs.FlagMaxSourceSize, m.GLBName(), m.OBJName())
	// The scan is not limited: header.json and chunks/ still show the file.
	if _, err := os.Stat(filepath.Join(dir, outputs.ChunksDir)); err != nil {
		t.Errorf("no chunks/ for an oversized file: %v", err)
	}
	if _, err := m.GLBFile(context.Background()); !errors.Is(err, decode.ErrLimit) {
		t.Errorf("GLBFile: %v, want a limit error", err)
	}
	if _, _, err := m.OBJFiles(context.Background()); !errors.Is(err, decode.ErrLimit) {
		t.Errorf("OBJFiles: %v, want a limit error", err)
	}

	m.Limits.MaxSourceSize = fi.Size()
	if _, err := convertDir(t, m); err != nil {
		t.Errorf("a file exactly at the limit failed: %v", err)
	}
}

// TestMaxSourceSizeCompanion: the limit also holds for the companion file a
// decoder opens (a .msh's blob), and the error names that file.
func TestMaxSourceSizeCompanion(t *testing.T) {
	m := openFixture(t, "tfever/tf2_cube.msh")
	mi, _ := os.Stat(m.Path)
	bi, err := os.Stat(m.Path + ".blob")
	if err != nil {
		t.Fatal(err)
	}
	if bi.Size() <= mi.Size() {
		t.Fatalf("fixture blob (%d bytes) is not larger than its script (%d)", bi.Size(), mi.Size())
	}
	m.Limits.MaxSourceSize = mi.Size()
	dir, err := convertDir(t, m)
	_, cause := m.GLBFile(context.Background())
	wantLimitError(t, dir, err, cause, outputs.FlagMaxSourceSize, m.GLBName())
	if !strings.Contains(cause.Error(), "tf2_cube.msh.blob") {
		t.Errorf("the error does not name the blob: %v", cause)
	}
	if !strings.Contains(err.Error(), "tf2_cube.msh.blob") {
		t.Errorf("the error does not name the blob: %v", err)
	}
}

func TestMaxOutputSize(t *testing.T) {
	m := openFixture(t, "gem/pm01_gem3.ply")
	full, err := m.GLBFile(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	m.Limits.MaxOutputSize = int64(len(full)) - 1
	if _, err := m.GLBFile(context.Background()); !errors.Is(err, decode.ErrLimit) || !strings.Contains(err.Error(), m.GLBName()) {
		t.Errorf("GLBFile over the limit: %v", err)
	}
	dir, err := convertDir(t, m)
	_, cause := m.GLBFile(context.Background())
	wantLimitError(t, dir, err, cause, outputs.FlagMaxOutputSize, m.GLBName())
	// A broken mesh's folder has no geometry, not even the smaller .obj
	// (the folder table's rule); its header.json says why.
	if _, err := os.Stat(filepath.Join(dir, m.OBJName())); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the .obj of a broken mesh was written: %v", err)
	}
	if h, err := os.ReadFile(filepath.Join(dir, outputs.HeaderName)); err != nil || !strings.Contains(string(h), outputs.FlagMaxOutputSize) {
		t.Errorf("header.json does not name the limit: %q %v", h, err)
	}

	// Chunks are refused before they are loaded.
	st, err := m.Scan(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c := st.Chunks[len(st.Chunks)-1]
	m.Limits.MaxOutputSize = c.Size - 1
	if _, err := m.ChunkBytes(&c); !errors.Is(err, decode.ErrLimit) || !strings.Contains(err.Error(), c.Name) {
		t.Errorf("ChunkBytes over the limit: %v", err)
	}
	m.Limits.MaxOutputSize = 0 // no limit
	if _, err := m.ChunkBytes(&c); err != nil {
		t.Errorf("ChunkBytes without a limit: %v", err)
	}
}

// stall is a format whose Scan or Decode waits until its context ends, as a
// decoder stuck on a pathological file would if it polled its context.
type stall struct{ scan bool }

func (stall) Name() string                        { return "stall" }
func (stall) Sniff(name string, head []byte) bool { return false }
func (stall) StripExt(name string) string         { return strings.TrimSuffix(name, ".stall") }
func (f stall) Scan(ctx context.Context, src *decode.Source) (*decode.Structure, error) {
	st := &decode.Structure{Format: "stall", Chunks: []decode.Chunk{{Name: "all.bin", Length: src.Size, Size: src.Size}}}
	if f.scan {
		<-ctx.Done()
		return st, ctx.Err()
	}
	return st, nil
}
func (stall) Decode(ctx context.Context, src *decode.Source) (*decode.Scene, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

func TestTimeout(t *testing.T) {
	ctx := context.Background()
	for _, scan := range []bool{false, true} {
		m := outputs.NewMemory("x.stall", stall{scan}, map[string][]byte{"x.stall": []byte("data")})
		m.Limits.Timeout = 20 * time.Millisecond
		// What fails the folder: the scan that stalls, or the decoding
		// behind the geometry.
		st, cause := m.Scan(ctx)
		if !scan {
			if cause != nil {
				t.Fatalf("scan: %v", cause)
			}
			_, cause = m.GLBFile(ctx)
		}
		if !errors.Is(cause, decode.ErrLimit) {
			t.Fatalf("scan %v: error %v does not wrap decode.ErrLimit", scan, cause)
		}
		var fe *decode.FormatError
		if !errors.As(cause, &fe) {
			t.Fatalf("scan %v: error %v is not a FormatError", scan, cause)
		}
		if msg := outputs.ErrorText(cause); !strings.Contains(string(msg), outputs.FlagTimeout) {
			t.Errorf("scan %v: error.txt does not name the %s limit:\n%s", scan, outputs.FlagTimeout, msg)
		}
		hdr, err := m.Header(st, cause)
		if err != nil || !strings.Contains(string(outputs.HeaderWithError(hdr, cause)), outputs.FlagTimeout) {
			t.Errorf("scan %v: header.json does not name the limit: %s %v", scan, hdr, err)
		}
		if _, err := m.GLBFile(ctx); !errors.Is(err, decode.ErrLimit) {
			t.Errorf("GLBFile: %v, want a limit error", err)
		}
		if _, _, err := m.OBJFiles(ctx); !errors.Is(err, decode.ErrLimit) {
			t.Errorf("OBJFiles: %v, want a limit error", err)
		}
	}

	// The caller's own cancellation is not a limit.
	m := outputs.NewMemory("x.stall", stall{}, map[string][]byte{"x.stall": []byte("data")})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	if _, err := m.GLBFile(ctx); errors.Is(err, decode.ErrLimit) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("caller's deadline reported as %v", err)
	}
}

// TestMemoryMatchesTree: an in-memory mesh (NewMemory) gives, output by
// output (the functions the tree makes each file with), the same files as
// the tree convert and the mount read shows for the file on disk, for
// every fixture.
func TestMemoryMatchesTree(t *testing.T) {
	ctx := context.Background()
	tr := vfstest.Tree(t, "/", nil)
	for _, m := range meshFiles(t, filepath.Join(repoRoot(t), "testdata")) {
		files := map[string][]byte{}
		for _, p := range append([]string{m.Path}, siblings(m.Path)...) {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			files[filepath.Base(p)] = b
		}
		mm := outputs.NewMemory(filepath.Base(m.Path), m.Format, files)
		if m.IsModel() || outputs.InProject(m) {
			// A model reads files beneath its asset roots, and a mesh
			// of a project its project's materials, which a mesh in
			// memory has none of: it reads the disk too.
			mm = m
		}
		made, ferr := vfstest.Folder(ctx, tr, vfstest.Name(t, "/", m.Path))
		if ferr != nil {
			t.Errorf("%s: %v", m.Path, ferr)
			continue
		}
		st, err := mm.Scan(ctx)
		if err != nil {
			t.Errorf("%s: in memory: %v", m.Path, err)
			continue
		}
		chunks := map[string]*decode.Chunk{}
		for i := range st.Chunks {
			chunks[outputs.ChunksDir+"/"+decode.SafeName(st.Chunks[i].Name)] = &st.Chunks[i]
		}
		n := 0
		for _, f := range made {
			if strings.HasSuffix(f.Name, "/") {
				continue
			}
			n++
			var g []byte
			var err error
			e, ok := mm.Entry(f.Name)
			switch {
			case chunks[f.Name] != nil:
				g, err = mm.ChunkBytes(chunks[f.Name])
			case !ok:
				t.Errorf("%s: the tree shows %s, not in the folder table", m.Path, f.Name)
				continue
			case e.Output == outputs.OutHeader:
				g, err = mm.Header(st, nil)
			case e.Output == outputs.OutGLB:
				var glbs [][]byte
				if glbs, err = mm.GLBFiles(ctx); err == nil {
					g = glbs[e.Part]
				}
			case e.Output == outputs.OutOBJ:
				var o, l []byte
				o, l, err = mm.OBJFiles(ctx)
				g = [][]byte{o, l}[e.Part]
			case e.Output == outputs.OutPreview:
				if g, err = mm.PreviewFile(ctx); err == nil {
					g, err = mm.PaddedPreview(g)
				}
			case e.Output == outputs.OutAnimated:
				g, err = mm.AnimatedGLBFile(ctx)
			default:
				t.Errorf("%s: the tree shows %s of a healthy mesh", m.Path, f.Name)
				continue
			}
			if err != nil {
				t.Errorf("%s: %s in memory: %v", m.Path, f.Name, err)
			} else if !bytes.Equal(g, f.Data) {
				t.Errorf("%s: %s differs (%d vs %d bytes)", m.Path, f.Name, len(g), len(f.Data))
			}
		}
		if n < 2 {
			t.Errorf("%s: the tree shows only %d files", m.Path, n)
		}
	}
}

func TestSemaphore(t *testing.T) {
	s := outputs.NewSemaphore(2)
	ctx := context.Background()
	for range 2 {
		if s.Acquire(ctx) != nil {
			t.Fatal("two slots of two not granted")
		}
	}
	full, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.Acquire(full); !errors.Is(err, context.Canceled) {
		t.Fatalf("a third holder got %v, want to wait until cancelled", err)
	}
	s.Release()
	if err := s.Acquire(full); err != nil {
		t.Fatalf("a free slot was refused: %v", err)
	}
}
