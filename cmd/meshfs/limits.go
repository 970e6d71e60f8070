package main

import (
	"fmt"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/export/preview"
)

// addLimitFlags adds the conversion limits (outputs.Limits) to a command,
// with outputs.DefaultLimits as defaults, writing into l. convert and mount
// share them, so a folder converts the same way in both.
func addLimitFlags(cmd *cobra.Command, l *outputs.Limits) {
	*l = outputs.DefaultLimits
	fs := cmd.Flags()
	fs.Var((*byteSize)(&l.MaxSourceSize), outputs.FlagMaxSourceSize,
		"largest mesh file (or companion file) to decode, e.g. 256MiB; a larger one gets error.txt (0: no limit)")
	fs.DurationVar(&l.Timeout, outputs.FlagTimeout, l.Timeout,
		"deadline of one mesh's scan, and of its decode and export (0: none)")
	fs.Var((*byteSize)(&l.MaxOutputSize), outputs.FlagMaxOutputSize,
		"largest output file (.glb, .obj, .mtl, chunk), e.g. 1GiB; a larger one is an error (0: no limit)")
	fs.Int64Var(&l.MaxTexturePixels, outputs.FlagMaxTexturePixels, l.MaxTexturePixels,
		"most pixels decoded of one texture (4096×4096); a DDS over it is read from its first mip level within it, another texture over it is left out (0: no limit)")
	fs.Int64Var(&l.MaxTexturePixelsTotal, outputs.FlagMaxTexturePixelsTotal, l.MaxTexturePixelsTotal,
		"most pixels of all the textures of one conversion; a texture past it is left out (0: no limit)")
	fs.Var((*previewSize)(&l.PreviewSize), outputs.FlagPreviewSize,
		"side in pixels of NAME.preview.png, the thumbnail of every mesh and model folder (0: none)")
	fs.StringArrayVar(&l.AssetPaths, "asset-path", nil,
		"asset root (a game's resource/ or res/ folder) searched for the textures and material files a mesh names, after the mod's own; repeatable")
}

// previewSize is --preview-size: 0 (no preview) to preview.MaxSize.
type previewSize int

func (p *previewSize) Set(v string) error {
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 || n > preview.MaxSize {
		return fmt.Errorf("want a number of pixels from 0 (no preview) to %d", preview.MaxSize)
	}
	*p = previewSize(n)
	return nil
}

func (p *previewSize) String() string { return strconv.Itoa(int(*p)) }
func (p *previewSize) Type() string   { return "pixels" }
