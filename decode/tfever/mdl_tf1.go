package tfever

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/tfever/luasandbox"
)

// The Train Fever (1) layout of a LOD, which Transport Fever 2 still
// reads and mods still ship. Fitted to public mod files (a TPF2 modpack
// on GitHub, Jeremy974Gaming/tpf2-j974-modpack: eat1963's track bumpers
// and catenary poles, one or two children, their lods built by a
// required script; denesberky's RhB ABe 8/12 railcar, three LODs of up
// to eight children, its bogies GROUP children whose .grp files hold the
// axles, door events keyed [3] and [4]):
//
//	{ children = { {id = "rel.msh", type = "MESH", transf = {16}},
//	               {id = "rel.grp", type = "GROUP", transf = {16}}, … },
//	  matConfigs = { {c₁, c₂, …}, … },
//	  events = { open_doors_left = { [i] = {name = "open", forward = true} }, … },
//	  animations = { }, static = b, visibleFrom = m, visibleTo = m }
//
// There is no node tree and no material list: each child is one mesh
// (id relative to res/models/mesh/) or one group (a .grp script under
// res/models/group/ whose data() returns {children, matConfigs} of the
// same shape, nested), placed by its transf. Materials live in the
// meshes (their subMeshes' materials and matConfigs rows); matConfigs
// rows are the model's material configurations, each giving, per child in
// order, which configuration of that child's mesh (or row of that
// group's matConfigs) to show. The first row is what the game shows
// unless told otherwise, and is what is read; real files give rows
// shorter or longer than the children (a missing entry is 0). Animations
// live in the meshes too (a .msh's KEYFRAME animations): an event names,
// per child index (1-based), the mesh animation it plays and whether
// forwards. Each becomes the model animation event/child playing that
// take on the child's node; the lod's own animations table is empty in
// every file seen and is kept in header.json only.

// MaxGroupDepth bounds groups inside groups (real ones nest none).
const MaxGroupDepth = 8

// tf1Lod reads a LOD in the Train Fever layout into lod, a root node
// holding one node per child.
func (r *mdlReader) tf1Lod(lod *decode.ModelLOD, t *luasandbox.Table, field string, h *decode.Fields) error {
	if r.nodes++; r.nodes > MaxModelNodes {
		return r.limit(field, "nodes", r.nodes, MaxModelNodes)
	}
	lod.Nodes = append(lod.Nodes, decode.ModelNode{Name: "RootNode", Parent: -1, Matrix: identity})
	cfg, err := r.matConfig(t.Get("matConfigs"), field+".matConfigs", 0)
	if err != nil {
		return err
	}
	var groups []decode.Fields
	childNodes, err := r.tf1Children(lod, t.Get("children"), cfg, 0, field, 0, &groups)
	if err != nil {
		return err
	}
	if err := r.tf1Events(lod, t.Get("events"), childNodes, field+".events"); err != nil {
		return err
	}
	h.Add("layout", "train-fever")
	h.Add("matConfigs", jsonValue(t.Get("matConfigs")))
	h.Add("events", jsonValue(t.Get("events")))
	h.Add("lodAnimations", jsonValue(t.Get("animations")))
	h.Add("groups", nonNilList(groups))
	return nil
}

// matConfig reads row (0-based) of a matConfigs table: whole numbers ≥ 0.
// A missing table or row is no configuration (every child its first).
func (r *mdlReader) matConfig(v any, field string, row int) ([]int, error) {
	t, err := r.table(v, field)
	if err != nil {
		return nil, err
	}
	if row < 0 || row >= len(t.Seq) {
		return nil, nil
	}
	rf := fmt.Sprintf("%s[%d]", field, row+1)
	rt, err := r.table(t.Seq[row], rf)
	if err != nil {
		return nil, err
	}
	if len(rt.Seq) > MaxModelParts {
		return nil, r.limit(rf, "material configuration entries", len(rt.Seq), MaxModelParts)
	}
	out := make([]int, len(rt.Seq))
	for i, e := range rt.Seq {
		f, err := r.number(e, fmt.Sprintf("%s[%d]", rf, i+1))
		if err != nil {
			return nil, err
		}
		if f < 0 || f != math.Trunc(f) || f > MaxPartMaterials {
			return nil, r.errf(fmt.Sprintf("%s[%d]", rf, i+1), "is %v, want a configuration index from 0 to %d", f, MaxPartMaterials)
		}
		out[i] = int(f)
	}
	return out, nil
}

// tf1Children adds a node per child under parent and returns their
// indices in order (events name children by position).
func (r *mdlReader) tf1Children(lod *decode.ModelLOD, v any, cfg []int, parent int, field string, depth int, groups *[]decode.Fields) ([]int, error) {
	ch, err := r.table(v, field+".children")
	if err != nil {
		return nil, err
	}
	out := make([]int, 0, len(ch.Seq))
	for i, cv := range ch.Seq {
		cf := fmt.Sprintf("%s.children[%d]", field, i+1)
		ct, err := r.table(cv, cf)
		if err != nil {
			return nil, err
		}
		if r.nodes++; r.nodes > MaxModelNodes {
			return nil, r.limit(cf, "nodes", r.nodes, MaxModelNodes)
		}
		id, ok := ct.Get("id").(string)
		if !ok || id == "" {
			return nil, r.errf(cf+".id", "is a %s, want a mesh or group file name", typeName(ct.Get("id")))
		}
		n := decode.ModelNode{Parent: parent, Name: strings.TrimSuffix(strings.TrimSuffix(lastElem(id), ".msh"), ".grp")}
		if n.Matrix, err = r.transf(ct.Get("transf"), cf+".transf"); err != nil {
			return nil, err
		}
		c := 0
		if i < len(cfg) {
			c = cfg[i]
		}
		typ, _ := ct.Get("type").(string)
		n.Extras = extra(ct, "id", "transf")
		idx := len(lod.Nodes)
		switch typ {
		case "MESH", "":
			p, err := r.part(id, nil, cf+".id", cf+".materials", false)
			if err != nil {
				return nil, err
			}
			p.MaterialConfig = c
			n.Parts = []decode.ModelPart{p}
			lod.Nodes = append(lod.Nodes, n)
		case "GROUP":
			lod.Nodes = append(lod.Nodes, n)
			g, err := r.group(lod, id, c, idx, cf, depth+1, groups)
			if err != nil {
				return nil, err
			}
			*groups = append(*groups, g)
		default:
			// Other kinds place nothing the reader knows; the node keeps
			// its place (and its type in extras).
			lod.Nodes = append(lod.Nodes, n)
		}
		out = append(out, idx)
	}
	return out, nil
}

// group reads the .grp script id and adds its children under node at,
// showing its material configuration cfg. A group that cannot be read
// is listed (header.json's groups, the node's extras) and its node stays
// empty: only the model file itself fails the model.
func (r *mdlReader) group(lod *decode.ModelLOD, id string, cfg, at int, field string, depth int, groups *[]decode.Fields) (decode.Fields, error) {
	var h decode.Fields
	h.Add("id", id)
	h.Add("node", at)
	rel := "models/group/" + strings.TrimPrefix(strings.ReplaceAll(id, "\\", "/"), "/")
	fail := func(reason string) (decode.Fields, error) {
		h.Add("unresolved", reason)
		lod.Nodes[at].Extras.Add("unresolved", reason)
		return h, nil
	}
	if depth > MaxGroupDepth {
		return h, r.limit(field, "group nesting", depth, MaxGroupDepth)
	}
	if r.openGroup == nil {
		return fail("no asset roots to look in")
	}
	v, opened, err := r.openGroup(rel)
	if err != nil {
		if errors.Is(err, decode.ErrLimit) || errors.Is(err, luasandbox.ErrLimit) || errors.Is(err, luasandbox.ErrTimeout) {
			return h, err
		}
		return fail(err.Error())
	}
	h.Add("opened", opened)
	gt, ok := v.(*luasandbox.Table)
	if !ok {
		return fail(fmt.Sprintf("%s: data() returned a %s, want a table", opened, typeName(v)))
	}
	gcfg, err := r.matConfig(gt.Get("matConfigs"), field+"(group).matConfigs", cfg)
	if err != nil {
		return h, err
	}
	if _, err := r.tf1Children(lod, gt.Get("children"), gcfg, at, field+"(group)", depth, groups); err != nil {
		return h, err
	}
	return h, nil
}

// tf1Events turns events into animations: each plays a named KEYFRAME
// animation of a child's mesh on that child's node.
func (r *mdlReader) tf1Events(lod *decode.ModelLOD, v any, children []int, field string) error {
	t, err := r.table(v, field)
	if err != nil {
		return err
	}
	for _, ev := range t.Keys() {
		ef := field + "." + fieldKey(ev)
		et, err := r.table(t.Fields[ev], ef)
		if err != nil {
			return err
		}
		// Children by position: Seq holds [1]..[n] when dense, Fields the
		// rest ("3" when only [3] is given).
		entries := map[int]any{}
		for i, e := range et.Seq {
			entries[i+1] = e
		}
		for _, k := range et.Keys() {
			var i int
			if _, err := fmt.Sscanf(k, "%d", &i); err != nil || fmt.Sprint(i) != k {
				return r.errf(ef+"."+fieldKey(k), "is keyed by a name, want a child's position")
			}
			entries[i] = et.Fields[k]
		}
		order := make([]int, 0, len(entries))
		for i := range entries {
			order = append(order, i)
		}
		slices.Sort(order)
		for _, i := range order {
			e := entries[i]
			cf := fmt.Sprintf("%s[%d]", ef, i)
			if i < 1 || i > len(children) {
				return r.errf(cf, "names child %d of %d", i, len(children))
			}
			if r.nanims++; r.nanims > MaxModelAnimations {
				return r.limit(cf, "animations", r.nanims, MaxModelAnimations)
			}
			at, err := r.table(e, cf)
			if err != nil {
				return err
			}
			take, ok := at.Get("name").(string)
			if !ok || take == "" {
				return r.errf(cf+".name", "is a %s, want the name of an animation of the child's mesh", typeName(at.Get("name")))
			}
			forward := true
			if fv := at.Get("forward"); fv != nil {
				b, ok := fv.(bool)
				if !ok {
					return r.errf(cf+".forward", "is a %s, want a boolean", typeName(fv))
				}
				forward = b
			}
			node := children[i-1]
			n := lod.Nodes[node]
			var h decode.Fields
			h.Add("name", ev+"/"+n.Name)
			h.Add("lod", len(r.out.model.LODs))
			h.Add("node", node)
			h.Add("type", "EVENT")
			h.Add("take", take)
			h.Add("forward", forward)
			if len(n.Parts) == 0 {
				// A group's or an unknown child's: no mesh holds the take.
				h.Add("unresolved", "the child is not a mesh")
				r.out.anims = append(r.out.anims, h)
				continue
			}
			ref := n.Parts[0].Mesh
			ma := decode.ModelAnimation{Name: ev + "/" + n.Name, File: &ref, Node: node, Take: take, Reverse: !forward}
			ma.Extras.Add("set", ev)
			ma.Extras.Add("node", n.Name)
			ma.Extras.Add("type", "EVENT")
			ma.Extras.Add("take", take)
			ma.Extras.Add("forward", forward)
			h.Add("file", ref.Stored)
			r.animHdr = append(r.animHdr, len(r.out.anims))
			r.out.anims = append(r.out.anims, h)
			lod.Animations = append(lod.Animations, ma)
		}
	}
	return nil
}

// groupOpener reads and runs a .grp script beneath the asset roots.
type groupOpener func(rel string) (v any, opened string, err error)

// groupScripts returns how the reader opens groups: read like a module
// (size checked before reading), run in its own sandbox with the same
// limits and loader.
func (f Mdl) groupScripts(ctx context.Context, src *decode.Source, load luasandbox.Loader) groupOpener {
	if src.OpenAsset == nil {
		return nil
	}
	return func(rel string) (any, string, error) {
		b, opened, err := f.readModule(src, rel)
		if err != nil {
			return nil, "", err
		}
		v, err := luasandbox.RunRequire(ctx, opened, b, f.Limits, load)
		if err != nil {
			return nil, opened, fmt.Errorf("%s: %w", opened, err)
		}
		return v, opened, nil
	}
}
