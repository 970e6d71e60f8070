package unigine

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/unigine/guid"
)

// Bounds of a scene read (.node, .world), each refused with decode.ErrLimit.
const (
	// MaxSceneBytes bounds one .node or .world file; real worlds are a
	// few hundred kilobytes, the editor's biggest a few megabytes.
	MaxSceneBytes = 64 << 20
	// MaxSceneNodes bounds the nodes of a scene, references expanded.
	MaxSceneNodes = 1 << 16
	// MaxSceneDepth bounds the nesting of <node> elements in one file.
	MaxSceneDepth = 128
	// MaxRefDepth bounds the chain of NodeReferences followed.
	MaxRefDepth = 16
)

// xnode is one <node> element as read.
type xnode struct {
	typ, name, id, enabled string
	off                    int64 // of the <node> tag
	matrix                 decode.Mat4
	mesh                   string // <mesh_name>
	surfaces               []xsurface
	ref                    string // a NodeReference's <reference>
	color                  string // a light's <color> or <color_filter>
	intensity              string
	attenuation            string // a light's <attenuation_distance>
	children               []*xnode
}

type xsurface struct{ name, material string }

// sceneRead is one ReadScene: the index, the files parsed so far (each
// parsed once however often it is referenced), the model being built and
// what could not be resolved.
type sceneRead struct {
	ix         decode.ProjectIndex // nil: every reference unresolved
	open       func(p string) (io.ReadCloser, error)
	parsed     map[string][]*xnode
	lod        decode.ModelLOD
	meshes     int
	unresolved []decode.Fields
	failed     []decode.Fields
}

// ReadScene reads a UNIGINE .node or .world file (name is its path, for
// errors and for path references without an index) into a one-LOD Model:
// see the package doc for the rules. ix resolves guid:// references and
// paths relative to the data folder, and the files they name are opened
// through files; with a nil ix every reference is recorded as
// unresolved. Only the file itself failing to parse, or a limit, is an
// error; a referenced file that fails is recorded.
func ReadScene(name string, r io.Reader, ix *guid.Index, files decode.ProjectFiles) (*decode.Model, error) {
	var pix decode.ProjectIndex
	open := noFiles
	if ix != nil {
		pix = project{ix, files}
		open = func(p string) (io.ReadCloser, error) {
			f, err := files.Open(p)
			if err != nil {
				return nil, err
			}
			return readCloser{io.NewSectionReader(f, 0, f.Size()), f}, nil
		}
	}
	return readScene(name, r, pix, open)
}

// noFiles is the opener of a scene read with no files to open.
func noFiles(p string) (io.ReadCloser, error) {
	return nil, fmt.Errorf("%s: no files to open it in", p)
}

// readScene is ReadScene through any project index, opening the files
// it names (paths beneath the index's root) with open.
func readScene(name string, r io.Reader, ix decode.ProjectIndex, open func(p string) (io.ReadCloser, error)) (*decode.Model, error) {
	roots, err := parseScene(name, r)
	if err != nil {
		return nil, err
	}
	s := &sceneRead{ix: ix, open: open, parsed: map[string][]*xnode{}}
	if err := s.place(name, roots, -1, []string{fileKey(name)}); err != nil {
		return nil, err
	}
	m := &decode.Model{LODs: []decode.ModelLOD{s.lod}, Unit: "metre", Scale: 1}
	m.Header.Add("nodes", len(s.lod.Nodes))
	m.Header.Add("meshes", s.meshes)
	m.Header.Add("unresolved", nonNil(s.unresolved))
	m.Header.Add("failed", nonNil(s.failed))
	return m, nil
}

func nonNil(f []decode.Fields) []decode.Fields {
	if f == nil {
		return []decode.Fields{}
	}
	return f
}

// place appends nodes (and their subtrees) under parent; stack is the
// chain of files being expanded, the first the file read.
func (s *sceneRead) place(file string, nodes []*xnode, parent int, stack []string) error {
	for _, x := range nodes {
		if len(s.lod.Nodes) >= MaxSceneNodes {
			return &decode.FormatError{File: file, Section: "node " + x.name, Field: "node", Offset: x.off, Msg: fmt.Sprintf("more than %d nodes, references expanded", MaxSceneNodes), Err: decode.ErrLimit}
		}
		i := len(s.lod.Nodes)
		n := decode.ModelNode{Name: x.name, Parent: parent, Matrix: x.matrix}
		n.Extras.Add("type", x.typ)
		if x.id != "" {
			n.Extras.Add("id", x.id)
		}
		if x.enabled == "0" {
			n.Extras.Add("enabled", false)
		}
		if x.mesh != "" {
			s.meshes++
			if ref, why, ok := s.resolve(x.mesh); ok {
				p := decode.ModelPart{Mesh: ref, Skinned: x.typ == "ObjectMeshSkinned"}
				for _, sf := range x.surfaces {
					p.Materials = append(p.Materials, materialRef(sf.material))
				}
				n.Parts = append(n.Parts, p)
			} else {
				u := decode.Fields{{Key: "file", Value: s.shown(file)}, {Key: "node", Value: x.name}, {Key: "mesh", Value: x.mesh}}
				if why != "" {
					u.Add("why", why)
				}
				s.unresolved = append(s.unresolved, u)
			}
		}
		if len(x.surfaces) > 0 {
			var sf []decode.Fields
			for _, su := range x.surfaces {
				sf = append(sf, decode.Fields{{Key: "name", Value: su.name}, {Key: "material", Value: s.materialFile(su.material)}})
			}
			n.Extras.Add("surfaces", sf)
		}
		var light *decode.Light
		if kind := lightKind(x.typ); kind != "" {
			light = &decode.Light{Kind: kind, Color: [3]float32{1, 1, 1}, Intensity: 1}
			l := decode.Fields{{Key: "kind", Value: kind}}
			if c, ok := floats(x.color, 3, 4); ok {
				l.Add("color", c[:3])
				light.Color = [3]float32{float32(c[0]), float32(c[1]), float32(c[2])}
			}
			if v, ok := number(x.intensity); ok {
				l.Add("intensity", v)
				light.Intensity = float32(max(0, v))
			}
			if v, ok := number(x.attenuation); ok && v > 0 && kind != "directional" {
				l.Add("range", v)
				light.Range = float32(v)
			}
			n.Extras.Add("light", l)
		}
		if light != nil && light.Kind == "point" {
			n.Light = light
		}
		s.lod.Nodes = append(s.lod.Nodes, n)
		if light != nil && light.Kind != "point" {
			// UNIGINE's light shines along the node's −Z, which is −Y
			// in the Y-up node frame; glTF's along −Z: a child turned
			// −90° about X carries it.
			s.lod.Nodes = append(s.lod.Nodes, decode.ModelNode{Name: x.name + ".light", Parent: i, Matrix: lightTurn(), Light: light})
		}
		if x.typ == "NodeReference" {
			if err := s.reference(file, x, i, stack); err != nil {
				return err
			}
		}
		if err := s.place(file, x.children, i, stack); err != nil {
			return err
		}
	}
	return nil
}

// reference expands NodeReference x (node i) with its file's nodes, or
// records why not. Only a limit is an error.
func (s *sceneRead) reference(file string, x *xnode, i int, stack []string) error {
	note := func(list *[]decode.Fields, why string) {
		*list = append(*list, decode.Fields{{Key: "file", Value: s.shown(file)}, {Key: "node", Value: x.name}, {Key: "reference", Value: x.ref}, {Key: "why", Value: why}})
	}
	if x.ref == "" {
		note(&s.unresolved, "no <reference>")
		return nil
	}
	ref, why, ok := s.resolve(x.ref)
	if !ok {
		if why == "" {
			why = "not in the project"
		}
		note(&s.unresolved, why)
		return nil
	}
	p := filepath.Join(s.ix.Root(), filepath.FromSlash(ref.Rel))
	key := fileKey(p)
	for _, f := range stack {
		if f == key {
			note(&s.failed, "a cycle: "+ref.Rel+" references itself")
			return nil
		}
	}
	if len(stack) > MaxRefDepth {
		note(&s.failed, fmt.Sprintf("more than %d references deep", MaxRefDepth))
		return nil
	}
	nodes, ok := s.parsed[p]
	if !ok {
		f, err := s.open(p)
		if err == nil {
			nodes, err = parseScene(p, f)
			f.Close()
		}
		if err != nil {
			note(&s.failed, err.Error())
			return nil
		}
		s.parsed[p] = nodes
	}
	s.lod.Nodes[i].Extras.Add("reference", ref.Rel)
	return s.place(p, nodes, i, append(stack[:len(stack):len(stack)], key))
}

// shown is how header.json names a scene file: relative to the data
// folder (slash-separated) when beneath it, else by its base name, so that
// the header is the same wherever the project lies (a mount, an archive).
func (s *sceneRead) shown(file string) string {
	if s.ix != nil {
		if rel, err := filepath.Rel(s.ix.Root(), file); err == nil && filepath.IsLocal(rel) {
			return filepath.ToSlash(rel)
		}
	}
	return filepath.Base(file)
}

// fileKey is how the cycle guard names a file: its absolute path, so that
// the file read (named as the caller likes) and the same file reached
// through the index's root compare equal.
func fileKey(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return filepath.Clean(p)
}

// resolve finds the file a scene names: guid://<hex> through the index, or
// a path relative to the data folder that stays in it and exists; why is
// what the index knows of one it does not find.
func (s *sceneRead) resolve(stored string) (ref decode.Ref, why string, ok bool) {
	if s.ix == nil {
		return decode.Ref{}, "", false
	}
	var rel string
	if strings.HasPrefix(stored, "guid://") {
		if rel, _, why, ok = s.ix.Resolve(stored); !ok {
			return decode.Ref{}, why, false
		}
	} else {
		rel = path.Clean(strings.ReplaceAll(stored, "\\", "/"))
		if rel == "." || rel == ".." || strings.HasPrefix(rel, "../") || path.IsAbs(rel) {
			return decode.Ref{}, "", false
		}
		f, err := s.open(filepath.Join(s.ix.Root(), filepath.FromSlash(rel)))
		if err != nil {
			return decode.Ref{}, "", false
		}
		f.Close()
	}
	return decode.Ref{Stored: stored, Base: decode.RefAssetRoot, Rel: rel}, "", true
}

// material is a surface's material as its part's materials name it: a
// GUID as guid://<hex> (the material resolver finds the .mat through the
// project), anything else as written.
func materialRef(m string) string {
	if g, ok := guid.Parse(m); ok {
		return "guid://" + g
	}
	return m
}

// materialFile names a surface's material for the node's extras: the
// .mat (or base material) its GUID resolves to, relative to the data
// folder, else the attribute as written.
func (s *sceneRead) materialFile(m string) string {
	if g, ok := guid.Parse(m); ok && s.ix != nil {
		if rel, _, _, ok := s.ix.Resolve("guid://" + g); ok {
			return rel
		}
	}
	return m
}

// lightKind is the KHR_lights_punctual type of a UNIGINE light node type,
// or "" for a node that is not a light.
func lightKind(typ string) string {
	switch typ {
	case "LightWorld":
		return "directional"
	case "LightOmni":
		return "point"
	case "LightProj":
		return "spot"
	}
	return ""
}

// lightTurn is the rotation of −90° about X: it takes −Z to −Y.
func lightTurn() decode.Mat4 { return decode.Mat4{1, 0, 0, 0, 0, 0, -1, 0, 0, 1, 0, 0, 0, 0, 0, 1} }

// number parses one finite number.
func number(s string) (float64, bool) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return v, err == nil && !math.IsNaN(v) && !math.IsInf(v, 0)
}

// floats parses between lo and hi finite numbers separated by space.
func floats(s string, lo, hi int) ([]float64, bool) {
	f := strings.Fields(s)
	if len(f) < lo || len(f) > hi {
		return nil, false
	}
	v := make([]float64, len(f))
	for i, t := range f {
		x, err := strconv.ParseFloat(t, 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return nil, false
		}
		v[i] = x
	}
	return v, true
}

// parseScene reads the <node> elements of a .node (<nodes>, or a lone
// <node>) or .world (<world>, whose nodes are in <editor>) file, each with
// its subtree; everything else is skipped.
func parseScene(name string, r io.Reader) ([]*xnode, error) {
	lr := &io.LimitedReader{R: r, N: MaxSceneBytes + 1}
	d := xml.NewDecoder(lr)
	p := &sceneParser{name: name, d: d}
	var roots []*xnode
	seenRoot := false
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, p.xmlErr(lr, err)
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if seenRoot {
			return nil, decode.Errorf(name, "xml", se.Name.Local, d.InputOffset(), "a second root element")
		}
		seenRoot = true
		if se.Name.Local != "nodes" && se.Name.Local != "world" && se.Name.Local != "node" {
			return nil, decode.Errorf(name, "xml", se.Name.Local, d.InputOffset(), "root element <%s>, not <nodes>, <world> or <node>", se.Name.Local)
		}
		if se.Name.Local == "node" {
			x, err := p.node(se, 1)
			if err != nil {
				return nil, p.xmlErr(lr, err)
			}
			roots = append(roots, x)
			continue
		}
		nodes, err := p.container(se.Name.Local == "world")
		if err != nil {
			return nil, p.xmlErr(lr, err)
		}
		roots = append(roots, nodes...)
	}
	if !seenRoot {
		return nil, decode.Errorf(name, "xml", "", d.InputOffset(), "no root element")
	}
	return roots, nil
}

// container reads the <node> children of the element just opened (of its
// <editor> child too, where a .world keeps them, when editor is set)
// through its end tag, skipping everything else.
func (p *sceneParser) container(editor bool) ([]*xnode, error) {
	var nodes []*xnode
	for {
		tok, err := p.d.Token()
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.EndElement:
			return nodes, nil
		case xml.StartElement:
			switch {
			case t.Name.Local == "node":
				x, err := p.node(t, 1)
				if err != nil {
					return nil, err
				}
				nodes = append(nodes, x)
			case t.Name.Local == "editor" && editor:
				more, err := p.container(false)
				if err != nil {
					return nil, err
				}
				nodes = append(nodes, more...)
			default:
				if err := p.d.Skip(); err != nil {
					return nil, err
				}
			}
		}
	}
}

type sceneParser struct {
	name  string
	d     *xml.Decoder
	count int
}

// xmlErr names a token error, or the size limit when that cut it short.
func (p *sceneParser) xmlErr(lr *io.LimitedReader, err error) error {
	if lr.N <= 0 {
		return &decode.FormatError{File: p.name, Section: "xml", Offset: MaxSceneBytes, Msg: fmt.Sprintf("more than %d bytes", MaxSceneBytes), Err: decode.ErrLimit}
	}
	var fe *decode.FormatError
	if errors.As(err, &fe) {
		return err
	}
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return &decode.FormatError{File: p.name, Section: "xml", Offset: p.d.InputOffset(), Msg: "not a scene file", Err: err}
}

// node reads one <node> element whose start tag is se, at nesting depth.
func (p *sceneParser) node(se xml.StartElement, depth int) (*xnode, error) {
	off := p.d.InputOffset()
	if depth > MaxSceneDepth {
		return nil, &decode.FormatError{File: p.name, Section: "xml", Field: "node", Offset: off, Msg: fmt.Sprintf("nodes nested more than %d deep", MaxSceneDepth), Err: decode.ErrLimit}
	}
	if p.count++; p.count > MaxSceneNodes {
		return nil, &decode.FormatError{File: p.name, Section: "xml", Field: "node", Offset: off, Msg: fmt.Sprintf("more than %d nodes", MaxSceneNodes), Err: decode.ErrLimit}
	}
	x := &xnode{off: off, matrix: decode.Identity4()}
	for _, a := range se.Attr {
		switch a.Name.Local {
		case "type":
			x.typ = a.Value
		case "name":
			x.name = a.Value
		case "id":
			x.id = a.Value
		case "enabled":
			x.enabled = a.Value
		}
	}
	section := fmt.Sprintf("node %q", x.name)
	for {
		tok, err := p.d.Token()
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.EndElement:
			return x, nil
		case xml.StartElement:
			field := t.Name.Local
			switch field {
			case "node":
				c, err := p.node(t, depth+1)
				if err != nil {
					return nil, err
				}
				x.children = append(x.children, c)
			case "surface":
				var sf xsurface
				for _, a := range t.Attr {
					switch a.Name.Local {
					case "name":
						sf.name = a.Value
					case "material":
						sf.material = a.Value
					}
				}
				x.surfaces = append(x.surfaces, sf)
				if err := p.d.Skip(); err != nil {
					return nil, err
				}
			case "transform", "mesh_name", "reference", "color", "color_filter", "intensity", "attenuation_distance":
				at := p.d.InputOffset()
				var text string
				if err := p.d.DecodeElement(&text, &t); err != nil {
					return nil, err
				}
				text = strings.TrimSpace(text)
				switch field {
				case "transform":
					m, ok := floats(text, 16, 16)
					if !ok {
						return nil, decode.Errorf(p.name, section, "transform", at, "%q is not 16 finite numbers", clip(text))
					}
					if err := checkAffine(m); err != nil {
						return nil, decode.Errorf(p.name, section, "transform", at, "%v", err)
					}
					x.matrix = decode.ZUpToYUpMatrix(decode.Mat4(m))
				case "mesh_name":
					x.mesh = text
				case "reference":
					x.ref = text
				case "color", "color_filter":
					x.color = text
				case "intensity":
					x.intensity = text
				case "attenuation_distance":
					x.attenuation = text
				}
			default:
				if err := p.d.Skip(); err != nil {
					return nil, err
				}
			}
		}
	}
}

// checkAffine keeps transforms a float32 glTF node can hold: the last row
// (0, 0, 0, 1) and every entry within 1e30.
func checkAffine(m []float64) error {
	for i, v := range m {
		if math.Abs(v) > 1e30 {
			return fmt.Errorf("entry %d is %v, beyond what a float32 transform can hold", i, v)
		}
	}
	if math.Abs(m[3]) > 1e-6 || math.Abs(m[7]) > 1e-6 || math.Abs(m[11]) > 1e-6 || math.Abs(m[15]-1) > 1e-6 {
		return fmt.Errorf("the last row is (%v, %v, %v, %v), not (0, 0, 0, 1)", m[3], m[7], m[11], m[15])
	}
	return nil
}

// clip shortens text quoted in an error.
func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "…"
	}
	return s
}
