package outputs

import (
	"context"
	"math"
	"path"
	"strings"

	"github.com/meshfs/meshfs/decode"
)

// NAME.collision.glb: a model's collision shapes (decode.Collider) on LOD
// 0's node tree, each a mesh named after the shape on its node at its
// matrix: a box of its full extents, a cylinder of its radius and height
// about its frame's Y axis, a sphere of its radius, a polyhedron (GEM
// .vol) decoded by its format and scaled by Model.Scale as parts are. A
// polyhedron that is missing or does not decode leaves a named empty node,
// listed in the root's extras as parts are.

// collisionScene builds the collision shapes' scene.
func (a *assembly) collisionScene(ctx context.Context) *decode.Scene {
	s, _ := a.treeScene(0)
	var unresolved, failed []decode.Fields
	for _, c := range a.model.Colliders {
		at := 0
		if c.Node >= 0 && c.Node < len(a.model.LODs[0].Nodes) {
			at = c.Node + 1
		}
		mat := c.Matrix
		if mat == (decode.Mat4{}) {
			mat = decode.Identity4()
		}
		mesh := decode.Mesh{Name: c.Name, Node: at, Transform: mat.TRS()}
		var p decode.Primitive
		switch c.Kind {
		case "box":
			p = boxPrimitive(c.Size)
		case "cylinder":
			p = cylinderPrimitive(c.Size[0], c.Size[1])
		case "sphere":
			p = spherePrimitive(c.Size[0])
		case "mesh":
			if c.Mesh == nil {
				continue
			}
			name := path.Base(strings.ReplaceAll(c.Mesh.Stored, "\\", "/"))
			fd := a.x.find(*c.Mesh)
			if fd.path == "" {
				unresolved = append(unresolved, append(decode.Fields{{Key: "collider", Value: c.Name}}, refFields(*c.Mesh, fd)...))
				s.Nodes = append(s.Nodes, decode.Node{Name: name, Parent: at, Matrix: mat, Extras: decode.Fields{{Key: "unresolved", Value: fd.tried}}})
				continue
			}
			po := a.part(ctx, fd.path)
			if po.err != nil {
				failed = append(failed, decode.Fields{{Key: "collider", Value: c.Name}, {Key: "path", Value: fd.shown}, {Key: "error", Value: po.err.Error()}})
				s.Nodes = append(s.Nodes, decode.Node{Name: name, Parent: at, Matrix: mat, Extras: decode.Fields{{Key: "error", Value: po.err.Error()}}})
				continue
			}
			for _, pm := range po.scene.Meshes {
				for _, pp := range pm.Primitives {
					p.Indices = append(p.Indices, offsetIndices(pp.Indices, uint32(len(p.Positions)))...)
					p.Positions = append(p.Positions, pp.Positions...)
				}
			}
		default:
			continue
		}
		p.Material = -1
		if len(p.Indices) == 0 {
			continue
		}
		mesh.Primitives = []decode.Primitive{p}
		s.Meshes = append(s.Meshes, mesh)
	}
	if len(unresolved) > 0 || len(failed) > 0 {
		s.Nodes[0].Extras = append(append(decode.Fields(nil), s.Nodes[0].Extras...),
			decode.Field{Key: "unresolved", Value: nonNilFields(unresolved)}, decode.Field{Key: "failed", Value: nonNilFields(failed)})
	}
	return s
}

func offsetIndices(idx []uint32, by uint32) []uint32 {
	out := make([]uint32, len(idx))
	for i, v := range idx {
		out[i] = v + by
	}
	return out
}

// boxPrimitive is a box of full extents size centred on the origin,
// its faces outward and counter-clockwise.
func boxPrimitive(size [3]float64) decode.Primitive {
	var p decode.Primitive
	h := [3]float32{float32(size[0] / 2), float32(size[1] / 2), float32(size[2] / 2)}
	for i := 0; i < 8; i++ {
		v := [3]float32{-h[0], -h[1], -h[2]}
		for k := 0; k < 3; k++ {
			if i&(1<<k) != 0 {
				v[k] = h[k]
			}
		}
		p.Positions = append(p.Positions, v)
	}
	// Corner i has bit k set when its coordinate k is +h[k].
	p.Indices = []uint32{
		0, 2, 3, 0, 3, 1, // −z
		4, 5, 7, 4, 7, 6, // +z
		0, 1, 5, 0, 5, 4, // −y
		2, 6, 7, 2, 7, 3, // +y
		0, 4, 6, 0, 6, 2, // −x
		1, 3, 7, 1, 7, 5, // +x
	}
	return p
}

const roundSegments = 24

// cylinderPrimitive is a closed cylinder about Y, centred on the origin.
func cylinderPrimitive(radius, height float64) decode.Primitive {
	var p decode.Primitive
	r, h := float32(radius), float32(height/2)
	for i := 0; i < roundSegments; i++ {
		a := 2 * math.Pi * float64(i) / roundSegments
		x, z := r*float32(math.Cos(a)), r*float32(math.Sin(a))
		p.Positions = append(p.Positions, [3]float32{x, -h, z}, [3]float32{x, h, z})
	}
	bottom, top := uint32(len(p.Positions)), uint32(len(p.Positions)+1)
	p.Positions = append(p.Positions, [3]float32{0, -h, 0}, [3]float32{0, h, 0})
	for i := uint32(0); i < roundSegments; i++ {
		j := (i + 1) % roundSegments
		b0, t0, b1, t1 := 2*i, 2*i+1, 2*j, 2*j+1
		p.Indices = append(p.Indices, b0, t0, t1, b0, t1, b1, bottom, b0, b1, top, t1, t0)
	}
	return p
}

// spherePrimitive is a sphere of radius r centred on the origin.
func spherePrimitive(radius float64) decode.Primitive {
	var p decode.Primitive
	rings := roundSegments / 2
	for y := 0; y <= rings; y++ {
		th := math.Pi * float64(y) / float64(rings)
		for x := 0; x < roundSegments; x++ {
			ph := 2 * math.Pi * float64(x) / roundSegments
			p.Positions = append(p.Positions, [3]float32{
				float32(radius * math.Sin(th) * math.Cos(ph)), float32(radius * math.Cos(th)), float32(radius * math.Sin(th) * math.Sin(ph))})
		}
	}
	for y := 0; y < rings; y++ {
		for x := 0; x < roundSegments; x++ {
			a := uint32(y*roundSegments + x)
			b := uint32(y*roundSegments + (x+1)%roundSegments)
			c, d := a+roundSegments, b+roundSegments
			p.Indices = append(p.Indices, a, b, d, a, d, c)
		}
	}
	return p
}
