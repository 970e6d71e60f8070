// Package gem reads and writes the GEM engine's ".ply" mesh files (Men of
// War, Assault Squad 2, Gates of Hell, GEM RTS). They are not Stanford PLY
// files: a 4-byte magic (EPLY, BPLY or PM01) is followed by chunks, each a
// FourCC and a body whose length follows only from its content, so an
// unknown FourCC ends the walk with an error.
//
// The package has three layers. Parse turns bytes into a File, a plain
// mirror of the chunks; Encode turns a File back into bytes (fixtures and
// round-trip tests use it, see PackVertices for vertex records). Format
// adapts both to meshfs: Scan reports the chunks and header fields without
// reading vertex or index arrays, Decode builds a decode.Scene in glTF's
// convention (BuildScene).
//
// Decisions where ../shared/specs/FORMATS.md leaves a point open or the
// original text and real files disagree:
//
//   - Bone maps follow MESH flag 0x800, as in real files. Under 0x10 alone
//     (the original text's reading) a map is read only when no chunk starts
//     right after the names and one (or the end of the file) starts right
//     after the map; otherwise the MESH is an error.
//   - Joint 0 is a synthetic root standing for the mesh's own matrix (bone
//     map value 0); joint N is SKIN bone N−1. A skinned submesh without a
//     bone map uses its vertex bone indices as bone map values directly.
//   - Blend weights follow Direct3D: k stored weights give k+1 influences,
//     the last weighing 1 − the others (fvf 0x1118: w for index 0, 1 − w for
//     index 1), unless the indices element has no room for it. Without a
//     BLENDINDICES element blending is non-indexed: matrices 0, 1, ….
//   - GEM3 vertex_format fields come in bit order. Its skin bits 0x200,
//     0x400, 0x600 (2, 3, 4 bones) store n−1 UNORM8 weights, followed by
//     uint8[4] bone indices into the SUBM bone map (the original gives only
//     the weights, but the indices must be somewhere). GEM3 colours are RGBA
//     bytes as the original says; FVF and declaration COLOR elements are
//     Direct3D BGRA. GEM3 vertex_start/vertex_count are informational: the
//     indices are absolute.
//   - SHORT2 and BYTE4 elements are not normalised (Direct3D semantics);
//     BYTE4N normals and tangents are mapped from [0, 1] to [−1, 1].
//   - vertex_size is authoritative. A MESH whose vertex_size exceeds its
//     fvf layout by exactly 16 bytes has a float3 tangent and a float sign
//     there; other extra bytes (8 in BPLY maps) are ignored for geometry and
//     remain visible in chunks/. Only MESH gets the tangent rule: SBM1, SUBM
//     declare their tangents.
//   - With VERT flag 0x1 clear colours are stored halved: RGB are doubled
//     and clamped to 1; alpha, which maps use as a blend weight, is kept.
//   - A BAS2 chunk adds one UV set, generated from each vertex's stored x, y
//     by FORMATS.md's rule, after the stored sets of every submesh.
//   - Space: the data is Z up and left-handed with Direct3D (clockwise)
//     fronts. Positions, normals and tangents are mirrored in Y (tangent
//     signs flip), mirrored submeshes (flag 0x40, or an MROR chunk) get their
//     winding reversed, then Z up becomes Y up; altogether (x, y, z) →
//     (x, z, y). Units stay as stored.
//   - Only the vertices a submesh's faces reference are exported, numbered
//     in order of first use; then vertices whose converted attributes are
//     bit-equal are joined (decode.Primitive.JoinByValue). Non-finite
//     positions, UVs, normals and tangents are repaired by
//     decode.Scene.Repair's policy (triangles dropped, normals and tangents
//     recomputed); other non-finite attributes (colours, weights) become 0.
//     header.json lists the repairs under "repairs" (decode.RepairFields);
//     the scan tests VERT's float geometry fields for them and decodes
//     only a file that has a non-finite one.
//   - A second VERT, index, SKIN or BAS2 chunk is an error for Decode
//     (nothing says which submeshes it belongs to); Scan lists it. Submeshes
//     with no faces keep their material but get no primitive. Submeshes may
//     reference the index chunk's faces at most 4 times over in total, so a
//     few bytes of submesh chunks cannot claim a scene far larger than the
//     file. A declaration element with a stream_index other than 0 is an
//     error: a file has one vertex stream.
//
// # Models (.mdl), animations (.anm), collision polyhedra (.vol)
//
// Mdl reads a model's text (ParseText's syntax; EncodeText writes it for
// fixtures) into a decode.Model; AnmFormat and VolFormat are ordinary
// formats, so a lone .anm or .vol shows as a folder of its own.
//
// .mdl: the top-level {Skeleton} holds {bone [kind] "name" …} groups,
// nested as the hierarchy; {Animation {Sequence …}} may be top level or
// inside the skeleton or a bone; {Volume …} groups are top level.
//
//   - A bone's frame: {Orientation 9 numbers} (the 3×3 rows), {Position 3}
//     (the translation), {Matrix34 12} (rows, then the translation); a
//     later group overrides what an earlier one set, none is the identity.
//     Row i is where local axis i goes (Direct3D row vectors, v' = v·M);
//     the real .anm keys confirm it (their quaternions rebuild these rows).
//     A node's matrix is C·M·C⁻¹ for C: (x, y, z) → (x, z, y), the .ply
//     decoder's conversion, so a part's converted vertices are placed
//     where the game puts them; mirrored frames (negative determinant, as
//     the root "basis" is) stay mirrored and are marked "mirrored" in the
//     node's extras. A singular frame is an error.
//   - Units: 20 GEM units are one metre (MetresPerUnit). Model.Scale is
//     that factor; it multiplies node translations (and collider sizes),
//     never the parts' vertices, which their own decoder keeps in GEM
//     units: the assembler scales each placed part.
//   - Parts: {VolumeView "f.ply" …} shows f at every LOD; {LODView
//     {VolumeView …}… {OFF}} gives LOD k its k-th entry ({OFF}: nothing),
//     and a LOD beyond its length the last entry. The model has as many
//     LODs as its longest LODView (at least one); each is the whole node
//     tree. A name starting with '/' is beneath the asset root
//     (resource/), any other beside the model; '\' is a separator.
//   - Skinned parts: a .ply with a SKIN chunk lists bone names of the
//     model's skeleton (the tanks' tracks: "body", or "basis" and "body";
//     the pilot's skin: 42 of its 59 bones); bone map value 0 (joint 0
//     "root" of the .ply's own scene) is the node carrying the part. Its
//     vertices are in that node's frame, as a rigid part's are, and that
//     is their bind pose: joint J binds with the inverse bind matrix
//     W_J⁻¹·W_node·Scale (rest world matrices; Scale for the vertices'
//     GEM units), so at rest the part is where its node puts it. So placed
//     (outputs' TestSkinnedTracksInTheirVolumes), the tracks of the P44
//     Pantera, the SU-85 and centurions.mdl lie inside the trackleft.vol
//     and trackright.vol their bones place (every vertex within 5 cm of
//     the shape's box, the centres 0 to 2.2 cm apart), along the hull and
//     around all of their side's road wheels, mirrored (the SU-85's
//     trackr.ply) or not; the pilot's skin lies a median 0.13 m from the
//     bones driving it (TestPilotSkinOnBones), the horse's bridle and mane
//     0.03 to 0.19 m. Readings that fail these tanks: the root bone's axes
//     at the node's origin (the Pantera's tracks alone; 44 % of the
//     SU-85's vertices in their shapes, the Centurion's across the hull),
//     those axes turned a quarter turn about the up axis (a former rule,
//     fitted to centurion.mdl: 0 to 7 % in the other tanks' shapes, across
//     their hulls; the horse's bridle 0.4 to 0.8 m from its bones), the
//     frame of the SKIN's bone, whole or at the node's origin, and the
//     model's space (0 %). centurion.mdl alone does not fit: its tracks
//     hang from "wheelsl", "wheelsr" turned (1 0 0) (0 0 1) (0 −1 0) and
//     stand on end, 3.3 m out of its track boxes; trackl.ply and
//     trackr.ply were made for centurions.mdl, whose "chassis_lshape",
//     "chassis_rshape" (rows (0 1 0) (−1 0 0) (0 0 1)) lay them along the
//     hull (below). No rule can fit both: a SKIN chunk holds bone names only
//     (no bind matrix, no frame of its own), so any rule places the vertices
//     by frames the .mdl defines, and no frame of a bone that carries a part
//     or a collider in centurion.mdl, nor of the track's chain up to
//     "basis", turns trackl.ply's long axis (its y: 12.0 × 148.9 × 27.2
//     along x, y, z) onto the hull (only the door and seat bones emit*,
//     seat* do), and no constant turn (any of the 48 axis-aligned turns and
//     mirrors, of the part's axes, of the part in the model's or of the
//     root's axes) lays all four tanks' tracks along their hulls. Its track
//     frames, like the SU-85's, turn a part's y up, as that model's own
//     tracks are stored (the SU-85's trackl.ply: 114.6 × 20.0 × 9.9). The
//     tracks' own weights agree: in each the vertices on bone map 0 or
//     "basis" (the run on the ground, which stays while "body" rocks: 88 of
//     trackl.ply's 507) are its lowest along the axis its model turns up
//     (the SU-85's y, the Pantera's z), and in trackl.ply along z, which
//     centurions.mdl keeps up and centurion.mdl turns across the hull.
//     centurion.mdl's track boxes ({Box 141.361 13.8202 27.6147}, along the
//     hull) describe a track 7.5 units shorter and 1.8 wider than
//     trackl.ply, while centurions.mdl's trackleft.vol is trackl.ply's size
//     to 0.01 units. Over all four tanks the carrying node's frame lays a
//     track along the hull exactly where the track is as long as its model's
//     own track shape (TestSkinnedTrackFrames). ModelPart.Skinned is set for
//     parts beside the model whose file has a SKIN chunk.
//   - Bone extras: "kind" (revolute, prizmatic, socket, … the word before
//     the name), "mirrored", then every other child group by name:
//     numbers, words, true for a bare flag ({limits a b}, {speed s},
//     {parameters "…"}, {speed2 s}, …).
//   - Sequences: {sequence "n" {file "x.anm"} {speed s} {smooth} {resume}
//     {autostart}}; without {file} the file is n.anm beside the model. The
//     other groups are the animation's extras (a bone's own sequences add
//     "bone"). A sequence's BMAP bones bind to the model's bones by name,
//     else by name ignoring case (the modders' importers fold case); a
//     bone no model bone matches is not an error: the assembler keeps its
//     keys on a stand-in node and header.json names it ("unbound_bones").
//   - Volumes: {Volume "n" {Bone "b"} {Box x y z} | {Cylinder r l} |
//     {Sphere r} | {Polyhedron "f.vol"} frame}: a collider on the node
//     named b (-1 when absent or unknown, which header.json says), with its
//     frame converted as a bone's. A box's size is its full extents along
//     its own axes (the Centurion's track boxes are about its tracks' size), a
//     cylinder's its radius and length (its axis is the frame's GEM Z). A
//     shape's points p (a .vol's vertices as stored, a box's corners) are
//     at bone · frame · p, as a part's vertices are at bone · p: the boxes
//     of blyskawica and helmet4_ger centre inside their meshes' box and
//     overlap it (IoU 0.25 to 0.68, 0 to 0.32 with the frame left out;
//     TestRealVolumeBoxes), the Centurion's shield polyhedra (frames the
//     identity) are their meshes' boxes exactly, and its other polyhedra
//     lie on their meshes under the frames of the model they were made for
//     (below; outputs' TestCenturionCollidersOnMeshes and
//     TestCenturionVolsOnSiblingFrames).
//
// .anm (EANM), little-endian; offsets from the start of the file:
//
//	0   char[4]  "EANM"
//	4   u32      version (0x00060000 in every real file; FRM2 frames)
//	8   sections, each a tag, until the first frame:
//	    "FRMS" u32 frame count (the frames the animation spans)
//	    "CMNT" u16 length, length bytes of Latin-1 text (repeatable)
//	    "BMAP" u32 bone count, per bone u32 length + Latin-1 name
//	    then frames to the end of the file, each
//	    "FRM2" u16 frame number, u8 key count, per key:
//	           u8 bone (BMAP index), u16 flags, then by flag:
//	           0x01 position f32[3]; 0x02 rotation f32[3] (quaternion x, y,
//	           z; w = +√(1 − x² − y² − z²)); 0x40 scale f32[3];
//	           0x20 MESH: u32 size, size bytes (vertex animation);
//	           0x04 mirrored, 0x08 visible on, 0x10 visible off carry no
//	           data; other bits are an error
//	    "FRMN" u32 frame number (older versions), then per bone "BONE" u32
//	           index followed by any of "MATR" f32[12] (rows, then the
//	           translation), "VISI" u32, "MESH" u32 size + bytes
//
// Keys are the bone's full local transform (the pilot's first frame is
// its model's rest pose), sparse: a frame keys only what changes, and
// frames may be skipped (43 of 49 stored in dismounting_bmd4). A mirrored
// key (0x04, repeated on every transform key of a mirrored bone) is the
// rotation applied after a mirror of local Z: M = T·R·diag(1, 1, −1),
// which rebuilds the model's mirrored frames (foot1l, ik_chain03 in the
// pilot). Frame n plays at n / FrameRate seconds; between keys the scene
// interpolates (linear, rotations spherical), as the modders' importers
// evaluate GEM's keys; the mirror is a scale channel, stepped where it
// changes. Visibility and MESH keys are counted in header.json, not
// converted.
//
// What the Centurion's files leave unexplained (measured in GEM units, in
// the bone's frame; the files are converted as read):
//
//   - Two exports in one folder. The mod's folder (BaaBBaBaI/A-world-At-
//     War-upgraded) holds centurion.mdl (2008, named by centurion.def)
//     and centurions.mdl (2015, named by centurionmk1.def), which name the
//     same .ply, .vol and .anm files with other bone offsets and Volume
//     frames; the .vol files, body.ply, turret.ply, engine.ply, gun.ply,
//     trackl.ply, trackr.ply and the .anm files fit centurions.mdl. Its frames put every polyhedron on its mesh by the
//     rule above: body.vol at z 2.3 to 29.9 in the hull's −0.4 to 29.8,
//     body1.vol (no frame) at x −73.7 to 79.2 in its −74.5 to 79.2,
//     turret.vol inside its mesh (its front at the mesh's x 22.6),
//     engine.vol under the engine deck (its top 0.7 above the deck's),
//     ram.vol a bumper 2.3 to 12 beyond the hull but on top.
//     centurion.mdl's frames put them 0.2 to 2.4 m out of their meshes'
//     boxes (body.vol wholly under the hull, at z −38.5 to −10.9;
//     body1.vol 47 behind it; turret.vol 9 to 13 low and 8.6 ahead;
//     engine.vol 4.2 beyond the deck's rear); only the shields' (the
//     identity in both) match. No one reading of centurion.mdl's frames
//     (applied, ignored, inverted, in the parent's or the root's frame)
//     puts them all on their meshes: ignoring them fits body1.vol alone
//     and leaves body.vol half under the hull. Its crew and inventory
//     boxes (z −14.2 to 1.6 and −11.8 to 4.0) lie under the hull's floor
//     (z 1.8 to 2.4), and its mantlet.vol (centurions.mdl has none) 0.17 m
//     behind gun_rot.ply. centurions.mdl's body is 17.4 units lower in
//     "basis" (z 7.28 against 24.69), its turret (z 25.88 against 9.79)
//     and engine (29.34 against 11.97) higher in the body. In "basis"
//     centurion.mdl's crew and inventory boxes lie inside the hull where
//     centurions.mdl places it; under its offsets 11 of turret.ply's
//     vertices lie under the hull's top (by at most 0.1) against 195 (by
//     up to 16.2) under centurion.mdl's; the engine deck lies at z 29.8
//     to 31.5 against 12.5 to 14.2 (the hull's top behind the turret is
//     at 27 to 29.8); and the hull's floor is 0.45 m above the tracks'
//     bottom instead of 1.32 m.
//   - Animations made for the other skeleton. open.anm keys "cover1" and
//     "cover2" (two hatch halves turning ±150° about x from (−15.9,
//     −12.5, 20.8) and (−15.9, −1.9, 20.8)); the model has one hatch,
//     "cover", under "turret_mgun" (its rest (−15.9, −14.5, 21.5) in the
//     turret), and no reading of case, numbering or prefix maps two keyed
//     bones onto it. start, stop, fire and hit key "anten" (the model
//     has antena1 and antena2, neither at its (−32.3, −8.6, 18.7)) and
//     key "body" at (0.02, 0.87, 7.28) against its rest (−0.06, 0.04,
//     24.69) in "basis": 17.4 units (0.87 m) lower, where the body's own
//     rollers, children of "body", would sink under the tracks, which hang
//     from "basis". fire.anm keys "gun_rot" at (16.6, −0.7, 10.0) against
//     (26.0, −0.03, 8.7). These are centurions.mdl's bones and rests
//     (cover1, cover2 and anten at those points; body, gun_rot and gun at
//     the keys' offsets). fire_mgun.anm's first frame is this model's rest
//     exactly (gunner2, mgun_rot, mgun), as the pilot's sequences are
//     theirs. Keys are applied as the bones' full local transforms (the
//     pilot's data and the modders' importers agree); applying them
//     relative to an animation's first frame would hide the offsets, but
//     the files that fit the model cannot tell the two readings apart, so
//     nothing supports it.
//   - The gun. gun.ply's vertices run along −x of its bone's frame (x
//     from −69.6 to 0.4) while the bone "foresight1" under "gun" sits at
//     x 71.4 and the Volume "gun" (a cylinder of length 71.0, its axis
//     the frame's +x, centred at x 35.5) runs from 0 to 71: the barrel
//     points back through the turret. centurions.mdl's "gun" frame (and
//     fire.anm's keys) is turned 180° about its z (rows (−1 0 0) (0 0 −1)
//     (0 −1 0) at (8.7, 0.1, 0.03) against the .mdl's (1 0 0) (0 0 1)
//     (0 −1 0) at (1.5, −0.6, 0.03)), under which the mesh points
//     forward: gun.ply was made for it. Transposing the Matrix34 rows
//     changes neither frame's x, and the .ply has no transform of its
//     own: no rule of centurion.mdl's own turns this one part.
//
// .vol (EVLM): "EVLM", then sections "VERT" u32 n, n × f32[3]; "INDX" u32
// n (a multiple of 3), n × u16; "SIDE" u32 n (one per triangle), n × u8
// (the face's side number), in that order and nothing after (every real
// file). Vertices are GEM units in the Volume's frame. Triangles are
// Direct3D-clockwise seen from outside, as meshes are; the scene keeps the
// winding after the mirror. Sides number groups of faces: in body.vol,
// turret.vol and engine.vol 1 faces +x (front), 2 +z (top), 3 +y, 4 −y, 5
// −x and 6 −z (their faces' mean normals); ram.vol numbers its faces
// otherwise (1 top, 2 bottom, 3 −x, 4 +x, 5 −y, 6 +y), the shields and
// body1.vol have one side.
package gem
