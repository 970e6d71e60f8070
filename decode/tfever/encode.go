package tfever

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
)

// EncAttr is one vertex attribute for the encoder: NumComp float32s per item.
type EncAttr struct {
	Name    string
	NumComp int
	Data    []float32
}

// EncSubMesh is one submesh: an index list per attribute (all of one
// length, a multiple of 3) and, in the Train Fever style, its materials.
type EncSubMesh struct {
	Indices   map[string][]uint32
	Materials []string
}

// EncKeyframe is one key of a KEYFRAME animation, as the file stores it.
type EncKeyframe struct {
	TimeMs float64
	Rot    [3]float64 // degrees about Z, Y, X
	Transl [3]float64
}

// EncAnim is a KEYFRAME animation.
type EncAnim struct {
	Name      string
	Origin    [3]float64
	Keyframes []EncKeyframe
}

// EncMesh is what EncodeMsh writes.
type EncMesh struct {
	Attrs     []EncAttr
	SubMeshes []EncSubMesh
	// MatConfigs, when non-nil, writes the Train Fever style's matConfigs
	// (one row per configuration, one material index per submesh).
	MatConfigs [][]int
	Animations []EncAnim
	// Extra is Lua source of further fields of the data table
	// ("metadata = { ... }"), written verbatim.
	Extra []string
	// Shuffle, when non-zero, seeds a permutation of the blob's regions, as
	// exporters lay them out in their own orders.
	Shuffle uint64
}

type encRegion struct {
	key  string // "attr position" or "sub 0 normal"
	data []byte
}

// EncodeMsh writes the .msh script and its .msh.blob.
func EncodeMsh(m *EncMesh) (script, blob []byte, err error) {
	var regions []encRegion
	for _, a := range m.Attrs {
		if a.NumComp <= 0 || len(a.Data)%a.NumComp != 0 {
			return nil, nil, fmt.Errorf("attribute %s: %d floats is not a multiple of %d", a.Name, len(a.Data), a.NumComp)
		}
		b := make([]byte, 4*len(a.Data))
		for i, f := range a.Data {
			binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(f))
		}
		regions = append(regions, encRegion{"attr " + a.Name, b})
	}
	for si, sm := range m.SubMeshes {
		for _, name := range sortedKeys(sm.Indices) {
			l := sm.Indices[name]
			b := make([]byte, 4*len(l))
			for i, v := range l {
				binary.LittleEndian.PutUint32(b[4*i:], v)
			}
			regions = append(regions, encRegion{fmt.Sprintf("sub %d %s", si, name), b})
		}
	}
	if m.Shuffle != 0 {
		r := rand.New(rand.NewPCG(m.Shuffle, 0x7f))
		r.Shuffle(len(regions), func(i, j int) { regions[i], regions[j] = regions[j], regions[i] })
	}
	offsets := map[string]int{}
	var bb bytes.Buffer
	for _, r := range regions {
		offsets[r.key] = bb.Len()
		bb.Write(r.data)
	}

	var s bytes.Buffer
	s.WriteString("function data()\nreturn {\n")
	if len(m.Animations) > 0 {
		s.WriteString("\tanimations = {\n")
		for _, a := range m.Animations {
			fmt.Fprintf(&s, "\t\t%s = {\n\t\t\tparams = {\n", luaKey(a.Name))
			s.WriteString("\t\t\t\tkeyframes = {\n")
			for _, k := range a.Keyframes {
				fmt.Fprintf(&s, "\t\t\t\t\t{\n\t\t\t\t\t\trot = { %s, },\n\t\t\t\t\t\ttime = %s,\n\t\t\t\t\t\ttransl = { %s, },\n\t\t\t\t\t},\n",
					nums(k.Rot[:]), num(k.TimeMs), nums(k.Transl[:]))
			}
			s.WriteString("\t\t\t\t},\n")
			fmt.Fprintf(&s, "\t\t\t\torigin = { %s, },\n", nums(a.Origin[:]))
			s.WriteString("\t\t\t},\n\t\t\ttype = \"KEYFRAME\",\n\t\t},\n")
		}
		s.WriteString("\t},\n")
	}
	if m.MatConfigs != nil {
		s.WriteString("\tmatConfigs = {\n")
		for _, row := range m.MatConfigs {
			s.WriteString("\t\t{\n\t\t\t")
			for _, v := range row {
				fmt.Fprintf(&s, "%d, ", v)
			}
			s.WriteString("\n\t\t}, \n")
		}
		s.WriteString("\t},\n")
	}
	for _, e := range m.Extra {
		fmt.Fprintf(&s, "\t%s,\n", e)
	}
	s.WriteString("\tsubMeshes = {\n")
	for si, sm := range m.SubMeshes {
		s.WriteString("\t\t{\n\t\t\tindices = {\n")
		for _, name := range sortedKeys(sm.Indices) {
			fmt.Fprintf(&s, "\t\t\t\t%s = {\n\t\t\t\t\tcount = %d,\n\t\t\t\t\toffset = %d,\n\t\t\t\t},\n",
				luaKey(name), 4*len(sm.Indices[name]), offsets[fmt.Sprintf("sub %d %s", si, name)])
		}
		s.WriteString("\t\t\t},\n")
		if sm.Materials != nil {
			s.WriteString("\t\t\tmaterials = {\n")
			for _, mt := range sm.Materials {
				fmt.Fprintf(&s, "\t\t\t\t%s, \n", strconv.Quote(mt))
			}
			s.WriteString("\t\t\t},\n")
		}
		s.WriteString("\t\t},\n")
	}
	s.WriteString("\t},\n\tvertexAttr = {\n")
	attrs := append([]EncAttr(nil), m.Attrs...)
	sort.Slice(attrs, func(i, j int) bool { return attrs[i].Name < attrs[j].Name })
	for _, a := range attrs {
		fmt.Fprintf(&s, "\t\t%s = {\n\t\t\tcount = %d,\n\t\t\tnumComp = %d,\n\t\t\toffset = %d,\n\t\t},\n",
			luaKey(a.Name), 4*len(a.Data), a.NumComp, offsets["attr "+a.Name])
	}
	s.WriteString("\t},\n}\nend\n")
	return s.Bytes(), bb.Bytes(), nil
}

// EncodeAni writes an .ani script: one column-major 4×4 matrix per time (ms).
func EncodeAni(timesMs []float64, transfs [][16]float64) []byte {
	var s bytes.Buffer
	s.WriteString("function data()\nreturn {\n\ttimes = {\n")
	for _, t := range timesMs {
		fmt.Fprintf(&s, "\t\t%s,\n", num(t))
	}
	s.WriteString("\t},\n\ttransfs = {\n")
	for _, m := range transfs {
		fmt.Fprintf(&s, "\t\t{ %s, },\n", nums(m[:]))
	}
	s.WriteString("\t},\n}\nend\n")
	return s.Bytes()
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func luaKey(s string) string {
	ok := s != ""
	for i, c := range s {
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || i > 0 && c >= '0' && c <= '9') {
			ok = false
		}
	}
	if ok {
		return s
	}
	return "[" + strconv.Quote(s) + "]"
}

// num writes a number exactly: the shortest decimal that reads back to the
// same float64, as Lua's tonumber does.
func num(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

func nums(fs []float64) string {
	var b bytes.Buffer
	for i, f := range fs {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(num(f))
	}
	return b.String()
}

// EncModel is what EncodeMdl writes: a Transport Fever 2 .mdl.
type EncModel struct {
	// Requires are modules the script requires at its top, each bound
	// to a local named after its last path element.
	Requires     []string
	LODs         []EncLOD
	BBMin, BBMax [3]float64
	// Collider and Metadata are Lua source of those tables, written
	// verbatim ("" leaves the key out).
	Collider, Metadata string
}

// EncLOD is one level of detail.
type EncLOD struct {
	Node                   EncNode
	VisibleFrom, VisibleTo float64
	Static                 bool
}

// EncNode is one node: its transform (nil writes no transf: identity),
// a mesh with its materials, a skin, animation sets, children.
type EncNode struct {
	Name          string
	Transf        *[16]float64
	Mesh          string
	Materials     []string
	Skin          string
	SkinMaterials []string
	Animations    []EncNodeAnim
	Children      []EncNode
}

// EncNodeAnim is one animation set of a node: a KEYFRAME track (File
// empty) or a FILE_REF to an .ani relative to res/models/animation/.
type EncNodeAnim struct {
	Set       string
	File      string
	Origin    [3]float64
	Keyframes []EncKeyframe
	Forward   bool
}

// EncodeMdl writes the model as the game's exporter does: tabs, keys in
// sorted order, trailing commas.
func EncodeMdl(m *EncModel) []byte {
	var s bytes.Buffer
	for _, r := range m.Requires {
		fmt.Fprintf(&s, "local %s = require %s\n", moduleLocal(r), strconv.Quote(r))
	}
	s.WriteString("function data()\nreturn ")
	writeModelTable(&s, m, 0)
	s.WriteString("\nend\n")
	return s.Bytes()
}

// EncodeMdlRequire writes the model's table as a function of the module
// module (a res/scripts/ file) and a .mdl that requires it and returns
// its table, as mods that build many models from one script do.
func EncodeMdlRequire(m *EncModel, module string) (mdl, script []byte) {
	var lib bytes.Buffer
	for _, r := range m.Requires {
		fmt.Fprintf(&lib, "local %s = require %s\n", moduleLocal(r), strconv.Quote(r))
	}
	lib.WriteString("local function build()\n\treturn ")
	writeModelTable(&lib, m, 1)
	lib.WriteString("\nend\n\nreturn {\n\tbuild = build\n}\n")
	name := moduleLocal(module)
	mdl = fmt.Appendf(nil, "local %s = require %s\nfunction data()\n\treturn %s.build()\nend\n", name, strconv.Quote(module), name)
	return mdl, lib.Bytes()
}

// moduleLocal is a module's last path element as a Lua name.
func moduleLocal(module string) string {
	if i := strings.LastIndexAny(module, "/."); i >= 0 {
		module = module[i+1:]
	}
	if luaKey(module) != module {
		return "mod"
	}
	return module
}

func writeModelTable(s *bytes.Buffer, m *EncModel, depth int) {
	in := func(d int) string { return strings.Repeat("\t", depth+d) }
	s.WriteString("{\n")
	fmt.Fprintf(s, "%sboundingInfo = {\n%sbbMax = { %s, },\n%sbbMin = { %s, },\n%s},\n", in(1), in(2), nums(m.BBMax[:]), in(2), nums(m.BBMin[:]), in(1))
	if m.Collider != "" {
		fmt.Fprintf(s, "%scollider = %s,\n", in(1), m.Collider)
	}
	fmt.Fprintf(s, "%slods = {\n", in(1))
	for _, l := range m.LODs {
		fmt.Fprintf(s, "%s{\n%snode = ", in(2), in(3))
		writeNode(s, &l.Node, depth+3)
		fmt.Fprintf(s, ",\n%sstatic = %v,\n%svisibleFrom = %s,\n%svisibleTo = %s,\n%s},\n", in(3), l.Static, in(3), num(l.VisibleFrom), in(3), num(l.VisibleTo), in(2))
	}
	fmt.Fprintf(s, "%s},\n", in(1))
	if m.Metadata != "" {
		fmt.Fprintf(s, "%smetadata = %s,\n", in(1), m.Metadata)
	}
	fmt.Fprintf(s, "%sversion = 1,\n%s}", in(1), in(0))
}

func writeNode(s *bytes.Buffer, n *EncNode, depth int) {
	in := func(d int) string { return strings.Repeat("\t", depth+d) }
	s.WriteString("{\n")
	if len(n.Animations) > 0 {
		fmt.Fprintf(s, "%sanimations = {\n", in(1))
		anims := append([]EncNodeAnim(nil), n.Animations...)
		sort.SliceStable(anims, func(i, j int) bool { return anims[i].Set < anims[j].Set })
		for _, a := range anims {
			fmt.Fprintf(s, "%s%s = {\n", in(2), luaKey(a.Set))
			if a.File != "" {
				fmt.Fprintf(s, "%sparams = {\n%sid = %s,\n%s},\n%stype = \"FILE_REF\",\n", in(3), in(4), strconv.Quote(a.File), in(3), in(3))
			} else {
				fmt.Fprintf(s, "%sforward = %v,\n%sparams = {\n%skeyframes = {\n", in(3), a.Forward, in(3), in(4))
				for _, k := range a.Keyframes {
					fmt.Fprintf(s, "%s{\n%srot = { %s, },\n%stime = %s,\n%stransl = { %s, },\n%s},\n",
						in(5), in(6), nums(k.Rot[:]), in(6), num(k.TimeMs), in(6), nums(k.Transl[:]), in(5))
				}
				fmt.Fprintf(s, "%s},\n%sorigin = { %s, },\n%s},\n%stype = \"KEYFRAME\",\n", in(4), in(4), nums(a.Origin[:]), in(3), in(3))
			}
			fmt.Fprintf(s, "%s},\n", in(2))
		}
		fmt.Fprintf(s, "%s},\n", in(1))
	}
	if len(n.Children) > 0 {
		fmt.Fprintf(s, "%schildren = {\n", in(1))
		for i := range n.Children {
			s.WriteString(in(2))
			writeNode(s, &n.Children[i], depth+2)
			s.WriteString(",\n")
		}
		fmt.Fprintf(s, "%s},\n", in(1))
	}
	if n.Mesh != "" {
		fmt.Fprintf(s, "%smaterials = { %s},\n%smesh = %s,\n", in(1), quotedList(n.Materials), in(1), strconv.Quote(n.Mesh))
	}
	fmt.Fprintf(s, "%sname = %s,\n", in(1), strconv.Quote(n.Name))
	if n.Skin != "" {
		fmt.Fprintf(s, "%sskin = %s,\n%sskinMaterials = { %s},\n", in(1), strconv.Quote(n.Skin), in(1), quotedList(n.SkinMaterials))
	}
	if n.Transf != nil {
		fmt.Fprintf(s, "%stransf = { %s, },\n", in(1), nums(n.Transf[:]))
	}
	fmt.Fprintf(s, "%s}", in(0))
}

func quotedList(l []string) string {
	var b strings.Builder
	for _, e := range l {
		b.WriteString(strconv.Quote(e))
		b.WriteString(", ")
	}
	return b.String()
}

// EncTF1Model is what EncodeTF1Mdl writes: a model in the Train Fever (1)
// layout (see mdl_tf1.go): each LOD a list of mesh and group children
// with material configurations and events, no node tree.
type EncTF1Model struct {
	// Prelude is Lua source written before data() (requires, locals);
	// Metadata is the metadata table's Lua source ("" leaves it out).
	Prelude, Metadata string
	LODs              []EncTF1LOD
	BBMin, BBMax      [3]float64
}

// EncTF1LOD is one level of detail of the Train Fever layout.
type EncTF1LOD struct {
	Children               []EncChild
	MatConfigs             [][]int
	Events                 []EncEvent
	VisibleFrom, VisibleTo float64
}

// EncChild is a child: a mesh (relative to res/models/mesh/) or, with
// Group, a .grp (relative to res/models/group/), placed by Transf (nil:
// identity, written out).
type EncChild struct {
	ID     string
	Group  bool
	Transf *[16]float64
}

// EncEvent plays the mesh animation Take of child Child (1-based) for
// the event Name.
type EncEvent struct {
	Name    string
	Child   int
	Take    string
	Forward bool
}

// EncodeTF1Mdl writes the model as Train Fever's exporter does: keys in
// sorted order, trailing commas, an empty animations table per LOD.
func EncodeTF1Mdl(m *EncTF1Model) []byte {
	var s bytes.Buffer
	s.WriteString(m.Prelude)
	s.WriteString("function data()\nreturn {\n")
	fmt.Fprintf(&s, "\tboundingInfo = {\n\t\tbbMax = { %s, },\n\t\tbbMin = { %s, },\n\t},\n", nums(m.BBMax[:]), nums(m.BBMin[:]))
	s.WriteString("\tcollider = {\n\t\tparams = { },\n\t\ttype = \"MESH\",\n\t},\n\tlods = {\n")
	for _, l := range m.LODs {
		s.WriteString("\t\t{\n\t\t\tanimations = { },\n")
		writeChildren(&s, l.Children, "\t\t\t")
		s.WriteString("\t\t\tevents = {\n")
		events := append([]EncEvent(nil), l.Events...)
		sort.SliceStable(events, func(i, j int) bool { return events[i].Name < events[j].Name })
		for i := 0; i < len(events); {
			j := i
			fmt.Fprintf(&s, "\t\t\t\t%s = {\n", luaKey(events[i].Name))
			for ; j < len(events) && events[j].Name == events[i].Name; j++ {
				fmt.Fprintf(&s, "\t\t\t\t\t[%d] = { forward = %v, name = %s, },\n", events[j].Child, events[j].Forward, strconv.Quote(events[j].Take))
			}
			s.WriteString("\t\t\t\t},\n")
			i = j
		}
		s.WriteString("\t\t\t},\n")
		writeMatConfigs(&s, l.MatConfigs, "\t\t\t")
		fmt.Fprintf(&s, "\t\t\tstatic = false,\n\t\t\tvisibleFrom = %s,\n\t\t\tvisibleTo = %s,\n\t\t},\n", num(l.VisibleFrom), num(l.VisibleTo))
	}
	s.WriteString("\t},\n")
	if m.Metadata != "" {
		fmt.Fprintf(&s, "\tmetadata = %s,\n", m.Metadata)
	}
	s.WriteString("}\nend\n")
	return s.Bytes()
}

// EncodeGrp writes a Train Fever group (.grp): children and material
// configurations, as in a LOD of EncodeTF1Mdl.
func EncodeGrp(children []EncChild, matConfigs [][]int) []byte {
	var s bytes.Buffer
	s.WriteString("function data()\nreturn {\n")
	writeChildren(&s, children, "\t")
	writeMatConfigs(&s, matConfigs, "\t")
	s.WriteString("}\nend\n")
	return s.Bytes()
}

func writeChildren(s *bytes.Buffer, cs []EncChild, in string) {
	fmt.Fprintf(s, "%schildren = {\n", in)
	for _, c := range cs {
		t := c.Transf
		if t == nil {
			t = &[16]float64{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}
		}
		typ := "MESH"
		if c.Group {
			typ = "GROUP"
		}
		fmt.Fprintf(s, "%s\t{\n%s\t\tid = %s,\n%s\t\ttransf = {\n%s\t\t\t%s, \n%s\t\t},\n%s\t\ttype = %q,\n%s\t},\n",
			in, in, strconv.Quote(c.ID), in, in, nums(t[:]), in, in, typ, in)
	}
	fmt.Fprintf(s, "%s},\n", in)
}

func writeMatConfigs(s *bytes.Buffer, rows [][]int, in string) {
	fmt.Fprintf(s, "%smatConfigs = {\n", in)
	for _, row := range rows {
		fmt.Fprintf(s, "%s\t{\n%s\t\t", in, in)
		for _, v := range row {
			fmt.Fprintf(s, "%d, ", v)
		}
		fmt.Fprintf(s, "\n%s\t}, \n", in)
	}
	fmt.Fprintf(s, "%s},\n", in)
}
