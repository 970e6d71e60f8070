// Package decode holds the neutral scene model that every format decoder fills
// and every exporter reads, the structure description behind header.json and
// chunks/, and the Format interface that ties a decoder to the rest of meshfs.
//
// One convention for all scenes: right-handed, Y up, metres, counter-clockwise
// front faces, UV origin at the top-left (glTF's). Each decoder converts from
// its source's convention; exporters never need to know where a scene came from.
package decode

import "image"

// Scene is one decoded source file.
type Scene struct {
	Meshes    []Mesh
	Materials []Material
	Skeleton  *Skeleton // nil when the file has no skin
	// Nodes, when not empty, are a node tree (an assembled model's): each
	// mesh then hangs on its node (Mesh.Node), a skinned mesh is bound to
	// nodes by its Skin, and Skeleton is not used.
	Nodes      []Node
	Animations []Animation
	// Repairs lists what Repair changed because the source holds
	// non-finite values; header.json reports it.
	Repairs []Repair
}

// Mesh becomes one glTF node with one glTF mesh; its primitives are the
// source's surfaces or submeshes.
type Mesh struct {
	Name       string
	Primitives []Primitive
	// TargetNames names the morph targets; every primitive has exactly
	// len(TargetNames) targets in the same order.
	TargetNames []string
	// Skinned meshes are bound to Scene.Skeleton.
	Skinned bool
	// Transform is the node's local transform (identity when zero value is
	// used through Identity()).
	Transform TRS
	// Node is, in a scene with Nodes, the node the mesh hangs on (its
	// Transform is then relative to that node), or -1 for the scene's
	// root. Skin, when set, binds a skinned mesh to nodes: its
	// primitives' Joints index Skin.Joints.
	Node int
	Skin *Skin
}

// Node is one node of a scene's node tree.
type Node struct {
	Name string
	// Parent is an earlier node's index, or -1 for a root.
	Parent int
	// Matrix is the local transform relative to the parent, column-major.
	// It may mirror (negative determinant); exporters keep the meshes'
	// front faces front beneath it.
	Matrix Mat4
	// Extras are the node's own fields (glTF node extras).
	Extras Fields
	// Light, when set, is a light at the node (glTF KHR_lights_punctual).
	Light *Light
}

// Light is a punctual light, as KHR_lights_punctual has them: it shines
// along its node's local −Z (a directional or spot light), from its
// node's origin (a point or spot light).
type Light struct {
	Kind string // "directional", "point" or "spot"
	// Color is linear RGB, each within [0, 1].
	Color [3]float32
	// Intensity is the engine's brightness as written (glTF takes it as
	// lux for a directional light, candela for the others); ≥ 0.
	Intensity float32
	// Range bounds a point or spot light's reach in metres; 0: unbounded.
	Range float32
	// InnerCone and OuterCone are a spot light's cone half-angles in
	// radians, 0 ≤ InnerCone < OuterCone ≤ π/2; both 0 for glTF's default.
	InnerCone, OuterCone float32
}

// Skin binds a skinned mesh of a scene with Nodes to its joints.
type Skin struct {
	// Joints are node indices, each once.
	Joints []int
	// InverseBinds are one column-major matrix per joint, from the
	// skinned mesh's space to the joint's at rest.
	InverseBinds [][16]float32
}

// Primitive is one surface: indexed triangles with per-vertex attributes.
// Every non-nil attribute slice has len(Positions) elements.
type Primitive struct {
	Name     string
	Material int // index into Scene.Materials, -1 for none
	// MaterialConfigs, when the source has several material
	// configurations (Train Fever .msh matConfigs rows), name the
	// primitive's material under each, the first being Material's; a
	// model may pick another (ModelPart.MaterialConfig). Exporters ignore it.
	MaterialConfigs []string

	Positions [][3]float32
	Normals   [][3]float32 // unit length, or nil
	Tangents  [][4]float32 // xyz unit length, w = ±1, or nil
	UVs       [][][2]float32
	// Colors are RGBA sets with each component in [0, 1]: the stored values
	// scaled, with no colour-space conversion (as the game feeds them to its
	// shaders); exporters write them as they are.
	Colors [][][4]float32

	// Joints index Scene.Skeleton.Joints; Weights sum to 1 (see NormalizeWeights).
	Joints  [][4]uint16
	Weights [][4]float32

	Targets []MorphTarget

	// Indices is a triangle list; every index is < len(Positions).
	Indices []uint32
}

// MorphTarget holds deltas from the primitive's base attributes. Normals and
// Tangents may be nil when the target does not change them.
type MorphTarget struct {
	Positions [][3]float32
	Normals   [][3]float32
	Tangents  [][3]float32
}

// Material is what the source says about a surface's look. Textures are
// the references as stored; the Map fields are the images they resolved to
// (export/outputs fills them where it finds the files), ready for an
// exporter that knows nothing of the source's formats.
type Material struct {
	Name        string
	Textures    []Texture
	DoubleSided bool
	// AlphaBlend: the surface blends by alpha (glTF BLEND). AlphaMask: it
	// is alpha-tested, pixels with alpha below AlphaCutoff (0–1) dropped
	// (glTF MASK). Blending wins when both are set; neither is OPAQUE.
	AlphaBlend  bool
	AlphaMask   bool
	AlphaCutoff float32
	// BaseColor is RGBA; the zero value means "not given" (exporters use white).
	BaseColor [4]float32

	// BaseColorMap is the albedo (RGB) with its opacity (A).
	BaseColorMap *Image
	// NormalMap is a tangent-space normal map, X, Y, Z in R, G, B mapped
	// from [−1, 1] to [0, 255], +Y down the image's V as glTF's is.
	// NormalRedGreen says it holds only X and Y (R, G; a two-channel map):
	// an exporter rebuilds Z = sqrt(1 − x² − y²).
	NormalMap      *Image
	NormalRedGreen bool
	// MetallicRoughnessMap holds roughness in G and metalness in B, as
	// glTF's metallicRoughnessTexture; OcclusionMap holds ambient
	// occlusion in R. They may be the same image.
	MetallicRoughnessMap *Image
	OcclusionMap         *Image
}

// Image is a decoded texture: its pixels, and the PNG encoding of them
// when it was made once already (shared by every material and file that
// uses the texture). Name is the file it is shown as ("wall.dds.png").
// Ref is where the image is as a file, relative to the folder the
// exported files are in ("" when it is none); an image may carry only a
// Ref (no pixels) for exporters that reference textures rather than
// embed them.
type Image struct {
	Name   string
	Pixels *image.NRGBA
	PNG    []byte // nil: exporters encode Pixels themselves
	Ref    string
	// Note says how the picture differs from its file's, when it does
	// ("mip level 1 (2048×2048) of a 4096×4096 texture: ..."); exporters
	// keep it with the image.
	Note string
}

// Texture is one texture reference of a material.
type Texture struct {
	Role string // "diffuse", "specular", "bump", "diffuse1", ...
	Path string
}

// Skeleton is the joint hierarchy skinned meshes are bound to.
type Skeleton struct {
	Joints []Joint
}

// Parents is each joint's parent as exporters build the joint tree: -1
// (a root) for a parent out of range or the joint itself, and a chain
// that leads back to a joint cut there (that joint a root).
func (sk *Skeleton) Parents() []int {
	js := sk.Joints
	parent := make([]int, len(js))
	for i, j := range js {
		parent[i] = j.Parent
		if j.Parent < 0 || j.Parent >= len(js) || j.Parent == i {
			parent[i] = -1
		}
	}
	// Break loops: walk each chain; meeting a joint of the current walk
	// means a loop, cut at the joint where the walk started repeating.
	const (
		unseen = iota
		walking
		done
	)
	state := make([]uint8, len(js))
	var path []int
	for i := range js {
		path = path[:0]
		k := i
		for k >= 0 && state[k] == unseen {
			state[k] = walking
			path = append(path, k)
			k = parent[k]
		}
		if k >= 0 && state[k] == walking {
			parent[k] = -1 // k's chain leads back to k
		}
		for _, p := range path {
			state[p] = done
		}
	}
	return parent
}

// Joint is one bone.
type Joint struct {
	Name   string
	Parent int // index into Skeleton.Joints, -1 for a root
	// Rest is the joint's local transform relative to its parent.
	Rest TRS
	// InverseBind is the column-major inverse bind matrix (model space to
	// joint space); nil means identity.
	InverseBind *[16]float32
}

// TRS is a translation, rotation (unit quaternion x, y, z, w) and scale.
type TRS struct {
	Translation [3]float32
	Rotation    [4]float32
	Scale       [3]float32
}

// Identity is the TRS that changes nothing.
func Identity() TRS {
	return TRS{Rotation: [4]float32{0, 0, 0, 1}, Scale: [3]float32{1, 1, 1}}
}

// IsIdentity reports whether t changes nothing. The zero TRS counts as
// identity too, so decoders need not fill transforms they do not have.
func (t TRS) IsIdentity() bool {
	if t == (TRS{}) {
		return true
	}
	return t == Identity()
}

// Animation is a named set of channels sampled over time.
type Animation struct {
	Name     string
	Channels []Channel
}

// TargetKind says what an animation channel drives.
type TargetKind int

const (
	TargetMesh  TargetKind = iota // Scene.Meshes[Index]'s node
	TargetJoint                   // Scene.Skeleton.Joints[Index]
	TargetNode                    // Scene.Nodes[Index]
)

// Path is the animated property, named as in glTF.
type Path string

const (
	PathTranslation Path = "translation"
	PathRotation    Path = "rotation"
	PathScale       Path = "scale"
)

// Channel animates one property of one node with linear (rotation: spherical
// linear) interpolation, or step interpolation when Step is set.
type Channel struct {
	Kind  TargetKind
	Index int
	Path  Path
	// Times in seconds, strictly increasing, starting at or after 0.
	Times []float32
	// Values has 3 (translation, scale) or 4 (rotation x, y, z, w) floats per time.
	Values []float32
	Step   bool
}

// Counts are the totals that header.json reports and clients check against.
type Counts struct {
	Meshes, Primitives, Vertices, Triangles, Joints, MorphTargets, Animations int
}

// Count sums the scene's sizes.
func (s *Scene) Count() Counts {
	c := Counts{Meshes: len(s.Meshes), Animations: len(s.Animations)}
	if s.Skeleton != nil {
		c.Joints = len(s.Skeleton.Joints)
	}
	for _, m := range s.Meshes {
		c.Primitives += len(m.Primitives)
		c.MorphTargets += len(m.TargetNames)
		for _, p := range m.Primitives {
			c.Vertices += len(p.Positions)
			c.Triangles += len(p.Indices) / 3
		}
	}
	return c
}
