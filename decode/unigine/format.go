// Package unigine reads UNIGINE meshes: `.mesh` (ms15, and the older ms14,
// ms13, ms12, ms11 and ms10 found in the wild) and `.mesh_skinned` (sk10),
// as described in FORMATS.md §3 and, for ms13 down to ms10, below; and
// UNIGINE animations (`.anim`: an10, an11, an12), described at the end. Read parses a file into the raw model (File), Encode
// writes one, Scene converts the model, and Format ties them to meshfs.
//
// Decisions, where the specification leaves room:
//   - Compact ints are sign-magnitude varints; encodings longer than needed
//     (a final zero byte, more than five bytes) and values beyond 32 bits
//     are errors, since a writer never makes them.
//   - A block whose two sizes are equal is stored; otherwise it is one raw
//     LZ4 block, and a claimed size beyond LZ4's 255:1 ratio (or 2 GiB) is
//     refused before allocating. A block must decompress to exactly its
//     claimed size and be consumed exactly by the surface's fields.
//   - Index widths: u8 below 256 vertices, u16 below 65 536, above that
//     compact ints in a block (ms15, sk10, ms14) and int32s in a stream
//     (ms13 to ms10), counting coordinate vertices (target 0's positions)
//     for the coordinate indices and triangle vertices (target 0's
//     tangents) for the triangle indices. Every index is checked against
//     its count. The streams' int32s are seen in the public
//     ms12_mao_3927a595….mesh: surface 0 has 82 271 triangle vertices,
//     and its 83 901 triangle indices (count "bd 9e 0a" at 0x195955) are
//     4 bytes each from 0x195958 ("2c 41 01 00" = 82 220) to 0x1e784c,
//     where surface 1's vertex count ("94 13" = 1 236) and positions
//     follow; read as compact ints they end early and surface 1 reads
//     nonsense. No other public stream file reaches 65 536 vertices; ms12
//     and ms13 come from one writer (the same asset saved as both differs
//     only in the name list), so every stream version takes the rule.
//   - glTF vertices are the unique (coordinate, triangle) index pairs in
//     order of first use; winding is kept (UNIGINE's faces are
//     counter-clockwise, checked on the real files), and positions, normals,
//     tangents, morph deltas and joint transforms turn from Z up to Y up.
//   - Skins: see skeleton.go (sk10 bind = model space; ms14 bone transforms
//     are parent-relative, as the real capsule shows). Several root joints
//     get one synthetic root "root" in front; file joint indices shift by 1.
//     The scene keeps the transforms as stored, scale included (the ms11
//     agent's root rests at 0.25, the ms13 cat's at 1/10 000 with its bones
//     at 10 000); the .glb files get a rest pose without scale, the bind
//     pose and the animations re-expressed so that every vertex skins where
//     it did (decode.Scene.RigidRest, applied by export/outputs for every
//     format): Blender 3.4's importer builds bones from the rest pose
//     without scale and skinned those two meshes inside out.
//   - Each surface becomes a mesh (a glTF node and mesh) named as the
//     surface, so that Blender shows every surface as a named object (an
//     unnamed surface: FILE_i); all of them share the skin. A surface's
//     morph targets are its mesh's (unnamed: "target_k").
//   - A mesh file names no material: each distinct surface name is one
//     material of that name (Scene.Materials, Structure.Materials), which
//     export/outputs resolves to the .mat file of that name beside the mesh
//     (ParseMat) when there is one.
//   - Non-finite positions and UVs are kept by the reader and repaired by
//     decode.Scene.Repair (their triangles dropped); header.json's
//     "repairs" lists the changes. Normals and tangents come from short
//     quaternions and are always finite.
//   - ms13, ms12, ms11, ms10 (worked out on public files: static and
//     skinned ms13, static ms12, ms11 with 0 and 56 bones, ms10; the same
//     box as ms12 and ms13 differs only in the name list) are one
//     uncompressed stream: no spatial-tree int, no RAM field, no LZ4
//     blocks, no offset table, no collision data:
//     magic; bounds (10 floats); compact bone count; per bone string name
//     and short parent (−1 root; parents may come after their children);
//     [ms12, ms11, ms10: compact name count and that many strings, empty
//     in most files, ["scene"] in some skinned ms11 ones]; compact surface
//     count; per surface: string name, [ms13, ms12: char lightmap UV
//     channel and char lightmap resolution, 1 and 3 or 4 in the files],
//     bounds, compact morph target count (1 in every public file), per
//     target a string name (empty); magic again; one parent-relative
//     transform (40 bytes, as ms14) per bone, without a count; [ms12,
//     ms11, ms10: per name of the name list one animation: compact
//     animated joint count and a short joint index each, a mask byte,
//     compact frame count, then per frame and animated joint a flag byte
//     (an10's bits: 0–2 position x, y, z, 3 rotation, 4–6 scale x, y, z)
//     and the flagged values: floats for position and scale components,
//     the rotation as 4 shorts (s/32767)]; then per surface: per target a compact vertex count, the positions, a compact
//     tangent count and the tangent frames; the weight section (as ms14);
//     UV0, UV1 and colours as ms15; a compact coordinate index count and
//     the indices; a compact triangle index count and the indices (widths
//     as ms15 up to 65 535 vertices, int32s above); and the magic at the
//     end. Bytes between the last surface
//     and a magic that ends the file are kept unread (File.Tail, shown as
//     header.json's unknown_tail_bytes and chunks/NN_tail.bin): none of the
//     shared files has any, but a large public ms11 file was reported to
//     fail at its final magic.
//     ms10 stores a tangent frame in 7 bytes: the quaternion's x, y, z as
//     shorts, w ≥ 0 making it unit length, then a signed byte whose sign
//     is the bitangent's (−127 in the public box, whose faces all agree
//     with the normals only with w ≥ 0); it is read as the four-short
//     frame of the other versions (−q when the byte is negative).
//   - Stream animations (File.Anims) were worked out on the public ms11
//     arm (ms11_fpsdemo1_arm_skinned.mesh, 40 bones, names ["scene"]):
//     after its bone transforms (0x33f to 0x97f) come "28" (40) and the
//     shorts 0 to 39, "7f" (a mask, as an10's), "01" (one frame), then 40
//     records of 33 bytes from 0x9d2: "7f", three floats (38 of the 40
//     equal the bind positions but for the last bits), four shorts (all unit
//     quaternions), three floats (all 1.0); surface 0's vertex count ("9e
//     03" = 222) follows at 0xefa. The agent (56 bones, no name) and every
//     ms12 file (no name) have none of these bytes: one animation per
//     name. No public file has other flags or more frames; a component
//     left out keeps the frame before, as in an10. Each is a glTF
//     animation named as its name, played at DefaultFPS. The arm has no
//     morph target beyond the base (each surface names one target).
//   - header.json comes from the header, the offset table, the block
//     headers and one cheap pass over the blocks for the counts inside them
//     (triangle vertices, UV sets, colours, weights, morph target vertices,
//     spatial tree nodes): each block decompressed once, one surface at a
//     time into reused buffers, arrays skipped by arithmetic (see Scan).
//     The real ms14 collision blocks write 63 as the over-long "bf 00";
//     Scan counts compact ints by their last byte, which accepts it.
//   - Decode does not read the collision blocks (the scene has no use for
//     them): a broken one shows in Scan's error (error.txt), not as a
//     failed .glb.
//
// Animations (`.anim`, AnimFormat): UNIGINE skeletal animations. an12 is documented by UNIGINE
// ("Skeleton and Animation File Formats"); an11 and an10 were worked out
// on the public files (an11 on three, two of them animating the ms13 cat,
// an10 on the two of the ms11 agent). Compact ints, strings, shorts and
// the 40-byte transforms are as in the meshes.
//
//	an12: magic; int32 joint count; per joint string name, short parent;
//	      skeleton GUID and path (int32 length each); compact animated
//	      joint count, a short joint index each; int32 frames per second;
//	      bool root motion; magic; compact frame count; per frame, per
//	      animated joint: char flags (bit 0 position, 1 rotation, 2 scale),
//	      then float[3] position, float[4] rotation, float[3] scale as
//	      flagged; magic.
//	an11: magic; compact joint count; joints as an12; magic; one
//	      parent-relative transform per joint (as in ms13, the same values
//	      as the mesh it animates); compact animated joint count and
//	      indices; compact frame count; frames as an12; magic.
//	an10: magic; bounds (10 floats; empty in the public files); joints as
//	      an11; compact name count and that many strings (the animation's
//	      name); magic; transforms as an11; animated joints as an11; the
//	      quantisation ranges: float[3] position minimum, float[3] position
//	      range, float[3] scale minimum, float[3] scale range; one byte
//	      (0x7f in every public file, kept); compact frame count; per frame,
//	      per animated joint: char flags, then as flagged: bits 0–2 the
//	      position's x, y, z as u16, bit 3 the rotation as 4 shorts
//	      (s/32767), bits 4–6 the scale's x, y, z as u16; each u16 q is
//	      minimum + q/65535·range; magic. Frame 0 has every bit set in the
//	      public files; a component left out keeps the joint's value of the
//	      frame before.
//
// Decisions:
//   - Frame values are parent-relative joint transforms: chained, the an10
//     walk's joints land where the ms11 agent's chained bone transforms put
//     them, and the an11 cat's DEF bones where the ms13 cat's do, times 100
//     (its frames give the root scale 100 and the bones 1, where the mesh
//     gives the root 1/10 000 and the bones 10 000); values are kept as
//     stored. an11/an12 components left out take the documented defaults
//     (zero position, identity rotation, unit scale); an10's keep the frame
//     before (frame 0: the defaults).
//   - Known limit, an11 top-level joints: on the cat, the frames of the
//     joints under the top-level ones equal the mesh's bind pose in model
//     space (frame 0 of DEF-spine.004: translation (0, 0.0314, -0.0225),
//     rotation (0.989, 0, 0, -0.147) after the axis change; the mesh's
//     root, scale 1/10 000 and 180° about (0, 1, -1)/√2, times the bone's
//     own transform, scale 10 000, gives the same), as if each top-level
//     joint were the identity; but the frames give the top-level joints
//     identity rotation and scale 100 (in both cat files, the one-frame
//     pose too), so played as stored the cat grows 100 times about its
//     origin. Dropping the top-level keys or not inheriting scale would
//     both fit these files, but Fast_Run's top-level Hips carries real
//     motion in metres where its bind pose is in centimetres, and no
//     UNIGINE document covers an11: meshfs keeps the values as stored.
//     The one-frame cat pose (an11_kimchi_8710874….anim) also stores its
//     ten top-level MCH/root joints at scale 1 where the mesh has 1/10 000,
//     so its own .glb's skeleton is 10 000 times the mesh's: its action put
//     on the mesh's armature in Blender moves the mesh by ~10⁵; in
//     NAME.animated.glb the keys drive the mesh's own skeleton instead.
//   - NAME.animated.glb (export/outputs): a skinned mesh's folder offers
//     the mesh with every .anim of its folder whose animated joints are
//     all joints of the mesh, by name (decode.Attach).
//   - an10 and an11 store no rate: meshfs plays them at 30 frames per
//     second (DefaultFPS), UNIGINE's usual rate; an12 uses its own (30
//     when it stores 0 or less).
//   - The .glb holds the skeleton (rest pose: the stored transforms,
//     chained as a mesh's bones are; an12 has none, so its rest pose is
//     frame 0) and one animation with a translation, rotation and scale
//     channel per animated joint (one key, at time 0, where the value
//     never changes), turned from Z up to Y up like the meshes' bones;
//     in the .glb files the rest pose is made free of scale as a mesh's is
//     (see Skins), the keys re-expressed for it.
//     Flag bits outside those described, an animated joint index out of
//     range or given twice, and non-finite values are errors.
//   - The records are kept as stored: a flag byte each and their values in
//     one array (Anim.Flags, Anim.Values); Scan only checks them.
//
// Scenes (.node, .world; SceneFormat, a decode.ModelDecoder, and ReadScene)
// are XML read into a one-LOD decode.Model, through the project's GUID
// index (decode.ProjectIndexer: both formats implement it; the caller
// keeps the index):
//   - Nodes are the <node> elements of a .node's <nodes> root or of a
//     .world's <editor>, nested as in the file; each keeps its name, type
//     and id (Extras), and its <transform> (16 numbers, column-major,
//     identity when absent; the last row must be 0 0 0 1) turned from Z up
//     to Y up as decode.ZUpToYUpMatrix does, as mesh vertices are.
//   - An ObjectMesh* node's <mesh_name> (guid://… through the GUID index, or
//     a path relative to data/ that stays in it) is a part whose Ref is
//     relative to data/; its <surface> elements give the part's materials
//     in file order (a material GUID as guid://<hex>, which the material
//     rules resolve through the index, else as written) and Extras
//     "surfaces" pairs the surface names with the files those resolve to.
//     A mesh that does not resolve is listed in Header "unresolved", with
//     why when the index knows (a .meta naming a file that is not there).
//   - A NodeReference's <reference> (no public file has one; the element
//     name is UNIGINE 2's) is resolved the same way and its file's nodes
//     become the node's children, each file parsed once. A reference to a
//     file already being expanded (a cycle), more than MaxRefDepth deep, or
//     to a file that fails to parse is listed in Header "failed"; only the
//     file read itself failing, or a limit, is an error.
//   - LightWorld, LightOmni and LightProj keep Extras "light": kind
//     (directional, point, spot, as KHR_lights_punctual), colour (<color>
//     or <color_filter>, RGB), intensity and, but for a directional light,
//     range (<attenuation_distance>); and a decode.Light of those values
//     (intensity as written: UNIGINE's is a factor, not lux or candela).
//     A point light is on its node. UNIGINE lights shine along their
//     node's −Z, which is −Y once Y up, and glTF's along −Z: a
//     directional or spot light is on a child "NAME.light" turned −90°
//     about X (an assumption of UNIGINE's convention, not read from a
//     file: no public scene here has a LightProj).
//   - A mesh read alone: when its surface's NAME.mat is not beside it, its
//     material is the one the project gives it (project.MeshMaterials):
//     the first node runtime made from the mesh's source asset that
//     places the mesh names each surface's material.
//   - Bounds, each decode.ErrLimit: MaxSceneBytes per file, MaxSceneNodes
//     per scene with references expanded, MaxSceneDepth of nesting.
package unigine

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/meshfs/meshfs/decode"
)

// Name is the format's identifier.
const Name = "unigine-mesh"

// Format is the UNIGINE mesh format.
type Format struct{}

func (Format) Name() string { return Name }

// Extensions implements decode.Extensions: the names extension knows.
func (Format) Extensions() []string { return []string{".mesh", ".mesh_skinned"} }

// IsAnimationFile names the .anim files a mesh of the same folder may take
// its animations from (decode.Animator).
func (Format) IsAnimationFile(name string) bool {
	return strings.HasSuffix(strings.ToLower(name), ".anim")
}

// extension returns the UNIGINE mesh extension name ends with, or "".
func extension(name string) string { return extensionOf(name, Format{}.Extensions()) }

// extensionOf returns the one of exts (lower case) that name ends with,
// ignoring case, when something precedes it; else "".
func extensionOf(name string, exts []string) string {
	l := strings.ToLower(name)
	for _, e := range exts {
		if strings.HasSuffix(l, e) && len(l) > len(e) {
			return e
		}
	}
	return ""
}

// Sniff claims .mesh and .mesh_skinned files whose magic is a known
// version, and also those whose magic merely starts with "ms" or "sk", so
// that an unknown version shows error.txt saying so instead of vanishing.
func (Format) Sniff(name string, head []byte) bool {
	if extension(filepath.Base(name)) == "" || len(head) < 2 {
		return false
	}
	if len(head) >= 4 {
		if _, ok := layoutOf(string(head[:4])); ok {
			return true
		}
	}
	p := string(head[:2])
	return p == "ms" || p == "sk"
}

// StripExt removes .mesh or .mesh_skinned.
func (Format) StripExt(name string) string {
	if e := extension(name); e != "" {
		return name[:len(name)-len(e)]
	}
	return name
}

// Decode reads the file and builds its scene.
func (Format) Decode(ctx context.Context, src *decode.Source) (*decode.Scene, error) {
	f, err := read(ctx, src, false)
	if err != nil {
		return nil, err
	}
	sc, err := Scene(f, src.Name, Format{}.StripExt(filepath.Base(src.Name)))
	release(f)
	return sc, err
}
