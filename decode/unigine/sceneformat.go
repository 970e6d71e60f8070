package unigine

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/unigine/guid"
)

// SceneName is the scene format's identifier.
const SceneName = "unigine-scene"

// SceneFormat is UNIGINE's .node and .world files as models
// (decode.ModelDecoder): see the package doc's "Scenes".
type SceneFormat struct{}

// Name implements decode.Format.
func (SceneFormat) Name() string { return SceneName }

// Extensions implements decode.Extensions.
func (SceneFormat) Extensions() []string { return []string{".node", ".world"} }

func sceneExt(name string) string { return extensionOf(name, SceneFormat{}.Extensions()) }

// Sniff claims .node and .world files that start as XML does (after a
// UTF-8 byte order mark and white space, a '<').
func (SceneFormat) Sniff(name string, head []byte) bool {
	if sceneExt(filepath.Base(name)) == "" {
		return false
	}
	head = bytes.TrimLeft(bytes.TrimPrefix(head, []byte("\xef\xbb\xbf")), " \t\r\n")
	return len(head) > 0 && head[0] == '<'
}

// StripExt removes .node or .world.
func (SceneFormat) StripExt(name string) string {
	if e := sceneExt(name); e != "" {
		return name[:len(name)-len(e)]
	}
	return name
}

// Scan parses the file (references not followed) and reports its nodes
// by type; chunks/ holds the text unchanged.
func (f SceneFormat) Scan(ctx context.Context, src *decode.Source) (*decode.Structure, error) {
	st := &decode.Structure{Format: f.Name()}
	st.Header.Add("text_bytes", src.Size)
	if src.Size >= 0 && src.Size <= MaxSceneBytes {
		st.Chunks = []decode.Chunk{{Name: "scene" + sceneExt(src.Name), Offset: 0, Length: src.Size, Size: src.Size}}
	}
	roots, err := parseScene(src.Name, io.NewSectionReader(src.R, 0, src.Size))
	if err != nil {
		return st, err
	}
	types := map[string]int{}
	var order []string
	n := 0
	var walk func([]*xnode)
	walk = func(xs []*xnode) {
		for _, x := range xs {
			n++
			if types[x.typ] == 0 {
				order = append(order, x.typ)
			}
			types[x.typ]++
			walk(x.children)
		}
	}
	walk(roots)
	st.Header.Add("file_nodes", n)
	var byType decode.Fields
	for _, t := range order {
		byType.Add(t, types[t])
	}
	st.Header.Add("node_types", byType)
	return st, nil
}

// Decode gives an empty scene: a scene file holds no geometry of its own;
// the assembled one is DecodeModel's.
func (SceneFormat) Decode(ctx context.Context, src *decode.Source) (*decode.Scene, error) {
	if _, err := parseScene(src.Name, io.NewSectionReader(src.R, 0, src.Size)); err != nil {
		return nil, err
	}
	return &decode.Scene{}, nil
}

// DecodeModel reads the scene through src.Project (references unresolved
// without one), opening the files it references through src.OpenAsset
// when given, so that the caller sees every file read.
func (SceneFormat) DecodeModel(ctx context.Context, src *decode.Source) (*decode.Model, error) {
	open := noFiles
	if src.OpenAsset != nil && src.Project != nil {
		root := src.Project.Root()
		open = func(p string) (io.ReadCloser, error) {
			rel, err := filepath.Rel(root, p)
			if err != nil || !filepath.IsLocal(rel) {
				return nil, fmt.Errorf("%s is not beneath the project %s", p, root)
			}
			r, size, _, err := src.OpenAsset(filepath.ToSlash(rel))
			if err != nil {
				return nil, err
			}
			return readCloser{io.NewSectionReader(r, 0, size), r}, nil
		}
	}
	return readScene(src.Name, io.NewSectionReader(src.R, 0, src.Size), src.Project, open)
}

// readCloser reads a section of an opened file and closes the file.
type readCloser struct {
	io.Reader
	f io.ReaderAt
}

func (r readCloser) Close() error {
	if c, ok := r.f.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// ProjectKind implements decode.ProjectIndexer: the GUID index, shared by
// scenes and meshes.
func (SceneFormat) ProjectKind() string { return "unigine-guid" }

// ProjectKind implements decode.ProjectIndexer.
func (Format) ProjectKind() string { return "unigine-guid" }

// ProjectRoot implements decode.ProjectIndexer: the data folder above p
// (guid.FindRoot).
func (SceneFormat) ProjectRoot(p, stop string, files decode.ProjectFiles) (string, bool) {
	return guid.FindRoot(p, stop, files)
}

// IndexProject implements decode.ProjectIndexer: the GUID index of the
// data folder root (guid.Scan).
func (SceneFormat) IndexProject(root string, files decode.ProjectFiles) (decode.ProjectIndex, error) {
	ix, err := guid.Scan(root, files)
	if err != nil {
		return nil, err
	}
	return project{ix, files}, nil
}

// ProjectRoot implements decode.ProjectIndexer for meshes, whose surfaces'
// materials may name textures by GUID.
func (Format) ProjectRoot(p, stop string, files decode.ProjectFiles) (string, bool) {
	return SceneFormat{}.ProjectRoot(p, stop, files)
}

// IndexProject implements decode.ProjectIndexer for meshes.
func (Format) IndexProject(root string, files decode.ProjectFiles) (decode.ProjectIndex, error) {
	return SceneFormat{}.IndexProject(root, files)
}

// project is a GUID index as a decode.ProjectIndex; files reads the
// scenes MeshMaterials looks in.
type project struct {
	ix    *guid.Index
	files decode.ProjectFiles
}

func (p project) Root() string { return p.ix.Root }

func (p project) Resolve(ref string) (string, []string, string, bool) {
	if _, ok := guid.Parse(ref); !ok {
		return "", nil, "", false
	}
	abs, _, ok := p.ix.Resolve(ref)
	if !ok {
		if m, ok := p.ix.Missing(ref); ok {
			var via []string
			if rel, err := filepath.Rel(p.ix.Root, m+".meta"); err == nil {
				via = []string{filepath.ToSlash(rel)}
			}
			return "", via, fmt.Sprintf("its .meta names %s, which is not there", m), false
		}
		return "", nil, "no file of the project has this GUID", false
	}
	rel, err := filepath.Rel(p.ix.Root, abs)
	if err != nil {
		return "", nil, err.Error(), false
	}
	return filepath.ToSlash(rel), p.ix.Via(ref), "", true
}

func (p project) Read() []decode.ProjectFile { return p.ix.Read() }

// parse parses the scene file at abs.
func (p project) parse(abs string) ([]*xnode, error) {
	f, err := p.files.Open(abs)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseScene(abs, io.NewSectionReader(f, 0, f.Size()))
}

// MeshMaterials implements decode.MeshMaterials: a mesh's surfaces take
// the materials the scene runtimes (.node) made from the mesh's source
// asset give them, in the first of those scenes (in the source .meta's
// order) that places the mesh: each ObjectMesh* node naming the mesh's
// GUID gives its surfaces' materials by surface name, a GUID as
// guid://<hex>. The mesh's GUID is its runtime name's, or the one the
// index resolves to it.
func (p project) MeshMaterials(rel string) (map[string]string, []string) {
	g, ok := p.ix.GUIDOf(rel)
	if !ok {
		return nil, nil
	}
	a, ok := p.ix.Asset(g)
	if !ok {
		return nil, nil
	}
	for _, rt := range p.ix.Runtimes(a) {
		abs, _, ok := p.ix.Resolve(rt)
		if !ok || sceneExt(abs) != ".node" {
			continue
		}
		roots, err := p.parse(abs)
		if err != nil {
			continue
		}
		by := map[string]string{}
		var walk func([]*xnode)
		walk = func(xs []*xnode) {
			for _, x := range xs {
				if m, ok := guid.Parse(x.mesh); ok && m == g && strings.HasPrefix(x.mesh, "guid://") {
					for _, s := range x.surfaces {
						if _, have := by[s.name]; !have && s.material != "" {
							by[s.name] = materialRef(s.material)
						}
					}
				}
				walk(x.children)
			}
		}
		walk(roots)
		if len(by) == 0 {
			continue
		}
		nodeRel, err := filepath.Rel(p.ix.Root, abs)
		if err != nil {
			continue
		}
		via := append(p.ix.Via(g), p.ix.Via(a)...)
		if from, ok := p.ix.AssetVia(g); ok {
			via = append(via, from)
		}
		via = append(via, filepath.ToSlash(nodeRel))
		return by, via
	}
	return nil, nil
}
