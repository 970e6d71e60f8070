package clienttest

import (
	"fmt"
	"image"
	"image/png"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/decodetest"
	"github.com/meshfs/meshfs/export/outputs"
)

// The judge of NAME.preview.png: Blender renders the folder's own .glb
// with the preview's camera (blender/judge_previews.py), and the two
// pictures must agree.
const (
	// minIoU is the least intersection over union of the two alpha
	// silhouettes (alpha ≥ 128) for a file to agree, and minAgreeing the
	// share of files that must.
	minIoU      = 0.9
	minAgreeing = 0.95
	// maxChroma bounds, for a file whose materials show a base colour
	// texture in Blender, how far the mean colour of meshfs's covered
	// pixels may be from Blender's: each of the chromaticities r/(r+g+b),
	// g/(r+g+b), b/(r+g+b) (8-bit sRGB) within maxChroma of Blender's.
	// Blender's render is flat (the surface's own colour, no light) and
	// meshfs's is lit (a grey factor per pixel), so the means' brightness
	// differs by about the mean light; their chromaticity does not.
	maxChroma = 0.03
)

// previewJob is one folder's preview and the Blender render of its .glb.
type previewJob struct {
	GLB   string `json:"glb"`
	Out   string `json:"out"`
	Size  int    `json:"size"`
	label string
	mine  string // NAME.preview.png in the mount
}

type judgeReport struct {
	Meshes   int    `json:"meshes"`
	Textured int    `json:"textured"`
	Error    string `json:"error"`
}

// TestPreviewClients mounts testdata/ and ../shared/assets and holds every
// mesh and model folder's NAME.preview.png to Blender's render of the
// folder's NAME.glb (the package documentation says how).
func TestPreviewClients(t *testing.T) {
	if !*clients {
		t.Skip("needs Blender 3.4: go test ./internal/clienttest -run TestPreviewClients -clients")
	}
	blender := lookTool(t, "blender", "apt-get install --no-install-recommends blender python3-numpy")
	bin := buildMeshfs(t)
	roots := []sourceRoot{{"testdata", filepath.Join(repoRoot, "testdata"), false}}
	if dir, ok := decodetest.Shared(t, "assets"); ok {
		roots = append(roots, sourceRoot{"assets", dir, true})
	}
	out := t.TempDir()
	var jobs []*previewJob
	for _, r := range roots {
		abs, err := filepath.Abs(r.dir)
		if err != nil {
			t.Fatal(err)
		}
		r.dir = abs
		jobs = append(jobs, previewJobs(t, r, mountTree(t, bin, r.dir), out, len(jobs))...)
	}
	if len(jobs) == 0 {
		t.Fatal("no previews found")
	}
	start := time.Now()
	reports := runScript[*previewJob, judgeReport](t, blender, "judge_previews.py", jobs)
	t.Logf("Blender rendered %d files in one process in %v", len(jobs), time.Since(start).Round(time.Millisecond))

	var ious []float64
	agreeing, textured := 0, 0
	for i, j := range jobs {
		rep := reports[i]
		if rep.Error != "" {
			t.Errorf("%s: blender: %s", j.label, rep.Error)
			continue
		}
		mine, theirs := readRGBA(t, j.mine), readRGBA(t, j.Out)
		if mine == nil || theirs == nil {
			continue
		}
		if mine.Rect.Dx() != j.Size || mine.Rect.Dy() != j.Size {
			t.Errorf("%s: preview is %v, want %d²", j.label, mine.Rect, j.Size)
			continue
		}
		iou := silhouetteIoU(mine, theirs)
		ious = append(ious, iou)
		if iou >= minIoU {
			agreeing++
		}
		line := fmt.Sprintf("%s: IoU %.3f", j.label, iou)
		if iou < minIoU {
			keepPair(t, j)
		}
		if rep.Textured > 0 {
			textured++
			a, na := meanCovered(mine)
			b, nb := meanCovered(theirs)
			if na == 0 || nb == 0 {
				t.Errorf("%s: textured, but a picture is empty (%d, %d covered pixels)", j.label, na, nb)
				continue
			}
			ca, cb := chroma(a), chroma(b)
			d := 0.0
			for c := range 3 {
				d = math.Max(d, math.Abs(ca[c]-cb[c]))
			}
			line += fmt.Sprintf("; textured: mean colour %.0f, Blender's %.0f, chromaticity off by %.3f, brightness ×%.2f", a, b, d, (a[0]+a[1]+a[2])/(b[0]+b[1]+b[2]))
			if d > maxChroma {
				t.Errorf("%s: mean colour %.0f, Blender's %.0f: chromaticity off by %.3f, more than %.3f", j.label, a, b, d, maxChroma)
			}
		}
		t.Log(line)
	}
	sort.Float64s(ious)
	if len(ious) == 0 {
		t.Fatal("nothing compared")
	}
	q := func(p float64) float64 { return ious[int(p*float64(len(ious)-1))] }
	t.Logf("%d previews (%d textured): IoU min %.3f, 5%% %.3f, median %.3f, max %.3f; %d (%.1f%%) at least %.2f",
		len(ious), textured, ious[0], q(0.05), q(0.5), ious[len(ious)-1], agreeing, 100*float64(agreeing)/float64(len(ious)), minIoU)
	if float64(agreeing) < minAgreeing*float64(len(jobs)) {
		t.Errorf("%d of %d previews have a silhouette IoU of at least %.2f with Blender's: fewer than %.0f%%", agreeing, len(jobs), minIoU, 100*minAgreeing)
	}
}

// previewJobs walks the source tree of root, mounted at mnt, and returns
// a job for every mesh and model folder that holds a preview; a folder
// whose table has one must show it, unless it is broken (error.txt).
func previewJobs(t *testing.T, root sourceRoot, mnt, out string, n int) []*previewJob {
	t.Helper()
	var jobs []*previewJob
	err := filepath.WalkDir(root.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		m, err := outputs.Open(p)
		if err != nil || m == nil {
			return nil
		}
		rel, _ := filepath.Rel(root.dir, p)
		label := root.label + "/" + filepath.ToSlash(rel)
		dir := filepath.Join(mnt, rel)
		mine := filepath.Join(dir, m.PreviewName())
		_, anim := m.Format.(decode.AnimationOnly)
		_, serr := os.Stat(mine)
		switch {
		case anim || !m.HasPreview():
			if serr == nil {
				t.Errorf("%s: an animation file's folder shows %s", label, m.PreviewName())
			}
			return nil
		case serr != nil:
			if _, err := os.Stat(filepath.Join(dir, outputs.ErrorName)); err == nil && !root.whole {
				t.Logf("%s: broken, no preview", label)
				return nil
			}
			t.Errorf("%s: no %s: %v", label, m.PreviewName(), serr)
			return nil
		}
		jobs = append(jobs, &previewJob{
			GLB: filepath.Join(dir, m.GLBName()), Out: filepath.Join(out, fmt.Sprintf("%04d.png", n+len(jobs))),
			Size: outputs.DefaultPreviewSize, label: label, mine: mine,
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return jobs
}

// readRGBA decodes the PNG at path as 8-bit RGBA (not premultiplied).
func readRGBA(t *testing.T, path string) *image.NRGBA {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Error(err)
		return nil
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Errorf("%s: %v", path, err)
		return nil
	}
	if n, ok := img.(*image.NRGBA); ok {
		return n
	}
	b := img.Bounds()
	n := image.NewNRGBA(b)
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			n.Set(x, y, img.At(x, y))
		}
	}
	return n
}

// covered reports whether pixel i (of Pix/4) of img is part of the
// silhouette.
func covered(img *image.NRGBA, x, y int) bool { return img.NRGBAAt(x, y).A >= 128 }

// silhouetteIoU is the intersection over union of the two pictures'
// silhouettes (1 when both are empty), pixel for pixel.
func silhouetteIoU(a, b *image.NRGBA) float64 {
	var and, or int
	r := a.Rect.Intersect(b.Rect)
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			ca, cb := covered(a, x, y), covered(b, x, y)
			if ca && cb {
				and++
			}
			if ca || cb {
				or++
			}
		}
	}
	if or == 0 {
		return 1
	}
	return float64(and) / float64(or)
}

// meanCovered is the mean 8-bit colour of img's covered pixels, and their
// number.
func meanCovered(img *image.NRGBA) ([3]float64, int) {
	var sum [3]float64
	n := 0
	for y := img.Rect.Min.Y; y < img.Rect.Max.Y; y++ {
		for x := img.Rect.Min.X; x < img.Rect.Max.X; x++ {
			if c := img.NRGBAAt(x, y); c.A >= 128 {
				sum[0] += float64(c.R)
				sum[1] += float64(c.G)
				sum[2] += float64(c.B)
				n++
			}
		}
	}
	if n > 0 {
		for c := range sum {
			sum[c] /= float64(n)
		}
	}
	return sum, n
}

// chroma is a colour's chromaticity: each channel over their sum.
func chroma(c [3]float64) [3]float64 {
	s := c[0] + c[1] + c[2]
	if s == 0 {
		return [3]float64{1.0 / 3, 1.0 / 3, 1.0 / 3}
	}
	return [3]float64{c[0] / s, c[1] / s, c[2] / s}
}

// keepPair copies a disagreeing pair (the preview, Blender's render and
// the .glb) into $MESHFS_PREVIEW_KEEP, when set, to look at.
func keepPair(t *testing.T, j *previewJob) {
	dir := os.Getenv("MESHFS_PREVIEW_KEEP")
	if dir == "" {
		return
	}
	name := strings.NewReplacer("/", "_").Replace(j.label)
	for src, suffix := range map[string]string{j.mine: ".meshfs.png", j.Out: ".blender.png", j.GLB: ".glb"} {
		b, err := os.ReadFile(src)
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, name+suffix), b, 0o644)
		}
		if err != nil {
			t.Logf("keeping %s: %v", src, err)
		}
	}
}
