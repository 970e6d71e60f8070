package gem

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"path"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/meshfs/meshfs/decode"
)

// Mdl is the GEM model format: a .mdl text file whose {Skeleton} places
// .ply parts on bones (see the package documentation for the rules).
type Mdl struct{}

var (
	_ decode.Format       = Mdl{}
	_ decode.ModelDecoder = Mdl{}
)

// maxModelText bounds the .mdl text read: real models are tens of KiB.
const maxModelText = 8 << 20

// maxLODs and maxLODNodes bound the LODs a model may have and the nodes
// of all of them together (real models: 3 LODs, 177 nodes at most).
const (
	maxLODs     = 16
	maxLODNodes = 1 << 16
)

// Name implements decode.Format.
func (Mdl) Name() string { return "gem-mdl" }

// Extensions implements decode.Extensions.
func (Mdl) Extensions() []string { return []string{".mdl"} }

// Sniff accepts a ".mdl" file whose first byte after white space (and a
// UTF-8 byte order mark) opens a group or a comment, as GEM's text does;
// Transport Fever's Lua .mdl starts with a word ("function", "local") or a
// "--" comment.
func (Mdl) Sniff(name string, head []byte) bool {
	if !strings.EqualFold(filepath.Ext(name), ".mdl") {
		return false
	}
	head = bytes.TrimPrefix(head, []byte("\xef\xbb\xbf"))
	for _, c := range head {
		switch c {
		case ' ', '\t', '\r', '\n', '\f', '\v':
			continue
		case '{', ';':
			return true
		}
		return false
	}
	return false
}

// StripExt removes the final ".mdl".
func (Mdl) StripExt(name string) string {
	if ext := filepath.Ext(name); strings.EqualFold(ext, ".mdl") && len(name) > len(ext) {
		return name[:len(name)-len(ext)]
	}
	return name
}

// Scan parses the model text (it is small) and reports its bones, parts,
// LODs, sequences and volumes; chunks/ holds the text unchanged.
func (f Mdl) Scan(ctx context.Context, src *decode.Source) (*decode.Structure, error) {
	st := &decode.Structure{Format: f.Name()}
	st.Header.Add("text_bytes", src.Size)
	if src.Size >= 0 && src.Size <= maxModelText {
		st.Chunks = []decode.Chunk{{Name: "model.mdl", Offset: 0, Length: src.Size, Size: src.Size}}
	}
	m, err := readModel(ctx, src)
	if err != nil {
		return st, err
	}
	st.Header = append(st.Header, m.header()...)
	return st, nil
}

// Decode gives the skeleton alone (a joint per bone at its rest
// transform, no geometry), for a caller that does not assemble models:
// the assembled model is DecodeModel's.
func (f Mdl) Decode(ctx context.Context, src *decode.Source) (*decode.Scene, error) {
	m, err := readModel(ctx, src)
	if err != nil {
		return nil, err
	}
	sk := &decode.Skeleton{}
	for _, b := range m.Bones {
		sk.Joints = append(sk.Joints, decode.Joint{Name: b.Name, Parent: b.Parent, Rest: b.Frame.sceneMatrix(MetresPerUnit).TRS()})
	}
	return &decode.Scene{Skeleton: sk}, nil
}

// DecodeModel reads the model: one node per bone, its parts, LODs,
// sequences and collision volumes. Parts are opened only to tell skinned
// ones (a SKIN chunk) from rigid ones, and only when they lie beside the
// model; a part that cannot be opened is left for the assembler to report.
func (f Mdl) DecodeModel(ctx context.Context, src *decode.Source) (*decode.Model, error) {
	m, err := readModel(ctx, src)
	if err != nil {
		return nil, err
	}
	skinned := map[string]bool{}
	isSkinned := func(r decode.Ref) bool {
		if v, ok := skinned[r.Rel]; ok {
			return v
		}
		v := partSkinned(ctx, src, r)
		skinned[r.Rel] = v
		return v
	}
	// The header's counts are Decode's scene's; outputs derives the
	// assembled model's.
	var h decode.Fields
	for _, f := range m.header() {
		if f.Key != "counts" {
			h = append(h, f)
		}
	}
	out := &decode.Model{Unit: "GEM unit", Scale: MetresPerUnit, Header: h}
	for k := 0; k < m.LODCount; k++ {
		var lod decode.ModelLOD
		for _, b := range m.Bones {
			n := decode.ModelNode{Name: b.Name, Parent: b.Parent, Matrix: b.Frame.sceneMatrix(MetresPerUnit), Extras: b.Extras}
			for _, r := range b.partsAt(k) {
				n.Parts = append(n.Parts, decode.ModelPart{Mesh: r, Skinned: isSkinned(r)})
			}
			lod.Nodes = append(lod.Nodes, n)
		}
		out.LODs = append(out.LODs, lod)
	}
	for _, s := range m.Sequences {
		file := s.File
		out.Animations = append(out.Animations, decode.ModelAnimation{Name: s.Name, File: &file, Node: -1, Extras: s.Extras})
	}
	for _, v := range m.Volumes {
		c := decode.Collider{Name: v.Name, Kind: v.Kind, Node: v.Node, Matrix: v.Frame.sceneMatrix(MetresPerUnit)}
		switch v.Kind {
		case "box":
			// Full extents along the volume's own axes, converted.
			c.Size = [3]float64{v.Size[0] * MetresPerUnit, v.Size[2] * MetresPerUnit, v.Size[1] * MetresPerUnit}
		case "cylinder", "sphere":
			c.Size = [3]float64{v.Size[0] * MetresPerUnit, v.Size[1] * MetresPerUnit, 0}
		case "mesh":
			file := v.File
			c.Mesh = &file
		}
		out.Colliders = append(out.Colliders, c)
	}
	return out, nil
}

// partSkinned reports whether the part r, opened beside the model, has a
// SKIN chunk. Only its chunk headers are read.
func partSkinned(ctx context.Context, src *decode.Source, r decode.Ref) bool {
	if src.OpenSibling == nil || r.Base != decode.RefModelDir || strings.Contains(r.Rel, "/") {
		return false
	}
	ra, size, err := src.OpenSibling(r.Rel)
	if err != nil {
		return false
	}
	if c, ok := ra.(io.Closer); ok {
		defer c.Close()
	}
	pf, _ := scanFile(ctx, r.Rel, ra, size)
	if pf == nil {
		return false
	}
	for _, c := range pf.Chunks {
		if _, ok := c.(*Skin); ok {
			return true
		}
	}
	return false
}

// model is what a .mdl says, in GEM's own space.
type model struct {
	Bones     []bone
	Sequences []sequence
	Volumes   []volume
	// LODCount is the longest LODView's length, at least 1.
	LODCount int
}

type bone struct {
	Name   string
	Parent int
	Frame  gemFrame
	// Views are the bone's own VolumeViews, shown at every LOD.
	Views []decode.Ref
	// LODs are its LODView's entries in order; nil for {OFF}.
	LODs   []*decode.Ref
	Extras decode.Fields
}

// partsAt returns the parts shown at LOD k: the bone's own views, and its
// LODView's k-th entry (the last for a LOD beyond its length; none where
// that entry is {OFF}).
func (b *bone) partsAt(k int) []decode.Ref {
	out := append([]decode.Ref(nil), b.Views...)
	if n := len(b.LODs); n > 0 {
		if r := b.LODs[min(k, n-1)]; r != nil {
			out = append(out, *r)
		}
	}
	return out
}

type sequence struct {
	Name   string
	File   decode.Ref
	Extras decode.Fields
}

type volume struct {
	Name  string
	Kind  string // box, cylinder, sphere, mesh
	Bone  string
	Node  int
	Frame gemFrame
	Size  [3]float64
	File  decode.Ref
}

// readModel reads and parses the model text.
func readModel(ctx context.Context, src *decode.Source) (*model, error) {
	if src.Size < 0 || src.Size > maxModelText {
		return nil, &decode.FormatError{File: src.Name, Msg: fmt.Sprintf("model text of %d bytes (limit %d)", src.Size, maxModelText), Err: decode.ErrLimit}
	}
	b, err := readAll(src)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return parseModel(src.Name, b)
}

// parseModel interprets a .mdl's groups. Errors are decode.FormatErrors
// at the byte offset of the line they concern.
func parseModel(file string, b []byte) (*model, error) {
	nodes, err := ParseText(file, b)
	if err != nil {
		return nil, textError(file, b, err)
	}
	p := &mdlParser{file: file, text: b, m: &model{LODCount: 1}}
	var skel *Node
	for _, n := range nodes {
		switch {
		case strings.EqualFold(n.Name, "Skeleton"):
			if skel != nil {
				return nil, p.errAt(n, "a second {Skeleton}")
			}
			skel = n
		case strings.EqualFold(n.Name, "Animation"):
			if err := p.sequences(n, ""); err != nil {
				return nil, err
			}
		}
	}
	if skel == nil {
		return nil, &decode.FormatError{File: file, Msg: "no {Skeleton} group"}
	}
	for _, c := range skel.Children {
		switch {
		case strings.EqualFold(c.Name, "bone"):
			if err := p.bone(c, -1); err != nil {
				return nil, err
			}
		case strings.EqualFold(c.Name, "animation"):
			if err := p.sequences(c, ""); err != nil {
				return nil, err
			}
		}
	}
	if len(p.m.Bones) == 0 {
		return nil, p.errAt(skel, "{Skeleton} has no bone")
	}
	// Every LOD is a whole node tree: a few bytes of {OFF} must not claim
	// millions of nodes.
	if p.m.LODCount > maxLODs || p.m.LODCount*len(p.m.Bones) > maxLODNodes {
		return nil, &decode.FormatError{File: file, Field: "{LODView}", Err: decode.ErrLimit,
			Msg: fmt.Sprintf("%d LODs of %d bones (limits: %d LODs, %d nodes in all)", p.m.LODCount, len(p.m.Bones), maxLODs, maxLODNodes)}
	}
	for _, n := range nodes {
		if strings.EqualFold(n.Name, "Volume") {
			if err := p.volume(n); err != nil {
				return nil, err
			}
		}
	}
	return p.m, nil
}

type mdlParser struct {
	file string
	text []byte
	m    *model
	// byName maps lower-cased bone names to the first bone of the name,
	// for volumes' {Bone}.
	byName map[string]int
}

// textError turns a ParseText error into a FormatError at its line.
func textError(file string, b []byte, err error) error {
	var te *TextError
	if errors.As(err, &te) {
		return &decode.FormatError{File: file, Section: fmt.Sprintf("line %d", te.Line), Offset: lineOffset(b, te.Line), Msg: te.Msg}
	}
	return &decode.FormatError{File: file, Msg: err.Error()}
}

// lineOffset is the byte offset where line n (from 1) starts.
func lineOffset(b []byte, n int) int64 {
	off := 0
	for line := 1; line < n; line++ {
		i := bytes.IndexByte(b[off:], '\n')
		if i < 0 {
			break
		}
		off += i + 1
	}
	return int64(off)
}

func (p *mdlParser) errAt(n *Node, format string, args ...any) error {
	return &decode.FormatError{File: p.file, Section: fmt.Sprintf("line %d", n.Line), Offset: lineOffset(p.text, n.Line),
		Field: "{" + n.Name + "}", Msg: fmt.Sprintf(format, args...)}
}

// floats parses n's numbers, want of them, all finite.
func (p *mdlParser) floats(n *Node, want int) ([]float64, error) {
	v, err := n.Floats(p.file, want)
	if err != nil {
		var te *TextError
		if errors.As(err, &te) {
			return nil, p.errAt(n, "%s", te.Msg)
		}
		return nil, err
	}
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) > math.MaxFloat32 {
			return nil, p.errAt(n, "%v is not a finite float32", x)
		}
	}
	return v, nil
}

// frame reads the transform groups among n's children: Orientation (9
// numbers, the rows), Position (3), Matrix34 (rows, then the translation).
// Later groups override what earlier ones set; none leaves the identity.
func (p *mdlParser) frame(n *Node) (gemFrame, error) {
	g := identityFrame()
	for _, c := range n.Children {
		switch {
		case strings.EqualFold(c.Name, "Orientation"):
			v, err := p.floats(c, 9)
			if err != nil {
				return g, err
			}
			for i := 0; i < 9; i++ {
				g.Rows[i/3][i%3] = v[i]
			}
		case strings.EqualFold(c.Name, "Position"):
			v, err := p.floats(c, 3)
			if err != nil {
				return g, err
			}
			copy(g.T[:], v)
		case strings.EqualFold(c.Name, "Matrix34"):
			v, err := p.floats(c, 12)
			if err != nil {
				return g, err
			}
			for i := 0; i < 9; i++ {
				g.Rows[i/3][i%3] = v[i]
			}
			copy(g.T[:], v[9:])
		default:
			continue
		}
		if d := g.det(); !(math.Abs(d) > 1e-9) {
			return g, p.errAt(c, "the frame is singular (determinant %v)", d)
		}
	}
	return g, nil
}

// fileArg is the file a group names in its first argument.
func (p *mdlParser) fileArg(n *Node) (decode.Ref, error) {
	if n.Arg(0) == "" {
		return decode.Ref{}, p.errAt(n, "names no file")
	}
	return ref(n.Arg(0)), nil
}

// ref is a file a model names: a path starting with '/' is beneath the
// asset root (resource/), any other beside the model. Backslashes are
// separators.
func ref(stored string) decode.Ref {
	rel := strings.ReplaceAll(stored, "\\", "/")
	if strings.HasPrefix(rel, "/") {
		return decode.Ref{Stored: stored, Base: decode.RefAssetRoot, Rel: path.Clean(strings.TrimLeft(rel, "/"))}
	}
	return decode.Ref{Stored: stored, Base: decode.RefModelDir, Rel: path.Clean(rel)}
}

// boneGroups are a bone's children that are not extras.
var boneGroups = map[string]bool{"bone": true, "orientation": true, "position": true, "matrix34": true,
	"volumeview": true, "lodview": true, "animation": true}

func (p *mdlParser) bone(n *Node, parent int) error {
	var kind, name string
	switch len(n.Args) {
	case 1:
		name = n.Args[0]
	case 2:
		kind, name = n.Args[0], n.Args[1]
	default:
		return p.errAt(n, "has %d words, want an optional kind and a name", len(n.Args))
	}
	g, err := p.frame(n)
	if err != nil {
		return err
	}
	b := bone{Name: name, Parent: parent, Frame: g}
	var ex extras
	if kind != "" {
		ex.add("kind", kind)
	}
	if g.det() < 0 {
		ex.add("mirrored", true)
	}
	for _, c := range n.Children {
		lc := strings.ToLower(c.Name)
		switch lc {
		case "volumeview":
			r, err := p.fileArg(c)
			if err != nil {
				return err
			}
			b.Views = append(b.Views, r)
		case "lodview":
			if len(b.LODs) > 0 {
				return p.errAt(c, "a second {LODView} in bone %q", name)
			}
			for _, v := range c.Children {
				switch {
				case strings.EqualFold(v.Name, "VolumeView"):
					r, err := p.fileArg(v)
					if err != nil {
						return err
					}
					b.LODs = append(b.LODs, &r)
				case strings.EqualFold(v.Name, "OFF"):
					b.LODs = append(b.LODs, nil)
				default:
					return p.errAt(v, "in {LODView}: want {VolumeView \"file\"} or {OFF}")
				}
			}
			p.m.LODCount = max(p.m.LODCount, len(b.LODs))
		}
		if !boneGroups[lc] {
			ex.add(c.Name, extraValue(c))
		}
	}
	b.Extras = ex.f
	me := len(p.m.Bones)
	p.m.Bones = append(p.m.Bones, b)
	for _, c := range n.Children {
		switch {
		case strings.EqualFold(c.Name, "bone"):
			if err := p.bone(c, me); err != nil {
				return err
			}
		case strings.EqualFold(c.Name, "animation"):
			if err := p.sequences(c, name); err != nil {
				return err
			}
		}
	}
	return nil
}

// extraValue is what header.json and node extras show of a group: its
// numbers, its words, true for a bare flag; nested groups by name.
func extraValue(n *Node) any {
	var v any = true
	switch {
	case len(n.Args) == 1:
		if f, err := strconv.ParseFloat(n.Args[0], 64); err == nil && !math.IsNaN(f) && !math.IsInf(f, 0) {
			v = f
		} else {
			v = n.Args[0]
		}
	case len(n.Args) > 1:
		nums := make([]float64, 0, len(n.Args))
		for _, a := range n.Args {
			f, err := strconv.ParseFloat(a, 64)
			if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
				nums = nil
				break
			}
			nums = append(nums, f)
		}
		if nums != nil {
			v = nums
		} else {
			v = append([]string(nil), n.Args...)
		}
	}
	if len(n.Children) == 0 {
		return v
	}
	var f extras
	if v != true {
		f.add("value", v)
	}
	for _, c := range n.Children {
		f.add(c.Name, extraValue(c))
	}
	return f.f
}

// extras builds a Fields in which no key repeats: a key given again (two
// {parameters}) becomes key_2, key_3, …. Lookups are by map, so a group
// of many alike children costs linear time.
type extras struct {
	f    decode.Fields
	seen map[string]int // key → times given
}

func (e *extras) add(key string, v any) {
	if e.seen == nil {
		e.seen = map[string]int{}
	}
	k := key
	for e.seen[k] > 0 {
		e.seen[key]++
		k = key + "_" + strconv.Itoa(e.seen[key])
	}
	e.seen[k]++
	e.f.Add(k, v)
}

// sequences reads an {animation} group's {sequence "n" …} entries. A
// sequence without {file} plays n.anm beside the model.
func (p *mdlParser) sequences(n *Node, bone string) error {
	for _, c := range n.Children {
		if !strings.EqualFold(c.Name, "sequence") {
			continue
		}
		if len(c.Args) == 0 || c.Args[0] == "" {
			return p.errAt(c, "has no name")
		}
		s := sequence{Name: c.Args[0], File: ref(c.Args[0] + ".anm")}
		var ex extras
		if bone != "" {
			ex.add("bone", bone)
		}
		for _, e := range c.Children {
			if strings.EqualFold(e.Name, "file") {
				r, err := p.fileArg(e)
				if err != nil {
					return err
				}
				s.File = r
				continue
			}
			ex.add(e.Name, extraValue(e))
		}
		s.Extras = ex.f
		p.m.Sequences = append(p.m.Sequences, s)
	}
	return nil
}

// volume reads a top-level {Volume "n" {Bone "b"} shape frame}.
func (p *mdlParser) volume(n *Node) error {
	v := volume{Name: n.Arg(0), Node: -1}
	g, err := p.frame(n)
	if err != nil {
		return err
	}
	v.Frame = g
	for _, c := range n.Children {
		switch strings.ToLower(c.Name) {
		case "bone":
			v.Bone = c.Arg(0)
		case "polyhedron":
			r, err := p.fileArg(c)
			if err != nil {
				return err
			}
			v.Kind, v.File = "mesh", r
		case "box":
			s, err := p.floats(c, 3)
			if err != nil {
				return err
			}
			v.Kind = "box"
			copy(v.Size[:], s)
		case "cylinder":
			s, err := p.floats(c, 2)
			if err != nil {
				return err
			}
			v.Kind = "cylinder"
			copy(v.Size[:], s)
		case "sphere":
			s, err := p.floats(c, 1)
			if err != nil {
				return err
			}
			v.Kind = "sphere"
			v.Size[0] = s[0]
		}
	}
	if v.Kind == "" {
		return p.errAt(n, "volume %q has no {Box}, {Cylinder}, {Sphere} or {Polyhedron}", v.Name)
	}
	if v.Bone != "" {
		if p.byName == nil {
			p.byName = map[string]int{}
			for i := len(p.m.Bones) - 1; i >= 0; i-- {
				p.byName[strings.ToLower(p.m.Bones[i].Name)] = i
			}
		}
		if i, ok := p.byName[strings.ToLower(v.Bone)]; ok {
			v.Node = i
		}
	}
	p.m.Volumes = append(p.m.Volumes, v)
	return nil
}

// header gives header.json's fields: counts first, then the lists.
func (m *model) header() decode.Fields {
	var h decode.Fields
	seen := map[string]bool{}
	var parts []string
	addPart := func(r decode.Ref) {
		if !seen[r.Stored] {
			seen[r.Stored] = true
			parts = append(parts, r.Stored)
		}
	}
	placed := make([]int, m.LODCount)
	for i := range m.Bones {
		b := &m.Bones[i]
		for _, r := range b.Views {
			addPart(r)
		}
		for _, r := range b.LODs {
			if r != nil {
				addPart(*r)
			}
		}
		for k := range placed {
			placed[k] += len(b.partsAt(k))
		}
	}
	h.Add("bone_count", len(m.Bones))
	h.Add("part_count", len(parts))
	h.Add("lod_count", m.LODCount)
	h.Add("sequence_count", len(m.Sequences))
	h.Add("volume_count", len(m.Volumes))
	// The counts are those of Decode's scene (a joint per bone); the
	// assembled model's are outputs'.
	h.Add("counts", decode.SummaryFields(0, 0, 0, len(m.Bones), 0, 0))
	h.Add("unit", "GEM unit")
	h.Add("metres_per_unit", MetresPerUnit)
	if parts == nil {
		parts = []string{}
	}
	h.Add("parts", parts)
	lods := make([]decode.Fields, m.LODCount)
	for k := range lods {
		// The file gives LODs an order, no distances.
		lods[k].Add("lod", k)
		lods[k].Add("placements", placed[k])
	}
	h.Add("lods", lods)
	seqs := make([]decode.Fields, len(m.Sequences))
	for i, s := range m.Sequences {
		seqs[i].Add("name", s.Name)
		seqs[i].Add("file", s.File.Stored)
		seqs[i] = append(seqs[i], s.Extras...)
	}
	h.Add("sequences", seqs)
	vols := make([]decode.Fields, len(m.Volumes))
	for i, v := range m.Volumes {
		vols[i].Add("name", v.Name)
		vols[i].Add("kind", v.Kind)
		vols[i].Add("bone", v.Bone)
		if v.Kind == "mesh" {
			vols[i].Add("file", v.File.Stored)
		} else {
			vols[i].Add("size", v.Size[:sizeLen(v.Kind)])
		}
		if v.Bone != "" && v.Node < 0 {
			vols[i].Add("unresolved", "no bone of that name")
		}
	}
	h.Add("volumes", vols)
	bones := make([]decode.Fields, len(m.Bones))
	for i, b := range m.Bones {
		bones[i].Add("name", b.Name)
		bones[i].Add("parent", b.Parent)
		bones[i] = append(bones[i], b.Extras...)
		if len(b.Views) > 0 {
			v := make([]string, len(b.Views))
			for j, r := range b.Views {
				v[j] = r.Stored
			}
			bones[i].Add("views", v)
		}
		if len(b.LODs) > 0 {
			v := make([]any, len(b.LODs))
			for j, r := range b.LODs {
				if r == nil {
					v[j] = "OFF"
				} else {
					v[j] = r.Stored
				}
			}
			bones[i].Add("lod_views", v)
		}
	}
	h.Add("bones", bones)
	return h
}

func sizeLen(kind string) int {
	switch kind {
	case "box":
		return 3
	case "cylinder":
		return 2
	}
	return 1
}
