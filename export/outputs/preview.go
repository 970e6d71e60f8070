package outputs

import (
	"context"
	"fmt"
	"image"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/export/preview"
)

// NAME.preview.png is a thumbnail of the geometry NAME.glb holds (a
// model's: LOD 0 as assembled), drawn by export/preview from the very
// scene the .glb is exported from (decoded, its materials resolved with
// their images), Limits.PreviewSize pixels a side. It is a conversion's
// output like NAME.glb: made from the same files, failing with the same
// decoding, and gone with the geometry from a broken folder. An
// animation file's folder has none (it holds no geometry), nor has any
// folder when PreviewSize is 0.
//
// Its length is fixed before it is drawn (PreviewLen: preview.FixedLen of
// the side, from the limits alone), so that a listing tells it exactly:
// the picture is drawn as its compact PNG (PreviewOf, PreviewFile: what
// caches keep and weigh) and served padded to that length
// (PaddedPreview). The output limit applies to that length, so a preview
// over --max-output-size fails before anything is decoded.

// DefaultPreviewSize is the side of NAME.preview.png: what file managers
// show as a large icon.
const DefaultPreviewSize = 256

// FlagPreviewSize is the limit's flag name.
const FlagPreviewSize = "preview-size"

// PreviewName is the name of the mesh's thumbnail.
func (m *Mesh) PreviewName() string { return m.Base + ".preview.png" }

// HasPreview reports whether m's folder holds NAME.preview.png (the rule
// above).
func (m *Mesh) HasPreview() bool {
	_, anim := m.Format.(decode.AnimationOnly)
	return m.Limits.PreviewSize > 0 && !anim
}

// PreviewLen is the length of NAME.preview.png, known without drawing it.
func (m *Mesh) PreviewLen() int64 { return preview.FixedLen(m.Limits.PreviewSize) }

// checkPreview applies the output limit to the preview's fixed length.
func (m *Mesh) checkPreview() error { return m.checkOutput(m.PreviewName(), m.PreviewLen()) }

// PaddedPreview is NAME.preview.png's bytes, PreviewLen of them, from the
// compact PNG PreviewOf or PreviewFile made (preview.Pad).
func (m *Mesh) PaddedPreview(compact []byte) ([]byte, error) {
	b, err := preview.Pad(compact, m.Limits.PreviewSize)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", m.Path, m.PreviewName(), err)
	}
	return b, nil
}

// BlankPreview is NAME.preview.png of a mesh that cannot be drawn: a fully
// transparent picture at the file's fixed length. It is served in place of
// a failed draw, so that the size told before the failure stays true; the
// failure is the folder's error.txt.
func (m *Mesh) BlankPreview() ([]byte, error) {
	if err := m.checkPreview(); err != nil {
		return nil, err
	}
	n := m.Limits.PreviewSize
	b, err := preview.Encode(image.NewNRGBA(image.Rect(0, 0, n, n)))
	if err != nil {
		return nil, err
	}
	return m.PaddedPreview(b)
}

// PreviewOf draws NAME.preview.png from scene, whose materials are
// resolved with their images (Textures), within ctx: its compact PNG
// (PaddedPreview gives the file).
func (m *Mesh) PreviewOf(ctx context.Context, scene *decode.Scene) ([]byte, error) {
	if err := m.checkPreview(); err != nil {
		return nil, err
	}
	img, err := preview.RenderWith(ctx, scene, m.Limits.PreviewSize, preview.Config{Textures: m.Limits.Caches.previewTextures()})
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", m.Path, m.PreviewName(), err)
	}
	b, err := preview.Encode(img)
	if err != nil {
		return nil, fmt.Errorf("%s: %s: %w", m.Path, m.PreviewName(), err)
	}
	return b, nil
}

// PreviewFile decodes m (a model: assembles its LOD 0) and draws
// NAME.preview.png (its compact PNG, as PreviewOf), without exporting
// anything, within Limits.Timeout; it fails with the error GLBFile would
// give where the decoding fails, and at once when the preview's length is
// over the output limit.
func (m *Mesh) PreviewFile(ctx context.Context) (b []byte, err error) {
	if err := m.checkPreview(); err != nil {
		return nil, err
	}
	if m.IsModel() {
		ctx, finish := m.deadline(ctx, "model assembly and preview")
		defer func() { err = finish(err) }()
		scenes, _, _, err := m.assembleLODs(ctx, 1)
		if err != nil {
			return nil, err
		}
		return m.modelPreview(ctx, scenes)
	}
	ctx, finish := m.deadline(ctx, "decode and preview")
	defer func() { err = finish(err) }()
	src := m.ownSourceDeps()
	scene, err := m.decode(ctx)
	if err != nil {
		return nil, err
	}
	return m.previewOfDecoded(ctx, scene, src)
}

// PreviewFromScan draws NAME.preview.png from the scene of a one-pass
// scan (ScanDecode), as GLBOf exports NAME.glb from it.
func (m *Mesh) PreviewFromScan(ctx context.Context, scene *decode.Scene) (b []byte, err error) {
	ctx, finish := m.deadline(ctx, "texture decode and preview")
	defer func() { err = finish(err) }()
	return m.previewOfDecoded(ctx, scene, nil)
}

// previewOfDecoded resolves a freshly decoded scene's materials (kept for
// the models that place m, as GLBFile keeps it: src) and draws it.
func (m *Mesh) previewOfDecoded(ctx context.Context, scene *decode.Scene, src []Dep) ([]byte, error) {
	deps, err := m.Textures(ctx, scene)
	if err != nil {
		return nil, err
	}
	m.keepScene(scene, src, deps)
	return m.PreviewOf(ctx, scene)
}

// modelPreview draws a model's preview from its assembled scenes (LOD 0
// first; none: an empty picture).
func (m *Mesh) modelPreview(ctx context.Context, scenes []*decode.Scene) ([]byte, error) {
	if len(scenes) == 0 {
		return m.PreviewOf(ctx, &decode.Scene{})
	}
	return m.PreviewOf(ctx, scenes[0])
}
