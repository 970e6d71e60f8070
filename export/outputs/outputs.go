// Package outputs is where decoders meet exporters: for one source mesh file
// it names the files meshfs shows (NAME.glb, NAME.obj, NAME.mtl,
// NAME.preview.png, header.json, chunks/, error.txt) and produces each of
// them, one function per output. The tree (package vfs), which `meshfs
// convert` and the mount both read, makes a folder through them alone. It
// knows no format by name: decoders come from decode/formats, exporters
// from export/*.
package outputs

import (
	"bytes"
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
	"github.com/meshfs/meshfs/internal/source"
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
	// Limits bound each conversion; New sets DefaultLimits.
	Limits Limits
	// Tree is the top of the tree the mesh belongs to (the mounted folder,
	// convert's argument): asset roots are looked for up to it, never
	// above. "" lets the walk go up to the file system's root.
	Tree string

	// info is what the folder listing of a model knows (model.go).
	info *modelInfo

	// mem, when set, holds the source file and its companions by base name
	// instead of the file system (NewMemory).
	mem map[string][]byte
}

// Open sniffs the file at path, a path a user named: the symbolic links in
// it are followed once, as the user asked, to the real file, which the mesh
// then reads as New says (Base still comes from path). Its Path is
// absolute, as a mount's are, so that errors name the file the same way in
// `convert`'s folder as in the mount's. It returns nil, nil for a file
// meshfs does not convert.
func Open(path string) (*Mesh, error) {
	real, err := RealPath(path)
	if err != nil {
		return nil, err
	}
	f, err := sniffSource(source.Disk, real)
	if err != nil || f == nil {
		return nil, err
	}
	m := New(real, f)
	m.Base = New(path, f).Base
	return m, nil
}

// RealPath is the absolute path of the file path, a path a user named, with
// the symbolic links in it followed: the path a mount of its folder names
// it by.
func RealPath(path string) (string, error) {
	// Absolute first: a relative path is relative to the working folder,
	// which os.Getwd may name by a path with links in it ($PWD).
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// OpenSource sniffs the file at path, a path of the source tree (no link
// followed; beneath an archive's path, its entry: internal/source), and describes
// it as New says, converted within limits (through limits.View); nil, nil
// for a file meshfs does not convert.
func OpenSource(path string, limits Limits) (*Mesh, error) {
	format, err := sniffSource(limits.view(), path)
	if err != nil || format == nil {
		return nil, err
	}
	m := New(path, format)
	m.Limits = limits
	return m, nil
}

// sniffSource sniffs the head of the file at path (formats.SniffReader),
// opened through the view v.
func sniffSource(v source.View, path string) (decode.Format, error) {
	f, err := v.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return formats.SniffReader(path, io.NewSectionReader(f, 0, f.Size()))
}

// New describes path as a mesh of format f. Its files are opened as
// package source says: path follows no symbolic link, the files it names
// are opened beneath its folder, and each must be a regular file.
func New(path string, f decode.Format) *Mesh {
	m := &Mesh{Path: path, Format: f, Base: decode.SafeName(f.StripExt(filepath.Base(path))), Limits: DefaultLimits}
	if m.IsModel() {
		m.info = &modelInfo{}
	}
	return m
}

// NewMemory describes an in-memory mesh of format f: files holds the file
// called name and its companions, by base name. Tests convert generated
// files through it without touching the disk.
func NewMemory(name string, f decode.Format, files map[string][]byte) *Mesh {
	m := New(name, f)
	m.mem = files
	return m
}

// openFile opens the file at path (a base name for in-memory meshes).
func (m *Mesh) openFile(path string) (io.ReaderAt, int64, func(), error) {
	if m.mem != nil {
		b, ok := m.mem[filepath.Base(path)]
		if !ok {
			return nil, 0, nil, &os.PathError{Op: "open", Path: path, Err: os.ErrNotExist}
		}
		return bytes.NewReader(b), int64(len(b)), func() {}, nil
	}
	f, err := m.Limits.view().Open(path)
	if err != nil {
		return nil, 0, nil, err
	}
	return f, f.Size(), func() { f.Close() }, nil
}

// openSibling opens the file called name beneath the mesh's folder.
func (m *Mesh) openSibling(name string) (io.ReaderAt, int64, error) {
	if m.mem != nil {
		r, size, _, err := m.openFile(name)
		return r, size, err
	}
	f, err := m.Limits.view().OpenBeneath(filepath.Dir(m.Path), name)
	if err != nil {
		return nil, 0, err
	}
	return f, f.Size(), nil
}

// Packed reports whether m's source is an entry of an archive (internal/source):
// it has no file of its own to read windows of.
func (m *Mesh) Packed() bool {
	_, read, err := m.Limits.view().Stat(m.Path)
	return m.mem == nil && err == nil && read.Path != m.Path
}

// Sources returns the paths of the files m's outputs are made from: the
// source file first, then its companions (decode.Companion).
func (m *Mesh) Sources() []string {
	paths := []string{m.Path}
	if c, ok := m.Format.(decode.Companion); ok {
		dir := filepath.Dir(m.Path)
		for _, name := range c.Companions(filepath.Base(m.Path)) {
			paths = append(paths, filepath.Join(dir, name))
		}
	}
	return paths
}

// GLBName, OBJName and MTLName are the names of the exported files.
func (m *Mesh) GLBName() string { return m.Base + ".glb" }
func (m *Mesh) OBJName() string { return m.Base + ".obj" }
func (m *Mesh) MTLName() string { return m.Base + ".mtl" }

// source opens the file for a decoder; the returned func closes it. Sibling
// files are closed by the decoder that opens them (decode.Source's contract),
// since chunk loaders may reopen them long after the scan has returned.
func (m *Mesh) source() (*decode.Source, func(), error) {
	r, size, done, err := m.openFile(m.Path)
	if err != nil {
		return nil, nil, err
	}
	src := &decode.Source{
		Name: m.Path,
		R:    r,
		Size: size,
		OpenSibling: func(name string) (io.ReaderAt, int64, error) {
			if name != filepath.Base(name) || name == "." || name == ".." {
				return nil, 0, fmt.Errorf("sibling name %q is not a plain file name", name)
			}
			return m.openSibling(name)
		},
	}
	if m.IsModel() {
		src.OpenAsset = m.openAsset
	}
	src.Reopen = func() (io.ReaderAt, func(), error) {
		r, _, done, err := m.openFile(m.Path)
		return r, done, err
	}
	return src, done, nil
}

// Scan reads the file's structure without building geometry, within
// Limits.Timeout. Like decode.Format.Scan it may return a partial structure
// with an error.
func (m *Mesh) Scan(ctx context.Context) (*decode.Structure, error) {
	src, done, err := m.source()
	if err != nil {
		return nil, err
	}
	defer done()
	ctx, finish := m.deadline(ctx, "scan")
	st, err := m.Format.Scan(ctx, src)
	return st, finish(err)
}

// ScanDecode scans and decodes m in one pass when its format can
// (decode.ScanDecoder), within MaxSourceSize and Limits.Timeout. ok is false
// when it cannot or the pass failed: the caller then runs Scan and Decode
// (or GLBFile), which report any error in their own terms.
func (m *Mesh) ScanDecode(ctx context.Context) (st *decode.Structure, scene *decode.Scene, ok bool) {
	sd, can := m.Format.(decode.ScanDecoder)
	if !can || m.IsModel() {
		return nil, nil, false
	}
	src, done, err := m.limitedSource()
	if err != nil {
		return nil, nil, false
	}
	defer done()
	ctx, finish := m.deadline(ctx, "scan and decode")
	st, scene, err = sd.ScanDecode(ctx, src)
	if finish(err) != nil || st == nil || scene == nil {
		return nil, nil, false
	}
	return st, scene, true
}

// CanScanDecode reports whether m's format scans and decodes in one pass.
func (m *Mesh) CanScanDecode() bool {
	_, can := m.Format.(decode.ScanDecoder)
	return can && !m.IsModel()
}

// GLBOf exports NAME.glb from m's scene (from ScanDecode), failing with the
// error GLBFile would give for it, within Limits.Timeout.
func (m *Mesh) GLBOf(ctx context.Context, scene *decode.Scene) (b []byte, err error) {
	ctx, finish := m.deadline(ctx, "texture decode and glb export")
	defer func() { err = finish(err) }()
	if _, err := m.Textures(ctx, scene); err != nil {
		return nil, err
	}
	return m.exportGLB(scene)
}

// Textures resolves the scene's materials (materials.go) in place, images
// decoded until ctx ends (its error then), and returns the files it read.
func (m *Mesh) Textures(ctx context.Context, scene *decode.Scene) ([]Dep, error) {
	var pixels int64
	r := m.newResolution(true).withImages(ctx, &pixels)
	r.resolveMaterials(scene.Materials)
	return r.deps, ctx.Err()
}

// resolve resolves the scene's materials in place; without images their
// maps carry only where the texture files are (decode.Image.Ref).
func (m *Mesh) resolve(scene *decode.Scene, images bool) []Dep {
	r := m.newResolution(images)
	r.resolveMaterials(scene.Materials)
	return r.deps
}

// Decode builds the scene, within Limits.Timeout and MaxSourceSize.
func (m *Mesh) Decode(ctx context.Context) (*decode.Scene, error) {
	ctx, finish := m.deadline(ctx, "decode")
	s, err := m.decode(ctx)
	return s, finish(err)
}

// decode builds the scene without a deadline of its own: GLBFile and
// OBJFiles put decoding and export under one.
func (m *Mesh) decode(ctx context.Context) (*decode.Scene, error) {
	src, done, err := m.limitedSource()
	if err != nil {
		return nil, err
	}
	defer done()
	return m.Format.Decode(ctx, src)
}

// limitedSource is source for a decoding: it fails on a file over
// MaxSourceSize.
func (m *Mesh) limitedSource() (*decode.Source, func(), error) {
	src, done, err := m.source()
	if err != nil {
		return nil, nil, err
	}
	if err := m.limitSource(src); err != nil {
		done()
		return nil, nil, err
	}
	return src, done, nil
}

// ChunkBytes returns the contents of one chunk of st; a chunk larger than
// Limits.MaxOutputSize is an error, found before anything is loaded. Its
// errors name the file and the chunk.
func (m *Mesh) ChunkBytes(c *decode.Chunk) ([]byte, error) {
	if err := m.CheckChunk(c); err != nil {
		return nil, err
	}
	b, err := m.chunkBytes(c)
	var fe *decode.FormatError
	if err != nil && !errors.As(err, &fe) {
		// A raw chunk that no longer fits the file (it shrank since the
		// scan), an I/O error.
		err = &decode.FormatError{File: m.Path, Section: ChunksDir + "/" + c.Name, Offset: c.Offset, Msg: "reading the chunk", Err: err}
	}
	return b, err
}

// CheckChunk returns the error ChunkBytes gives c before reading anything:
// the chunk's file (Length bytes of the source for a raw chunk, Size for
// one loaded) is larger than Limits.MaxOutputSize. The mount, which serves
// raw chunks from the source itself, refuses the same chunks.
func (m *Mesh) CheckChunk(c *decode.Chunk) error {
	size := c.Size
	if c.Load == nil {
		size = c.Length
	}
	return m.checkOutput(ChunksDir+"/"+c.Name, size)
}

func (m *Mesh) chunkBytes(c *decode.Chunk) ([]byte, error) {
	if c.Load != nil {
		return c.Bytes(nil)
	}
	r, _, done, err := m.openFile(m.Path)
	if err != nil {
		return nil, err
	}
	defer done()
	return c.Bytes(r)
}

// Header renders header.json from a (possibly partial) structure; a scan
// error is recorded under "error" so that grep finds broken files too.
func (m *Mesh) Header(st *decode.Structure, scanErr error) ([]byte, error) {
	b, _, err := m.HeaderDeps(st, scanErr)
	return b, err
}

// HeaderDeps is Header, and the files beside the source that the
// materials' resolution found (materials.go): the material files and
// textures the conversion reads. An output is stale when any of them
// changes.
func (m *Mesh) HeaderDeps(st *decode.Structure, scanErr error) ([]byte, []Dep, error) {
	if m.IsModel() {
		return m.modelHeader(st, scanErr)
	}
	var f decode.Fields
	var deps []Dep
	f.Add("file", filepath.Base(m.Path))
	f.Add("format", m.Format.Name())
	if st != nil {
		f = append(f, st.Header...)
	}
	if st != nil {
		mats := append([]decode.Material(nil), st.Materials...)
		r := m.newResolution(false)
		if mf := r.resolveMaterials(mats); mf != nil {
			f.Add("materials", mf)
		}
		deps = r.deps
	}
	if scanErr != nil {
		f.Add("error", scanErr.Error())
	}
	b, err := decode.HeaderJSON(f)
	return b, deps, err
}

// GLB exports a scene as binary glTF, its skeleton's rest pose made free of
// scale (decode.Scene.RigidRest: Blender's importer skins a scaled rest
// pose wrong) without changing where any vertex skins.
func GLB(s *decode.Scene) ([]byte, error) { return gltf.Encode(s.RigidRest()) }

// OBJ exports a scene as Wavefront OBJ and its material library.
func (m *Mesh) OBJ(s *decode.Scene) (objBytes, mtlBytes []byte, err error) {
	return obj.Encode(s, m.MTLName())
}

// GLBFile decodes m and exports NAME.glb, failing with the error the
// folder's error.txt records for it. The tree (package vfs) makes each
// output on its own through these functions, one at a time, for the mount
// and `convert` alike.
func (m *Mesh) GLBFile(ctx context.Context) (b []byte, err error) {
	if m.IsModel() {
		glbs, _, err := m.ModelGLBs(ctx)
		if err != nil {
			return nil, err
		}
		return glbs[0], nil
	}
	ctx, finish := m.deadline(ctx, "decode and glb export")
	defer func() { err = finish(err) }()
	src := m.ownSourceDeps()
	scene, err := m.decode(ctx)
	if err != nil {
		return nil, err
	}
	deps, err := m.Textures(ctx, scene)
	if err != nil {
		return nil, err
	}
	m.keepScene(scene, src, deps)
	return m.exportGLB(scene)
}

func (m *Mesh) exportGLB(scene *decode.Scene) ([]byte, error) {
	b, err := GLB(scene)
	if err != nil {
		return nil, fmt.Errorf("%s: glb export: %w", m.Path, err)
	}
	if err := m.checkOutput(m.GLBName(), int64(len(b))); err != nil {
		return nil, err
	}
	return b, nil
}

// GLBFiles are the files of the conversion behind NAME.glb, by the
// folder table's Part: NAME.glb alone for a mesh, every LOD's for a model
// (NAME.glb, NAME.lod1.glb …).
func (m *Mesh) GLBFiles(ctx context.Context) ([][]byte, error) {
	if m.IsModel() {
		glbs, _, err := m.ModelGLBs(ctx)
		return glbs, err
	}
	b, err := m.GLBFile(ctx)
	if err != nil {
		return nil, err
	}
	return [][]byte{b}, nil
}

// OBJFiles decodes m and exports NAME.obj and NAME.mtl, failing with the
// error error.txt records for them. A folder without them (HasOBJ) gives no
// files: a model fails only as its model file does, an animation file as
// its decoding does.
func (m *Mesh) OBJFiles(ctx context.Context) (objBytes, mtlBytes []byte, err error) {
	if m.IsModel() {
		// Nothing to export, and the model's own failure, found
		// without assembling.
		_, err := m.DecodeModel(ctx)
		return nil, nil, err
	}
	if !m.HasOBJ() {
		_, err := m.Decode(ctx)
		return nil, nil, err
	}
	ctx, finish := m.deadline(ctx, "decode and obj export")
	defer func() { err = finish(err) }()
	scene, err := m.decode(ctx)
	if err != nil {
		return nil, nil, err
	}
	m.resolve(scene, false)
	return m.exportOBJ(scene)
}

func (m *Mesh) exportOBJ(scene *decode.Scene) (objBytes, mtlBytes []byte, err error) {
	o, l, err := m.OBJ(scene)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: obj export: %w", m.Path, err)
	}
	if err := m.checkOutput(m.OBJName(), int64(len(o))); err != nil {
		return nil, nil, err
	}
	if err := m.checkOutput(m.MTLName(), int64(len(l))); err != nil {
		return nil, nil, err
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
