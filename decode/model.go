package decode

import "context"

// A model file (GEM or Transport Fever .mdl) places meshes held in other
// files: it names parts, materials and animations by reference. Its
// decoder reads the model file alone and returns a Model; export/outputs
// resolves the references (Ref), decodes the parts with their own
// formats and assembles one Scene per LOD. Decoders of model files know
// nothing of the files they name beyond how the game finds them.
//
// Conventions are the Scene's: right-handed, Y up, metres (Model.Scale
// says what the decoder multiplied by), counter-clockwise. Transforms are
// in that convention already, so a part decoded by its own format (which
// converts to Y up itself) is placed by them unchanged but for its unit:
// a part's own format keeps the engine's unit, so the assembler scales
// each part by Model.Scale where it places it (a rigid part's mesh node;
// a skinned part's bind), never the node tree, whose translations are in
// metres already.

// ModelDecoder is implemented by a Format whose files are models: Decode
// of such a format is not called; outputs assembles the Model instead.
type ModelDecoder interface {
	DecodeModel(ctx context.Context, src *Source) (*Model, error)
}

// Model is what a model file says.
type Model struct {
	// LODs are complete node trees, the most detailed first. A model has
	// at least one.
	LODs []ModelLOD
	// Animations are sequences shared by every LOD, targeting nodes by
	// name (GEM: a sequence drives bones by name). LOD-specific ones are
	// in ModelLOD.Animations.
	Animations []ModelAnimation
	// Unit names the engine's unit ("metre"; "GEM unit"), and Scale is
	// the factor from it to metres that the decoder applied to every
	// translation: node matrices, channels held here, collider matrices
	// and sizes (1 when the engine's unit is the metre). An animation
	// file's own format converts its translations to metres too. Parts'
	// and collider meshes' vertices are not scaled: see this file's first
	// comment.
	Unit  string
	Scale float64
	// Colliders are collision shapes, shown hidden or apart.
	Colliders []Collider
	// Header is the model's own fields for header.json beyond what
	// outputs derives (metadata, bounding info), in the file's order.
	Header Fields
}

// ModelLOD is one level of detail: a node tree with the meshes on it.
type ModelLOD struct {
	// VisibleFrom and VisibleTo are the distances in metres the game shows
	// the LOD at; both 0 when the file gives no range (order alone).
	VisibleFrom, VisibleTo float64
	// Nodes are the tree: a node's Parent is an earlier index, or -1.
	Nodes      []ModelNode
	Animations []ModelAnimation
}

// ModelNode is one node (a bone, a TF node) with its local transform.
type ModelNode struct {
	Name   string
	Parent int
	// Matrix is the local transform, column-major, relative to the
	// parent. It may mirror (negative determinant): exporters keep the
	// front faces front (glTF reverses winding under such a node).
	Matrix Mat4
	// Parts are the meshes placed at this node.
	Parts []ModelPart
	// Extras are what the game says of the node beyond its transform
	// (bone kind, limits, speed, parameters), for glTF node extras and
	// header.json.
	Extras Fields
	// Light is a light at the node (Light's rule: it shines along the
	// node's −Z), or nil.
	Light *Light
}

// ModelPart is one mesh file placed at a node.
type ModelPart struct {
	Mesh Ref
	// Materials, when not empty, replace the part's own materials: one
	// per sub-mesh in order, each a material name as the engine's
	// material resolver takes it (TF: relative to res/models/material/).
	Materials []string
	// Skinned: the part is bound by joint names to the model's nodes
	// (GEM skinned parts, TF jointWeights) rather than placed rigidly.
	// Its vertices are in the frame of the node carrying it, as a rigid
	// part's are: the assembler binds the skin so that at rest every
	// vertex is where that node puts it.
	Skinned bool
	// MaterialConfig picks one of the part's own material configurations
	// (Primitive.MaterialConfigs; Train Fever 1 models choose one per
	// mesh): 0, or one the part does not have, keeps its first.
	MaterialConfig int
}

// ModelAnimation is one named animation: either a file (File set: an
// animation format's file, its joints or nodes matched by name, or, for
// Node ≥ 0, the single node it moves as a TF .ani does) or channels held
// in the model itself (Kind TargetJoint, Index a node of the LOD).
// A single-node file's track is relative to the node: the node's
// transform at time t is its Matrix times the track's (TF plays .ani
// tracks in the node's frame). Channels held in the model are the node's
// whole transform, as glTF channels are.
type ModelAnimation struct {
	Name     string
	File     *Ref
	Node     int // the node a single-track file (TF .ani) moves; -1 when by names
	Channels []Channel
	// Take, when set, is the one animation of File to use, by name (a
	// Train Fever 1 event plays one of a mesh's own animations); Reverse
	// plays it backwards (the event's forward = false).
	Take    string
	Reverse bool
	// Extras are the sequence's own fields (speed, resume).
	Extras Fields
}

// Collider is one collision shape at a node of LOD 0.
type Collider struct {
	Name   string
	Kind   string // "box", "cylinder", "sphere", "mesh"
	Node   int    // -1: the model's root
	Matrix Mat4
	// Size is the box's full extents, or the cylinder's radius, height.
	Size [3]float64
	// Mesh is a polyhedron's file (GEM .vol) when Kind is "mesh".
	Mesh *Ref
}

// RefBase says what a Ref's path is relative to.
type RefBase int

const (
	// RefModelDir: relative to the model file's folder (GEM parts).
	RefModelDir RefBase = iota
	// RefAssetRoot: relative to an asset root, the game's own first
	// (TF: the res/ folder above the model), then --asset-path roots.
	RefAssetRoot
)

// Ref is a file a model names.
type Ref struct {
	Stored string  // as the model names it, for header.json
	Base   RefBase // what Rel is relative to
	Rel    string  // slash-separated path to try
}
