package fs

import (
	"bytes"
	"fmt"
	"image"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/woozymasta/bcn"
)

// BenchmarkTexturedGLB: a GEM mesh whose material names a 2048² BC1
// texture (with mips, as shipped), its .glb read through the mount.
// first/textured is the first read of the .glb of a mesh and texture new
// to the mount (each iteration copies both under new names), the texture
// decoded and PNG-encoded in the conversion; first/untextured the same
// mesh with no material file. warm/mount reads the textured .glb again
// (the kernel's page cache) and warm/plain a plain file of its size
// outside the mount; warm/mount reports x-plain, the ratio of the two
// medians of 51 reads each, in turn (issue 15's target: ≤ 1.25).
//
//	go test ./fs -run '^$' -bench TexturedGLB -benchtime 10x
func BenchmarkTexturedGLB(b *testing.B) {
	ply, err := os.ReadFile(filepath.Join(repoRoot(b), "testdata", "gem", "eply_tangents_textures.ply"))
	if err != nil {
		b.Fatal(err)
	}
	d, err := bcn.EncodeDDSWithOptions([]image.Image{paintedImage(2048, 2048)}, bcn.FormatBC1,
		&bcn.EncodeOptions{QualityLevel: 1, GenerateMipmaps: true, Workers: 1})
	if err != nil {
		b.Fatal(err)
	}
	var dds bytes.Buffer
	if err := d.Write(&dds); err != nil {
		b.Fatal(err)
	}
	src := b.TempDir()
	_, mnt := mountT(b, src, Config{})
	n := 0
	// mesh writes a new mesh folder (with a new texture when textured) and
	// returns its .glb's path in the mount.
	mesh := func(b *testing.B, textured bool) string {
		n++
		dir := filepath.Join("resource", "entity", fmt.Sprintf("m%d", n))
		write(b, filepath.Join(src, dir, "body.ply"), ply)
		if textured {
			write(b, filepath.Join(src, "resource", "texture", "common", fmt.Sprintf("hull%d.dds", n)), dds.Bytes())
			write(b, filepath.Join(src, dir, "body.mtl"), fmt.Appendf(nil, `{material simple {diffuse "$/hull%d"}}`, n))
		}
		return filepath.Join(mnt, dir, "body.ply", "body.glb")
	}
	for _, textured := range []bool{true, false} {
		name := "first/untextured"
		if textured {
			name = "first/textured"
		}
		b.Run(name, func(b *testing.B) {
			var size int64
			// Each mesh is written an iteration ahead of its read, so
			// that the watcher's events for its files pass first: one
			// arriving after the read began would make a new version of
			// the mesh (ESTALE).
			next := mesh(b, textured)
			for b.Loop() {
				b.StopTimer()
				glb := next
				next = mesh(b, textured)
				time.Sleep(20 * time.Millisecond)
				b.StartTimer()
				size = readAll(b, glb)
			}
			b.ReportMetric(float64(size), "glb-bytes")
		})
	}
	glb := mesh(b, true)
	data, err := os.ReadFile(glb)
	if err != nil {
		b.Fatal(err)
	}
	if got := glbImageSizes(b, data); len(got) != 1 || got[0] != [2]int{2048, 2048} {
		b.Fatalf("the .glb embeds %v, want one 2048×2048 image", got)
	}
	plain := filepath.Join(b.TempDir(), "plain")
	if err := os.WriteFile(plain, data, 0o644); err != nil {
		b.Fatal(err)
	}
	// xPlain is the ratio of the median warm reads of the .glb and the
	// plain file, read in turn so that both sides see the same load.
	xPlain := func() float64 {
		var ts [2][]time.Duration
		for range 51 {
			for i, p := range []string{glb, plain} {
				t0 := time.Now()
				readAll(b, p)
				ts[i] = append(ts[i], time.Since(t0))
			}
		}
		for i := range ts {
			slices.Sort(ts[i])
		}
		return float64(ts[0][25]) / float64(ts[1][25])
	}
	for _, c := range []struct{ name, path string }{{"warm/mount", glb}, {"warm/plain", plain}} {
		b.Run(c.name, func(b *testing.B) {
			readAll(b, c.path) // warm the page cache
			b.SetBytes(int64(len(data)))
			for b.Loop() {
				readAll(b, c.path)
			}
			if c.path == glb {
				b.StopTimer()
				b.ReportMetric(xPlain(), "x-plain")
			}
		})
	}
}

// paintedImage is a w×h picture with the structure of a painted texture:
// smooth shading, panels and fine grain.
func paintedImage(w, h int) *image.NRGBA {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			fx, fy := float64(x)/float64(w), float64(y)/float64(h)
			shade := 0.5 + 0.25*math.Sin(6*fx+2*fy) + 0.15*math.Cos(11*fy-3*fx)
			if (x/256+y/192)%3 == 0 {
				shade *= 0.7
			}
			grain := float64(uint32(x*2654435761^y*40503)>>27) - 16
			v := func(k float64) uint8 { return uint8(max(0, min(255, 255*shade*k+grain))) }
			i := y*img.Stride + 4*x
			img.Pix[i], img.Pix[i+1], img.Pix[i+2], img.Pix[i+3] = v(1), v(0.85), v(0.6), 255
		}
	}
	return img
}
