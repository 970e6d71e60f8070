package tfever

import (
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/tfever/luasandbox"
)

// region locates one attribute's values or one index list in the blob.
// Count and Offset are bytes (FORMATS.md §2, verified on real pairs).
type region struct {
	Name    string
	Count   int64
	NumComp int64 // components per item; 0 for index lists (u32 each)
	Offset  int64
	Extra   decode.Fields // keys other than count, numComp, offset
}

// itemSize is the size in bytes of one item: numComp float32s, or one u32.
func (r region) itemSize() int64 {
	if r.NumComp > 0 {
		return 4 * r.NumComp
	}
	return 4
}

// items is the number of items the region holds.
func (r region) items() int64 { return r.Count / r.itemSize() }

type subMesh struct {
	Indices   []region // in attribute order (see attrRank)
	Materials []string
	Extra     decode.Fields
}

// index returns the index list of attribute name, or nil.
func (s *subMesh) index(name string) *region {
	for i := range s.Indices {
		if s.Indices[i].Name == name {
			return &s.Indices[i]
		}
	}
	return nil
}

type keyframe struct {
	Time   float64    // ms
	Rot    [3]float64 // degrees about Z, Y, X (see rotation)
	Transl [3]float64
}

type keyAnim struct {
	Name      string
	Type      string
	Origin    [3]float64
	Keyframes []keyframe
	Extra     decode.Fields
}

// mshData is what a .msh script's data() returns.
type mshData struct {
	SubMeshes  []subMesh
	Attrs      []region // in attribute order
	MatConfigs [][]float64
	HasMatCfg  bool
	Animations []keyAnim // sorted by name
	Extra      decode.Fields
}

func (m *mshData) attr(name string) *region {
	for i := range m.Attrs {
		if m.Attrs[i].Name == name {
			return &m.Attrs[i]
		}
	}
	return nil
}

// attrRank orders attribute names: the known ones in glTF's order, then
// numbered uv and colour sets, then the rest by name.
func attrRank(name string) (int, int) {
	switch name {
	case "position":
		return 0, 0
	case "normal":
		return 1, 0
	case "tangent":
		return 2, 0
	}
	if n, ok := setNumber(name, "uv"); ok {
		return 3, n
	}
	if n, ok := setNumber(name, "color"); ok {
		return 4, n
	}
	return 5, 0
}

// setNumber parses "uv0", "uv12" (prefix "uv") and "color" (set 0).
func setNumber(name, prefix string) (int, bool) {
	if !strings.HasPrefix(name, prefix) {
		return 0, false
	}
	rest := name[len(prefix):]
	if rest == "" {
		return 0, prefix == "color"
	}
	n, err := strconv.Atoi(rest)
	if err != nil || n < 0 || n > 99 || strconv.Itoa(n) != rest {
		return 0, false
	}
	return n, true
}

func sortRegions(rs []region) {
	sort.SliceStable(rs, func(i, j int) bool {
		ai, an := attrRank(rs[i].Name)
		bi, bn := attrRank(rs[j].Name)
		if ai != bi {
			return ai < bi
		}
		if an != bn {
			return an < bn
		}
		return rs[i].Name < rs[j].Name
	})
}

// reader turns the script's result into mshData, with errors that name the
// path of the offending field in the data table.
type reader struct {
	file      string
	keyframes int // read so far, across the file's animations
	nRegions  int // attributes and index lists read so far
}

// MaxRegions caps the attributes and index lists of one .msh together.
// Real meshes have a few of each per submesh; each costs kilobytes
// downstream (a chunk, header.json, layout checks), so 100 000 looped out by
// a 4 KiB script allocated 240 MiB (found by export/outputs/hostile).
const MaxRegions = 10_000

// MaxKeyframes caps the keyframes of one .msh's animations together. Real
// animations have tens of keys; each key costs kilobytes downstream
// (header.json, the scene, the .glb), so a short script looping out 100 000
// keys within the sandbox's limits made a 4 KiB file allocate 840 MiB
// (found by export/outputs/hostile).
const MaxKeyframes = 10_000

func (r *reader) errf(field, format string, args ...any) error {
	return decode.Errorf(r.file, "data()", field, 0, format, args...)
}

func (r *reader) table(v any, field string) (*luasandbox.Table, error) {
	if v == nil {
		return &luasandbox.Table{}, nil
	}
	t, ok := v.(*luasandbox.Table)
	if !ok {
		return nil, r.errf(field, "is a %s, want a table", typeName(v))
	}
	return t, nil
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "nil"
	case bool:
		return "boolean"
	case float64:
		return "number"
	case string:
		return "string"
	case *luasandbox.Table:
		return "table"
	case luasandbox.Function:
		return "function"
	}
	return fmt.Sprintf("%T", v)
}

// maxByteCount bounds counts and offsets to exact float64 integers.
const maxByteCount = 1 << 53

func (r *reader) uint(v any, field string) (int64, error) {
	f, ok := v.(float64)
	if !ok {
		return 0, r.errf(field, "is a %s, want a number", typeName(v))
	}
	if f != math.Trunc(f) || f < 0 || f > maxByteCount {
		return 0, r.errf(field, "is %v, want a whole number of bytes", f)
	}
	return int64(f), nil
}

func (r *reader) number(v any, field string) (float64, error) {
	f, ok := v.(float64)
	if !ok {
		return 0, r.errf(field, "is a %s, want a number", typeName(v))
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, r.errf(field, "is %v, want a finite number", f)
	}
	return f, nil
}

func (r *reader) vec3(v any, field string) ([3]float64, error) {
	var out [3]float64
	t, err := r.table(v, field)
	if err != nil {
		return out, err
	}
	if len(t.Seq) != 3 {
		return out, r.errf(field, "has %d numbers, want 3", len(t.Seq))
	}
	for i, e := range t.Seq {
		if out[i], err = r.number(e, fmt.Sprintf("%s[%d]", field, i+1)); err != nil {
			return out, err
		}
		if math.Abs(out[i]) > 1e30 {
			return out, r.errf(fmt.Sprintf("%s[%d]", field, i+1), "is %v, beyond what a float32 transform can hold", out[i])
		}
	}
	return out, nil
}

// extra collects the keys of t not in known, sorted, as header values.
func extra(t *luasandbox.Table, known ...string) decode.Fields {
	var f decode.Fields
	for _, k := range t.Keys() {
		if !contains(known, k) {
			f.Add(k, jsonValue(t.Fields[k]))
		}
	}
	if len(t.Seq) > 0 && !contains(known, "[]") {
		seq := make([]any, len(t.Seq))
		for i, v := range t.Seq {
			seq[i] = jsonValue(v)
		}
		f.Add("[]", seq)
	}
	return f
}

func contains(list []string, s string) bool {
	for _, e := range list {
		if e == s {
			return true
		}
	}
	return false
}

// jsonValue renders a script value for header.json: tables with only a
// sequence as arrays, others as objects in sorted key order (the sequence
// under "[]"), functions as "<function>", non-finite numbers as strings.
func jsonValue(v any) any {
	switch v := v.(type) {
	case *luasandbox.Table:
		if len(v.Fields) == 0 {
			seq := make([]any, len(v.Seq))
			for i, e := range v.Seq {
				seq[i] = jsonValue(e)
			}
			return seq
		}
		return extra(v)
	case luasandbox.Function:
		return "<function>"
	case float64:
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Sprint(v)
		}
		return v
	}
	return v
}

// region reads {count=, numComp=, offset=}.
func (r *reader) region(v any, name, field string, wantComp bool) (region, error) {
	reg := region{Name: name}
	t, err := r.table(v, field)
	if err != nil {
		return reg, err
	}
	if reg.Count, err = r.uint(t.Get("count"), field+".count"); err != nil {
		return reg, err
	}
	if reg.Offset, err = r.uint(t.Get("offset"), field+".offset"); err != nil {
		return reg, err
	}
	if wantComp {
		if reg.NumComp, err = r.uint(t.Get("numComp"), field+".numComp"); err != nil {
			return reg, err
		}
		if reg.NumComp < 1 || reg.NumComp > 64 {
			return reg, r.errf(field+".numComp", "is %d, want 1 to 64", reg.NumComp)
		}
	}
	reg.Extra = extra(t, "count", "numComp", "offset")
	return reg, nil
}

func (r *reader) regions(v any, field string, wantComp bool) ([]region, error) {
	t, err := r.table(v, field)
	if err != nil {
		return nil, err
	}
	if len(t.Seq) > 0 {
		return nil, r.errf(field, "has %d unnamed entries, want attribute names as keys", len(t.Seq))
	}
	if r.nRegions += len(t.Fields); r.nRegions > MaxRegions {
		e := r.errf(field, "brings the file's attributes and index lists to %d, more than the limit of %d", r.nRegions, MaxRegions)
		e.(*decode.FormatError).Err = decode.ErrLimit
		return nil, e
	}
	var out []region
	for _, k := range t.Keys() {
		reg, err := r.region(t.Fields[k], k, field+"."+fieldKey(k), wantComp)
		if err != nil {
			return nil, err
		}
		out = append(out, reg)
	}
	sortRegions(out)
	return out, nil
}

func (r *reader) strings(v any, field string) ([]string, error) {
	t, err := r.table(v, field)
	if err != nil {
		return nil, err
	}
	out := make([]string, 0, len(t.Seq))
	for i, e := range t.Seq {
		s, ok := e.(string)
		if !ok {
			return nil, r.errf(fmt.Sprintf("%s[%d]", field, i+1), "is a %s, want a string", typeName(e))
		}
		out = append(out, s)
	}
	return out, nil
}

func (r *reader) msh(v any) (*mshData, error) {
	t, ok := v.(*luasandbox.Table)
	if !ok {
		return nil, r.errf("", "data() returned a %s, want a table", typeName(v))
	}
	m := &mshData{}
	var err error
	if m.Attrs, err = r.regions(t.Get("vertexAttr"), "vertexAttr", true); err != nil {
		return nil, err
	}
	subs, err := r.table(t.Get("subMeshes"), "subMeshes")
	if err != nil {
		return nil, err
	}
	for i, sv := range subs.Seq {
		field := fmt.Sprintf("subMeshes[%d]", i+1)
		st, err := r.table(sv, field)
		if err != nil {
			return nil, err
		}
		var sm subMesh
		if sm.Indices, err = r.regions(st.Get("indices"), field+".indices", false); err != nil {
			return nil, err
		}
		if sm.Materials, err = r.strings(st.Get("materials"), field+".materials"); err != nil {
			return nil, err
		}
		sm.Extra = extra(st, "indices", "materials")
		m.SubMeshes = append(m.SubMeshes, sm)
	}
	if mc := t.Get("matConfigs"); mc != nil {
		m.HasMatCfg = true
		mt, err := r.table(mc, "matConfigs")
		if err != nil {
			return nil, err
		}
		for i, row := range mt.Seq {
			rt, err := r.table(row, fmt.Sprintf("matConfigs[%d]", i+1))
			if err != nil {
				return nil, err
			}
			vals := make([]float64, len(rt.Seq))
			for j, e := range rt.Seq {
				if vals[j], err = r.number(e, fmt.Sprintf("matConfigs[%d][%d]", i+1, j+1)); err != nil {
					return nil, err
				}
			}
			m.MatConfigs = append(m.MatConfigs, vals)
		}
	}
	anims, err := r.table(t.Get("animations"), "animations")
	if err != nil {
		return nil, err
	}
	for _, name := range anims.Keys() {
		a, err := r.anim(anims.Fields[name], name)
		if err != nil {
			return nil, err
		}
		m.Animations = append(m.Animations, a)
	}
	m.Extra = extra(t, "vertexAttr", "subMeshes", "matConfigs", "animations")
	return m, nil
}

// fieldKey is a key of the script as error messages name it: long keys are
// cut, since the field path of every number below the key repeats it (a
// 1 MB animation name made each of its keyframes' paths 1 MB; found by
// export/outputs/hostile).
func fieldKey(k string) string {
	const max = 64
	if len(k) <= max {
		return k
	}
	return cutTo(k, max) + "…"
}

func (r *reader) anim(v any, name string) (keyAnim, error) {
	field := "animations." + fieldKey(name)
	a := keyAnim{Name: name}
	t, err := r.table(v, field)
	if err != nil {
		return a, err
	}
	a.Type, _ = t.Get("type").(string)
	a.Extra = extra(t, "type", "params")
	if a.Type != "KEYFRAME" {
		// Other types are kept in header.json only.
		a.Extra = extra(t, "type")
		return a, nil
	}
	p, err := r.table(t.Get("params"), field+".params")
	if err != nil {
		return a, err
	}
	if o := p.Get("origin"); o != nil {
		if a.Origin, err = r.vec3(o, field+".params.origin"); err != nil {
			return a, err
		}
	}
	kfs, err := r.table(p.Get("keyframes"), field+".params.keyframes")
	if err != nil {
		return a, err
	}
	if r.keyframes += len(kfs.Seq); r.keyframes > MaxKeyframes {
		e := r.errf(field+".params.keyframes", "brings the file's keyframes to %d, more than the limit of %d", r.keyframes, MaxKeyframes)
		e.(*decode.FormatError).Err = decode.ErrLimit
		return a, e
	}
	for i, kv := range kfs.Seq {
		kf := fmt.Sprintf("%s.params.keyframes[%d]", field, i+1)
		kt, err := r.table(kv, kf)
		if err != nil {
			return a, err
		}
		var k keyframe
		if k.Time, err = r.number(kt.Get("time"), kf+".time"); err != nil {
			return a, err
		}
		if k.Time < 0 || k.Time > 1e30 || (i > 0 && !(float32(k.Time/1000) > float32(a.Keyframes[i-1].Time/1000))) {
			return a, r.errf(kf+".time", "is %v ms; times must increase strictly from 0", k.Time)
		}
		if rv := kt.Get("rot"); rv != nil {
			if k.Rot, err = r.vec3(rv, kf+".rot"); err != nil {
				return a, err
			}
		}
		if tv := kt.Get("transl"); tv != nil {
			if k.Transl, err = r.vec3(tv, kf+".transl"); err != nil {
				return a, err
			}
		}
		a.Keyframes = append(a.Keyframes, k)
	}
	for _, kv := range extra(p, "origin", "keyframes") {
		a.Extra.Add("params."+kv.Key, kv.Value)
	}
	return a, nil
}
