package unigine

import "math"

// The raw model: what a UNIGINE mesh file holds, field for field, in the
// file's own conventions (Z up, tangent frames as quaternion shorts, weights
// as u16). The reader parses into it, the writer writes from it, and the
// scene builder turns it into a decode.Scene. Round-trip tests compare it.

// Known magics.
const (
	MagicMS15 = "ms15" // static mesh, the current format
	MagicSK10 = "sk10" // skinned mesh with morph targets
	MagicMS14 = "ms14" // older static/skinned mesh (SDK up to 2.20)
	MagicMS13 = "ms13" // uncompressed stream with lightmap fields, bones before the surfaces
	MagicMS12 = "ms12" // ms13 plus the name list after the bones
	MagicMS11 = "ms11" // one uncompressed stream, bones and a name list, no lightmap fields
	MagicMS10 = "ms10" // ms11 with tangent frames packed in 7 bytes
)

// File is one .mesh or .mesh_skinned file.
type File struct {
	Magic string
	// SpatialTreeTriangles is the header's spatial-tree triangle field (absent in ms11/ms10).
	SpatialTreeTriangles int32
	Bounds               Bounds
	// Names is the name list after the bones (ms12, ms11, ms10): empty in
	// most files, ["scene"] in some skinned ms11 files; each names one of
	// Anims.
	Names []string
	// Joints: sk10's joints or the bones of ms14 and ms13 down to ms10.
	Joints []Joint
	// Bind and Rest are the joints' transforms as stored. sk10 stores both
	// with a count each (equal to the joint count, or 0 when absent); ms14
	// and ms11 store one transform per bone after the second magic, kept in
	// Bind (they are parent-relative: see scene.go).
	Bind, Rest []Transform
	// SkeletonGUID and SkeletonPath name sk10's shared .skeleton file.
	SkeletonGUID, SkeletonPath string
	Surfaces                   []Surface
	// RAM is the estimated memory use in bytes (absent in ms13 to ms10).
	RAM int64
	// Anims are the animations a stream stores after the bone transforms,
	// one per name of Names (ms12, ms11, ms10); Scan keeps their counts
	// only (no Flags or Values).
	Anims []Anim
	// Tail holds bytes between the last surface and the final magic of a
	// stream (ms13 to ms10), kept unread.
	Tail []byte
}

// Bounds is a bounding box and sphere.
type Bounds struct {
	Min, Max     [3]float32
	SphereCenter [3]float32
	SphereRadius float32
}

// BoundsOf is the box around ps and the sphere around that box, as the
// encoder's callers (fixtures, generated meshes) fill a header.
func BoundsOf(ps [][3]float32) Bounds {
	var b Bounds
	if len(ps) == 0 {
		return b
	}
	b.Min, b.Max = ps[0], ps[0]
	for _, p := range ps {
		for k := range 3 {
			b.Min[k] = min(b.Min[k], p[k])
			b.Max[k] = max(b.Max[k], p[k])
		}
	}
	var r2 float64
	for k := range 3 {
		b.SphereCenter[k] = (b.Min[k] + b.Max[k]) / 2
		d := float64(b.Max[k]-b.Min[k]) / 2
		r2 += d * d
	}
	b.SphereRadius = float32(math.Sqrt(r2))
	return b
}

// Joint is one joint (bone) of a skinned mesh.
type Joint struct {
	Name   string
	Parent int16 // −1 for a root
}

// Transform is a joint transform as stored: position, rotation quaternion
// (x, y, z, w), scale.
type Transform struct {
	Position [3]float32
	Rotation [4]float32
	Scale    [3]float32
}

// Surface is one surface: its header fields and its geometry block.
type Surface struct {
	Name string
	// Lightmap UV channel and resolution (ms15, ms14, ms13, ms12).
	LightmapChannel, LightmapResolution int8
	Bounds                              Bounds
	// Targets[0] holds the base coordinates and tangent frames; further
	// targets are morph targets (sk10, ms14, ms11). ms15 has exactly one.
	Targets []Target
	// Weights has one entry per coordinate vertex, or none (sk10, ms14, ms11).
	Weights [][]Influence
	UV0     [][2]float32
	UV1     [][2]float32
	Colors  [][4]uint8
	// CIndices index the coordinate vertices (Targets[0].Positions),
	// TIndices the triangle vertices (tangents, UVs, colours); corner k of
	// the surface is (CIndices[k], TIndices[k]). The reader gives both
	// the same array when the file stores the same list twice (a surface
	// without seams): treat them as read-only.
	CIndices, TIndices []uint32
	// Collision is the decompressed collision block (edges and spatial
	// tree; ms15 and ms14), kept as bytes.
	Collision []byte
	// Stored reports (reader) or asks (writer) that the surface's blocks
	// are stored without LZ4 compression.
	Stored bool
}

// Target is the base mesh (target 0) or one morph target.
type Target struct {
	Name      string
	Positions [][3]float32
	// Tangents are tangent-frame quaternions, each component s/32767.
	Tangents [][4]int16
}

// Influence is one joint's weight on a coordinate vertex.
type Influence struct {
	Joint  int16
	Weight uint16 // w/65535
}

// layout says which optional parts a version has.
type layout struct {
	blocks      bool // LZ4 blocks with a trailing offset table (not ms11/ms10)
	collision   bool // collision blocks after the geometry blocks (ms15, ms14)
	spatial     bool // spatial-tree triangle count after the magic
	lightmap    bool // lightmap channel and resolution per surface (ms15, ms14)
	bones       bool // bone list after the bounds (ms14, ms13 to ms10)
	skin        bool // sk10 joint list, transforms and skeleton reference
	targets     bool // morph targets per surface (not ms15)
	weights     bool // weight section in the geometry (not ms15)
	blockCounts bool // index and vertex counts stored in the stream (ms13 to ms10)
	names       bool // a name list after the bones (ms12, ms11, ms10)
	tangents7   bool // tangent frames as 3 shorts and a sign byte (ms10)
}

func layoutOf(magic string) (layout, bool) {
	switch magic {
	case MagicMS15:
		return layout{blocks: true, collision: true, spatial: true, lightmap: true}, true
	case MagicSK10:
		return layout{blocks: true, spatial: true, skin: true, targets: true, weights: true}, true
	case MagicMS14:
		return layout{blocks: true, collision: true, spatial: true, lightmap: true, bones: true, targets: true, weights: true}, true
	case MagicMS13:
		return layout{lightmap: true, bones: true, targets: true, weights: true, blockCounts: true}, true
	case MagicMS12:
		return layout{lightmap: true, bones: true, targets: true, weights: true, blockCounts: true, names: true}, true
	case MagicMS11:
		return layout{bones: true, targets: true, weights: true, blockCounts: true, names: true}, true
	case MagicMS10:
		return layout{bones: true, targets: true, weights: true, blockCounts: true, names: true, tangents7: true}, true
	}
	return layout{}, false
}
