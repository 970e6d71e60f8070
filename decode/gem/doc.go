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
package gem
