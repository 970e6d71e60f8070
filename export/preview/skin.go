package preview

import (
	"math"

	"github.com/meshfs/meshfs/decode"
)

// Skinned meshes are drawn in their default pose, where a glTF viewer
// shows them: each vertex at Σ wₖ·(Jₖ·Bₖ)·v, Jₖ the world transform of
// its joint k as the .glb's nodes place it (a Scene.Skeleton's joints at
// their Rest, a Skin's joints at their nodes) and Bₖ that joint's inverse
// bind matrix (non-finite entries 0, the last row (0, 0, 0, 1), as the
// exporter writes it); the mesh's own transform is not applied (glTF
// ignores a skinned mesh node's). A vertex with no weight, or only weights
// on joints the skin does not have, stays where it is stored.

// skeletonMats are the skinning matrices (Jₖ·Bₖ) of a Scene.Skeleton,
// on the joint tree the exporter builds (Skeleton.Parents).
func skeletonMats(sk *decode.Skeleton) []decode.Mat4 {
	js := sk.Joints
	parent := sk.Parents()
	world := make([]decode.Mat4, len(js))
	have := make([]bool, len(js))
	var chain func(i int) decode.Mat4
	chain = func(i int) decode.Mat4 {
		if !have[i] {
			m := js[i].Rest.Matrix()
			if js[i].Rest.IsIdentity() {
				m = decode.Identity4()
			}
			if p := parent[i]; p >= 0 {
				m = chain(p).Mul(m)
			}
			world[i], have[i] = m, true
		}
		return world[i]
	}
	mats := make([]decode.Mat4, len(js))
	for i := range js {
		ib := identityBind
		if js[i].InverseBind != nil {
			ib = *js[i].InverseBind
		}
		mats[i] = chain(i).Mul(bindMatrix(ib))
	}
	return mats
}

// skinMats are the skinning matrices of a Skin over the nodes' world
// transforms.
func skinMats(sk *decode.Skin, nodeWorld []decode.Mat4) []decode.Mat4 {
	mats := make([]decode.Mat4, len(sk.Joints))
	for k, j := range sk.Joints {
		w := decode.Identity4()
		if j >= 0 && j < len(nodeWorld) {
			w = nodeWorld[j]
		}
		ib := identityBind
		if k < len(sk.InverseBinds) {
			ib = sk.InverseBinds[k]
		}
		mats[k] = w.Mul(bindMatrix(ib))
	}
	return mats
}

var identityBind = [16]float32{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}

// bindMatrix is an inverse bind matrix as the exporter writes it.
func bindMatrix(ib [16]float32) decode.Mat4 {
	var m decode.Mat4
	for k, v := range ib {
		if f := float64(v); !math.IsNaN(f) && !math.IsInf(f, 0) {
			m[k] = f
		}
	}
	m[3], m[7], m[11], m[15] = 0, 0, 0, 1
	return m
}

// posed is p with its positions and normals skinned by mats (a copy; p is
// not changed), or p itself when it has no joints and weights.
func posed(p *decode.Primitive, mats []decode.Mat4) *decode.Primitive {
	n := len(p.Positions)
	if len(p.Joints) != n || len(p.Weights) != n || n == 0 {
		return p
	}
	q := *p
	q.Positions = make([][3]float32, n)
	if p.Normals != nil {
		q.Normals = make([][3]float32, n)
	}
	for i, v := range p.Positions {
		var m decode.Mat4
		total := 0.0
		for k := range 4 {
			w, j := float64(p.Weights[i][k]), int(p.Joints[i][k])
			if !(w > 0) || j >= len(mats) || math.IsInf(w, 0) {
				continue
			}
			total += w
			for e := range m {
				m[e] += w * mats[j][e]
			}
		}
		if total == 0 {
			q.Positions[i] = v
			if q.Normals != nil {
				q.Normals[i] = p.Normals[i]
			}
			continue
		}
		w := apply(m, v)
		q.Positions[i] = [3]float32{float32(w[0]), float32(w[1]), float32(w[2])}
		if q.Normals != nil {
			nv := p.Normals[i]
			x, y, z := float64(nv[0]), float64(nv[1]), float64(nv[2])
			r := [3]float64{m[0]*x + m[4]*y + m[8]*z, m[1]*x + m[5]*y + m[9]*z, m[2]*x + m[6]*y + m[10]*z}
			if l := math.Sqrt(dot(r, r)); l > 0 {
				r = [3]float64{r[0] / l, r[1] / l, r[2] / l}
			}
			q.Normals[i] = [3]float32{float32(r[0]), float32(r[1]), float32(r[2])}
		}
	}
	return &q
}
