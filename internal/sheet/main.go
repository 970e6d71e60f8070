// Command sheet draws the README's contact sheets from meshfs's own
// previews: every mesh (or, with -models, every model) file under the
// given folders, as convert and the mount would show it, drawn as its
// NAME.preview.png (outputs.Mesh.PreviewFile) at twice the tile's side and
// halved (a 2×2 box filter), one labelled tile each, on a dark ground.
// No Blender, no mount. `make preview` runs it for docs/preview.png (the
// meshes of testdata/ and ../shared/assets) and docs/models.png (the
// assembled models of ../shared/assets, and testdata/unigine/yard's
// world labelled unigine-world):
//
//	go run ./internal/sheet [-models] [-tile 128] [-max 49] -o OUT.png LABEL=DIR...
//
// With more files than -max, the tiles are taken in turn from each top
// folder (LABEL and the path's first folder), coloured ones and the other
// trees before testdata/'s in each turn, so that every game shows.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/texture"
	"github.com/meshfs/meshfs/export/outputs"
)

func main() {
	out := flag.String("o", "", "the sheet to write (PNG)")
	models := flag.Bool("models", false, "the model files (LOD 0 assembled) instead of the meshes")
	tile := flag.Int("tile", 128, "side of one tile in pixels")
	most := flag.Int("max", 49, "most tiles")
	flag.Parse()
	if *out == "" || flag.NArg() == 0 || *tile < 16 {
		fmt.Fprintln(os.Stderr, "usage: sheet [-models] [-tile N] [-max N] -o OUT.png LABEL=DIR...")
		os.Exit(2)
	}
	var items []item
	for _, arg := range flag.Args() {
		label, dir, ok := strings.Cut(arg, "=")
		if !ok {
			label, dir = filepath.Base(arg), arg
		}
		found, err := find(label, dir, *models)
		if err != nil {
			fmt.Fprintln(os.Stderr, "sheet:", err)
			os.Exit(1)
		}
		items = append(items, found...)
	}
	if len(items) == 0 {
		fmt.Fprintln(os.Stderr, "sheet: no files to draw")
		os.Exit(1)
	}
	tiles := draw2(items, *tile)
	items, tiles = pick(items, tiles, *most)
	sheet := layout(items, tiles, *tile)
	b, err := texture.EncodePNG(&texture.Image{NRGBA: sheet})
	if err == nil {
		err = os.WriteFile(*out, b, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "sheet:", err)
		os.Exit(1)
	}
	fmt.Printf("sheet: %d tiles -> %s (%d bytes)\n", len(items), *out, len(b))
}

// item is one file to draw.
type item struct {
	label string // LABEL/relative path
	group string // LABEL and the first folder: the turn it is taken in
	mesh  *outputs.Mesh
	err   error
}

// find lists the mesh (or model) files under dir that have a preview.
func find(label, dir string, models bool) ([]item, error) {
	var out []item
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && p != dir && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir // an editor's caches (UNIGINE's .runtimes), not the game's files
		}
		if err != nil || d.IsDir() || outputs.IsCompanion(p) {
			return err
		}
		m, err := outputs.Open(p)
		if err != nil || m == nil || m.IsModel() != models {
			return nil
		}
		if _, anim := m.Format.(decode.AnimationOnly); anim {
			return nil
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		first, _, _ := strings.Cut(rel, "/")
		out = append(out, item{label: label + "/" + rel, group: label + "/" + first, mesh: m})
		return nil
	})
	return out, err
}

// pick takes at most n items and their tiles: in turn from each group,
// within a turn the coloured ones (a texture or vertex colours:
// colourful) first and the groups of testdata/ last, and tiles that draw
// nothing after all others; in their order.
func pick(items []item, tiles []*image.NRGBA, n int) ([]item, []*image.NRGBA) {
	if len(items) <= n {
		return items, tiles
	}
	turn := map[string]int{}
	rank := make([]int, len(items))
	for i, it := range items {
		rank[i] = turn[it.group]
		if drawn(tiles[i]) > 0 { // an empty tile takes no group's turn
			turn[it.group]++
		}
	}
	type key struct {
		empty, grey, testdata bool
		rank                  int
	}
	keys := make([]key, len(items))
	for i, it := range items {
		keys[i] = key{drawn(tiles[i]) == 0, !colourful(tiles[i]), strings.HasPrefix(it.label, "testdata/"), rank[i]}
	}
	idx := make([]int, len(items))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool {
		ka, kb := keys[idx[a]], keys[idx[b]]
		switch {
		case ka.empty != kb.empty: // a tile that draws nothing (a scene whose meshes are all missing) last
			return !ka.empty
		case ka.rank != kb.rank:
			return ka.rank < kb.rank
		case ka.grey != kb.grey:
			return !ka.grey
		}
		return !ka.testdata && kb.testdata
	})
	idx = idx[:n]
	sort.Ints(idx)
	outItems, outTiles := make([]item, n), make([]*image.NRGBA, n)
	for i, k := range idx {
		outItems[i], outTiles[i] = items[k], tiles[k]
	}
	return outItems, outTiles
}

// drawn counts a tile's drawn (not transparent) pixels.
func drawn(t *image.NRGBA) int {
	n := 0
	for i := 3; t != nil && i < len(t.Pix); i += 4 {
		if t.Pix[i] != 0 {
			n++
		}
	}
	return n
}

// colourful reports whether a tenth of a tile's drawn pixels are not grey.
func colourful(t *image.NRGBA) bool {
	if t == nil {
		return false
	}
	var drawn, coloured int
	for i := 0; i < len(t.Pix); i += 4 {
		if t.Pix[i+3] == 0 {
			continue
		}
		drawn++
		r, g, b := int(t.Pix[i]), int(t.Pix[i+1]), int(t.Pix[i+2])
		if max(r, g, b)-min(r, g, b) > 12 {
			coloured++
		}
	}
	return drawn > 0 && coloured*10 >= drawn
}

// draw2 draws every item's preview at twice size and halves it; a file
// whose preview fails is an empty tile (its label says so).
func draw2(items []item, size int) []*image.NRGBA {
	tiles := make([]*image.NRGBA, len(items))
	var wg sync.WaitGroup
	next := make(chan int)
	for range runtime.NumCPU() {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				m := items[i].mesh
				m.Limits.PreviewSize = 2 * size
				b, err := m.PreviewFile(context.Background())
				var img image.Image
				if err == nil {
					img, err = png.Decode(bytes.NewReader(b))
				}
				if err != nil {
					items[i].err = err
					fmt.Fprintf(os.Stderr, "sheet: %s: %v\n", items[i].label, err)
					continue
				}
				tiles[i] = halve(img, size)
			}
		}()
	}
	for i := range items {
		next <- i
	}
	close(next)
	wg.Wait()
	return tiles
}

// halve box-filters img (2size pixels a side) to size.
func halve(img image.Image, size int) *image.NRGBA {
	src := image.NewNRGBA(image.Rect(0, 0, 2*size, 2*size))
	draw.Draw(src, src.Rect, img, img.Bounds().Min, draw.Src)
	dst := image.NewNRGBA(image.Rect(0, 0, size, size))
	for y := range size {
		for x := range size {
			var sum [4]float64
			for k := range 4 {
				c := src.NRGBAAt(2*x+k%2, 2*y+k/2)
				a := float64(c.A)
				sum[0] += float64(c.R) * a
				sum[1] += float64(c.G) * a
				sum[2] += float64(c.B) * a
				sum[3] += a
			}
			if sum[3] == 0 {
				continue
			}
			dst.SetNRGBA(x, y, color.NRGBA{
				R: uint8(math.Round(sum[0] / sum[3])), G: uint8(math.Round(sum[1] / sum[3])),
				B: uint8(math.Round(sum[2] / sum[3])), A: uint8(math.Round(sum[3] / 4)),
			})
		}
	}
	return dst
}

// ground is the sheet's background.
var ground = color.NRGBA{R: 5, G: 6, B: 8, A: 255}

// layout puts the tiles in a square-ish grid over the ground, each with
// its label (the file's name, or as much of its path's end as fits) along
// its bottom.
func layout(items []item, tiles []*image.NRGBA, size int) *image.NRGBA {
	cols := int(math.Ceil(math.Sqrt(float64(len(tiles)))))
	rows := (len(tiles) + cols - 1) / cols
	sheet := image.NewNRGBA(image.Rect(0, 0, cols*size, rows*size))
	draw.Draw(sheet, sheet.Rect, &image.Uniform{ground}, image.Point{}, draw.Src)
	face := basicfont.Face7x13
	for i, t := range tiles {
		at := image.Pt(i%cols*size, i/cols*size)
		if t != nil {
			draw.Draw(sheet, t.Rect.Add(at), t, image.Point{}, draw.Over)
		}
		label := items[i].label
		if items[i].err != nil {
			label = "(failed) " + label
		}
		fit := (size - 4) / 7
		if len(label) > fit {
			label = ".." + label[len(label)-fit+2:]
		}
		base := fixed.P(at.X+3, at.Y+size-4)
		for _, d := range []struct {
			off image.Point
			c   color.Color
		}{{image.Pt(1, 1), color.Black}, {image.Point{}, color.White}} {
			dr := &font.Drawer{Dst: sheet, Src: image.NewUniform(d.c), Face: face,
				Dot: base.Add(fixed.P(d.off.X, d.off.Y))}
			dr.DrawString(label)
		}
	}
	return sheet
}
