// Package outputs is where decoders meet exporters: for one source mesh file
// it names the files meshfs shows (NAME.glb, NAME.obj, NAME.mtl, header.json,
// chunks/, error.txt) and produces each of them. Both `meshfs convert` and the
// mount use it, so the two always show the same bytes. It knows no format by
// name: decoders come from decode/formats, exporters from export/*.
package outputs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/formats"
	"github.com/meshfs/meshfs/export/gltf"
	"github.com/meshfs/meshfs/export/obj"
)

// Fixed output names.
const (
	HeaderName = "header.json"
	ErrorName  = "error.txt"
	ChunksDir  = "chunks"
)

// Mesh is one source file that a decoder claims.
type Mesh struct {
	Path   string // source path
	Format decode.Format
	Base   string // NAME: the file name without its format extension
}

// Open sniffs the file at path; it returns nil, nil for a file meshfs does
// not convert.
func Open(path string) (*Mesh, error) {
	f, err := formats.SniffFile(path)
	if err != nil || f == nil {
		return nil, err
	}
	return New(path, f), nil
}

// New describes path as a mesh of format f.
func New(path string, f decode.Format) *Mesh {
	return &Mesh{Path: path, Format: f, Base: decode.SafeName(f.StripExt(filepath.Base(path)))}
}

// GLBName, OBJName and MTLName are the names of the exported files.
func (m *Mesh) GLBName() string { return m.Base + ".glb" }
func (m *Mesh) OBJName() string { return m.Base + ".obj" }
func (m *Mesh) MTLName() string { return m.Base + ".mtl" }

// source opens the file for a decoder; the returned func closes it. Sibling
// files are closed by the decoder that opens them (decode.Source's contract),
// since chunk loaders may reopen them long after the scan has returned.
func (m *Mesh) source() (*decode.Source, func(), error) {
	f, err := os.Open(m.Path)
	if err != nil {
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	dir := filepath.Dir(m.Path)
	src := &decode.Source{
		Name: m.Path,
		R:    f,
		Size: fi.Size(),
		OpenSibling: func(name string) (io.ReaderAt, int64, error) {
			if name != filepath.Base(name) || name == "." || name == ".." {
				return nil, 0, fmt.Errorf("sibling name %q is not a plain file name", name)
			}
			sf, err := os.Open(filepath.Join(dir, name))
			if err != nil {
				return nil, 0, err
			}
			sfi, err := sf.Stat()
			if err != nil {
				sf.Close()
				return nil, 0, err
			}
			return sf, sfi.Size(), nil
		},
	}
	return src, func() { f.Close() }, nil
}

// Scan reads the file's structure without building geometry. Like
// decode.Format.Scan it may return a partial structure with an error.
func (m *Mesh) Scan(ctx context.Context) (*decode.Structure, error) {
	src, done, err := m.source()
	if err != nil {
		return nil, err
	}
	defer done()
	return m.Format.Scan(ctx, src)
}

// Decode builds the scene.
func (m *Mesh) Decode(ctx context.Context) (*decode.Scene, error) {
	src, done, err := m.source()
	if err != nil {
		return nil, err
	}
	defer done()
	return m.Format.Decode(ctx, src)
}

// ChunkBytes returns the contents of one chunk of st.
func (m *Mesh) ChunkBytes(c *decode.Chunk) ([]byte, error) {
	if c.Load != nil {
		return c.Bytes(nil)
	}
	f, err := os.Open(m.Path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return c.Bytes(f)
}

// Header renders header.json from a (possibly partial) structure; a scan
// error is recorded under "error" so that grep finds broken files too.
func (m *Mesh) Header(st *decode.Structure, scanErr error) ([]byte, error) {
	var f decode.Fields
	f.Add("file", filepath.Base(m.Path))
	f.Add("format", m.Format.Name())
	if st != nil {
		f = append(f, st.Header...)
	}
	if scanErr != nil {
		f.Add("error", scanErr.Error())
	}
	return decode.HeaderJSON(f)
}

// GLB exports a scene as binary glTF.
func GLB(s *decode.Scene) ([]byte, error) { return gltf.Encode(s) }

// OBJ exports a scene as Wavefront OBJ and its material library.
func (m *Mesh) OBJ(s *decode.Scene) (objBytes, mtlBytes []byte, err error) {
	return obj.Encode(s, m.MTLName())
}

// GLBFile decodes m and exports NAME.glb, failing with the error WriteDir
// records for it. The mount produces each output on its own through these
// helpers, so `convert` and the mount show the same bytes.
func (m *Mesh) GLBFile(ctx context.Context) ([]byte, error) {
	scene, err := m.Decode(ctx)
	if err != nil {
		return nil, err
	}
	return m.exportGLB(scene)
}

func (m *Mesh) exportGLB(scene *decode.Scene) ([]byte, error) {
	b, err := GLB(scene)
	if err != nil {
		return nil, fmt.Errorf("%s: glb export: %w", m.Path, err)
	}
	return b, nil
}

// OBJFiles decodes m and exports NAME.obj and NAME.mtl, failing with the
// error WriteDir records for them.
func (m *Mesh) OBJFiles(ctx context.Context) (objBytes, mtlBytes []byte, err error) {
	scene, err := m.Decode(ctx)
	if err != nil {
		return nil, nil, err
	}
	return m.exportOBJ(scene)
}

func (m *Mesh) exportOBJ(scene *decode.Scene) (objBytes, mtlBytes []byte, err error) {
	o, l, err := m.OBJ(scene)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: obj export: %w", m.Path, err)
	}
	return o, l, nil
}

// ErrorText is the contents of error.txt: one line per failure, each naming
// the file, the offset, the field and the reason (FormatError's form).
func ErrorText(errs ...error) []byte {
	var b strings.Builder
	for _, err := range errs {
		if err != nil {
			b.WriteString(strings.TrimSpace(err.Error()))
			b.WriteByte('\n')
		}
	}
	return []byte(b.String())
}

// WriteDir writes every output of m into dir (created as needed) exactly as
// the mount shows them, and returns the joined error of whatever failed
// (also written to error.txt).
func (m *Mesh) WriteDir(ctx context.Context, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var errs []error
	write := func(name string, b []byte) {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			errs = append(errs, err)
		}
	}

	st, scanErr := m.Scan(ctx)
	if scanErr != nil {
		errs = append(errs, scanErr)
	}
	if hdr, err := m.Header(st, scanErr); err == nil {
		write(HeaderName, hdr)
	} else {
		errs = append(errs, err)
	}
	if st != nil && len(st.Chunks) > 0 {
		cdir := filepath.Join(dir, ChunksDir)
		if err := os.MkdirAll(cdir, 0o755); err != nil {
			errs = append(errs, err)
		}
		for i := range st.Chunks {
			c := &st.Chunks[i]
			b, err := m.ChunkBytes(c)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			write(filepath.Join(ChunksDir, decode.SafeName(c.Name)), b)
		}
	}

	if scanErr == nil {
		scene, err := m.Decode(ctx)
		if err != nil {
			errs = append(errs, err)
		} else {
			if b, err := m.exportGLB(scene); err != nil {
				errs = append(errs, err)
			} else {
				write(m.GLBName(), b)
			}
			if o, l, err := m.exportOBJ(scene); err != nil {
				errs = append(errs, err)
			} else {
				write(m.OBJName(), o)
				write(m.MTLName(), l)
			}
		}
	}
	if len(errs) > 0 {
		write(ErrorName, ErrorText(errs...))
	}
	return errors.Join(errs...)
}
