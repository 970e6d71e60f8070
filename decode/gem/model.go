package gem

// Magics.
const (
	MagicEPLY = "EPLY" // 16-bit index meshes
	MagicBPLY = "BPLY" // large (map) meshes, 32-bit indices
	MagicPM01 = "PM01" // GEM3
)

// Kind tells the four submesh chunk shapes apart.
type Kind uint8

const (
	KindMESH     Kind = iota + 1 // legacy MESH (fvf)
	KindSBM1                     // GEM RTS 1.1+ SBM1 (vertex elements)
	KindSUBMAS2                  // SUBM under EPLY/BPLY (Assault Squad 2 maps)
	KindSUBMGEM3                 // SUBM under PM01 (vertex_format bits)
)

func (k Kind) String() string {
	switch k {
	case KindMESH:
		return "MESH"
	case KindSBM1:
		return "SBM1"
	case KindSUBMAS2:
		return "SUBM-AS2"
	case KindSUBMGEM3:
		return "SUBM-GEM3"
	}
	return "unknown"
}

// FourCC is the chunk identifier a submesh of this kind is stored under.
func (k Kind) FourCC() string {
	switch k {
	case KindSBM1:
		return "SBM1"
	case KindSUBMAS2, KindSUBMGEM3:
		return "SUBM"
	}
	return "MESH"
}

// File mirrors a .ply file: its magic and its chunks in file order.
type File struct {
	Magic  string
	Chunks []Chunk
}

// Chunk is one chunk. The concrete types are *Bounds, *Skin, *Submesh,
// *Vert, *Indices, *Basis, *InfoGrid, *Adjacency, *Shadow, *Mirror and
// *Markup.
type Chunk interface {
	FourCC() string
	Where() *Span
}

// Span is where the parser found a chunk; the encoder ignores it.
type Span struct {
	Index  int   // position among the file's chunks, from 0
	Offset int64 // offset of the FourCC
	Length int64 // bytes including the FourCC
}

// Where returns the chunk's position in its file.
func (s *Span) Where() *Span { return s }

// Bounds is BNDS: the axis-aligned box of the mesh.
type Bounds struct {
	Span
	Min, Max [3]float32
}

// Skin is SKIN: the bone names that bone maps refer to (value N = Bones[N−1]).
type Skin struct {
	Span
	Bones []string
}

// Submesh is MESH, SBM1 or SUBM. Which fields are stored depends on Kind
// and Flags; the others are zero.
type Submesh struct {
	Span
	Kind Kind

	FVF          uint32    // MESH: Direct3D flexible vertex format
	VertexFormat uint16    // SUBM-GEM3: vertex_format bits
	Elements     []Element // SBM1, SUBM-AS2: vertex declaration
	Tags         []Tag     // SBM1, SUBM-AS2

	FaceStart, FaceCount     uint32
	VertexStart, VertexCount uint16    // SUBM-GEM3 (informational)
	Unknown                  [2]uint32 // SUBM-AS2: two words of unknown meaning
	Flags                    uint32

	SpecularColor [4]byte // MESH with flag 0x200, as stored
	Material      string  // material name (MESH with 0x400, SBM1, SUBM)
	// Texture names, MESH without 0x400. Which are stored follows from the
	// flags and the fvf's UV count (see textureSlots).
	Diffuse, Diffuse1, Specular, Bump string

	// BoneMap maps vertex bone indices to SKIN: value 0 is the mesh's own
	// matrix, N is SKIN bone N−1. HasBoneMap says whether the chunk stores
	// one (it may be stored empty).
	BoneMap    []byte
	HasBoneMap bool
	// BoneMapRule says why the parser read a bone map: "0x800" (sub-skin,
	// what real files do), "0x10" (the original text's reading, accepted
	// when the bytes after the map start a chunk) or "skin" (GEM3 flag 0x2).
	BoneMapRule string
}

// Element is one vertex declaration entry of SBM1 and SUBM-AS2.
type Element struct {
	TypeUsage  byte // low nibble type, high nibble usage
	UsageIndex byte
	Stream     byte
}

// Tag is one vertex tag of SBM1 and SUBM-AS2.
type Tag struct {
	Index byte
	Chunk uint32
}

// Vert is VERT. Data holds Count × Size bytes (nil after a Scan).
type Vert struct {
	Span
	Count uint32
	Size  uint16
	Flags uint16
	Data  []byte
}

// Indices is INDX (16-bit) or IND4 (32-bit, Wide). Values is nil after a Scan.
type Indices struct {
	Span
	Wide   bool
	Count  uint32
	Values []uint32
}

// Basis is BAS2: the map's polygon and texture planes, each a centre and
// two axes.
type Basis struct {
	Span
	Poly, Tex [3][2]float32
}

// InfoGrid is InfG: the terrain grid. Faces is nil after a Scan.
type InfoGrid struct {
	Span
	Start, End [2]int32
	Count      uint32
	Faces      []uint16 // bits 0–14 submesh index, bit 15 invalid
}

// Adjacency is ADJA: three neighbour faces per face (0xFFFF none).
type Adjacency struct {
	Span
	Count uint32
	Faces [][3]uint16
}

// Shadow is SHDW: one byte per face, 1 when it casts a shadow.
type Shadow struct {
	Span
	Count uint32
	Casts []byte
}

// Mirror is MROR: an empty marker of mirrored meshes.
type Mirror struct{ Span }

// Markup is MARK: opaque markup bytes.
type Markup struct {
	Span
	Size uint32
	Data []byte
}

func (*Bounds) FourCC() string    { return "BNDS" }
func (*Skin) FourCC() string      { return "SKIN" }
func (s *Submesh) FourCC() string { return s.Kind.FourCC() }
func (*Vert) FourCC() string      { return "VERT" }
func (*Basis) FourCC() string     { return "BAS2" }
func (*InfoGrid) FourCC() string  { return "InfG" }
func (*Adjacency) FourCC() string { return "ADJA" }
func (*Shadow) FourCC() string    { return "SHDW" }
func (*Mirror) FourCC() string    { return "MROR" }
func (*Markup) FourCC() string    { return "MARK" }
func (ix *Indices) FourCC() string {
	if ix.Wide {
		return "IND4"
	}
	return "INDX"
}

// knownFourCC reports whether b starts a chunk: the only way to tell a
// chunk boundary, since no chunk stores its size.
func knownFourCC(b []byte) bool {
	if len(b) < 4 {
		return false
	}
	switch string(b[:4]) {
	case "INDX", "IND4", "VERT", "BAS2", "InfG", "BNDS", "ADJA", "SHDW", "MROR", "MARK", "SKIN", "MESH", "SBM1", "SUBM":
		return true
	}
	return false
}

// Mesh flags (MESH, SBM1, SUBM-AS2).
const (
	FlagTwoSided     = 0x1
	FlagAlpha        = 0x2
	FlagRealtime     = 0x4
	FlagPlayerColor  = 0x8
	FlagSkinned      = 0x10
	FlagShadowVolume = 0x20
	FlagMirrored     = 0x40
	FlagBlend2nd     = 0x80
	FlagBump         = 0x100
	FlagSpecular     = 0x200
	FlagMaterial     = 0x400
	FlagSubSkin      = 0x800
	FlagTwoTextures  = 0x1000
	FlagVD           = 0x2000
	FlagLightmap     = 0x4000
)

// GEM3 SUBM flags: a different, smaller set.
const (
	GEM3TwoSided = 0x1
	GEM3Skin     = 0x2
)

// VERT flags.
const (
	VertFullColor      = 0x1 // clear: colours are stored halved
	VertOptimizedOrder = 0x2
	VertColorChecked   = 0x4
)

var meshFlagNames = []string{
	"two_sided", "alpha", "realtime_light", "player_color", "skinned", "shadow_volume", "mirrored",
	"blend_by_second_texture_alpha", "bump", "specular", "material", "sub_skin",
	"two_textures_one_texcoord", "vd", "lightmap",
}

var gem3FlagNames = []string{"two_sided", "skin"}

var vertFlagNames = []string{"full_color", "optimized_order", "color_checked"}

// flagNames names the set bits of v; bits without a name appear as hex.
func flagNames(v uint32, names []string) []string {
	out := []string{}
	for bit := 0; bit < 32; bit++ {
		if v&(1<<bit) == 0 {
			continue
		}
		if bit < len(names) {
			out = append(out, names[bit])
		} else {
			out = append(out, hex32(1<<bit))
		}
	}
	return out
}
