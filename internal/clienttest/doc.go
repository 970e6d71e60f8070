// Package clienttest judges meshfs by the programs its users open its files
// with. TestClients (run by `make test-clients`, i.e. `go test
// ./internal/clienttest -clients`) builds the meshfs binary, mounts testdata/ and
// the real files of ../shared (realdata/, the UNIGINE and Transport Fever
// samples assets/unigine/ and assets/tf-nan/, and the GEM mod trees
// assets/gem-centurion/ and assets/gem-pilot/, whose materials resolve to
// textures; each where present, and a missing one fails under CI) with `meshfs mount`, and reads every file
// from the mount with the clients below. Every mesh file of ../shared must
// convert (testdata/ holds deliberately broken ones, which must show
// error.txt instead).
//
//   - the Khronos glTF validator: every .glb has 0 errors, and the warnings
//     that remain are exactly the reviewed list in validator-warnings.txt;
//   - Blender 3.4, headless (blender/inspect_imports.py): every .glb and .obj
//     imports, and per file the faces, vertices, materials, UV layers, colour
//     attributes, bones, vertex groups, shape keys and actions are what the
//     decoded scene holds; every weighted bone moves the mesh when rotated;
//     and each animation-only file (a UNIGINE .anim) whose driven bones are
//     all bones of a skinned mesh of its folder plays on that mesh: its
//     .glb's action, put on the mesh's armature, keys only bones the
//     armature has, and moves bones and the mesh between two frames
//     (play_test.go); and, for the materials the scene resolved to
//     textures (the test resolves them as the mount does), every image
//     the .glb embeds loads at the PNG's width and height, an Image
//     Texture node of a material's base colour image feeds its Principled
//     BSDF's Base Color, one of its normal map feeds a Normal Map node
//     that feeds Normal, and MASK and BLEND materials blend by CLIP and
//     BLEND;
//   - assimp (`assimp info`): every .obj reads with the scene's face count.
//
// The orientation fixtures under testdata/orientation/ (written by
// TestOrientationFixtures -update with each format's own encoder) pin the
// conventions: a ramp rising along the source's up axis must rise along
// Blender's +Z with its faces and a flat triangle facing up, and a textured
// quad's UV (0, 0) corner must land where the source put it, in the .glb
// and in the .obj.
//
// Blender counts follow Blender's own import rules (unused vertices
// dropped, nothing merged, degenerate and — for .glb only — repeated faces
// deleted); expect_test.go explains them and TestClients checks them on a
// scene built for the purpose (rules_test.go). Up to 1% of a mesh's faces
// may have a winding against the file's own normals (real art has a few).
//
// Models (.mdl) are TestModelClients' (models_test.go, with
// blender/inspect_models.py; `go test ./internal/clienttest -run TestModelClients
// -clients`): it mounts the model trees of ../shared/assets and
// ../shared/realdata/gem, reads every
// model's header.json with no assembly made, and has Blender import every
// LOD's .glb as one hierarchy with the file's nodes as objects or bones
// under the file's parents, the materials its primitives use, its images
// at their PNG sizes, an action for every animation, bones that move
// their skin, and mirrored parts facing as their unmirrored twins. In the
// GEM models, it checks where skinned parts land as Blender evaluates them
// (tracks_test.go): each skinned track along the hull, around its side's
// road wheels and on its track*.vol shape of NAME.collision.glb (both sides,
// mirrored and not; centurion.mdl's, whose files were made for
// centurions.mdl, on end as decode/gem's doc says), and every other skin
// (the pilot's, the horse's tack) around the bones driving it.
//
// TestPreviewClients (previews_test.go, with blender/judge_previews.py;
// `go test ./internal/clienttest -run TestPreviewClients -clients`) mounts
// testdata/ and ../shared/assets and has one Blender process render every
// mesh and model folder's NAME.glb with the camera of its NAME.preview.png
// (export/preview: orthographic from glTF (+1, +1, +1), up +Y, the
// vertices' box's circumscribed sphere filling the square), Workbench on a
// transparent film, flat light and texture colours, back faces culled as
// the materials say. The alpha silhouettes (alpha ≥ 128) must have an
// intersection over union of at least 0.9 for at least 95% of the files,
// every figure logged; for a file whose materials show a base colour
// texture in Blender, the mean colour of meshfs's covered pixels must have
// the chromaticity (r, g, b)/(r+g+b) of Blender's within 0.03 in each
// channel (meshfs's picture is lit, Blender's flat, so only the
// brightness differs; the ratio is logged). MESHFS_PREVIEW_KEEP=DIR keeps
// the pairs that disagree.
//
// The package has only tests.
package clienttest
