package browse

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/meshfs/meshfs/decode/decodetest"
	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/export/preview"
	"github.com/meshfs/meshfs/vfs"
)

// site serves what `meshfs serve` serves a browser: folder pages and
// assets from h, every file's bytes from the tree.
func site(t vfs.Tree, h *Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.Trim(r.URL.Path, "/")
		if strings.HasPrefix(r.URL.Path, AssetPrefix) {
			h.ServeHTTP(w, r)
			return
		}
		if info, err := t.Stat(r.Context(), name); err == nil && info.IsDir() {
			h.ServeHTTP(w, r)
			return
		}
		f, err := t.Open(r.Context(), name)
		if err != nil {
			http.Error(w, err.Error(), statusOf(err))
			return
		}
		defer f.Close()
		http.ServeContent(w, r, name, f.Info().ModTime, io.NewSectionReader(f, 0, f.Info().Size))
	})
}

// chromium returns the headless Chromium to run, or ends the test.
func chromium(t *testing.T) string {
	t.Helper()
	for _, n := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(n); err == nil {
			return p
		}
	}
	decodetest.CannotRun(t, "no chromium (Debian package chromium)")
	return ""
}

// browse runs headless Chromium on url with mode (--screenshot=PATH or
// --dump-dom) and returns its standard output.
func browse(t *testing.T, bin, url string, mode ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute) // a guard against a hung browser, not a timing
	defer cancel()
	args := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--use-angle=swiftshader",
		"--enable-unsafe-swiftshader", "--disable-background-networking", "--disable-component-update",
		"--disable-sync", "--no-first-run", "--disable-default-apps", "--hide-scrollbars",
		"--force-device-scale-factor=1", "--user-data-dir=" + t.TempDir(), "--window-size=1000,760",
		"--virtual-time-budget=20000"}, mode...)
	cmd := exec.CommandContext(ctx, bin, append(args, url)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %s: %v\n%s", url, err, errb.String())
	}
	return out.String()
}

func screenshot(t *testing.T, bin, url, name string) *image.NRGBA {
	t.Helper()
	p := filepath.Join(t.ArtifactDir(), name)
	browse(t, bin, url, "--screenshot="+p)
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	n := image.NewNRGBA(img.Bounds())
	for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y++ {
		for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x++ {
			n.Set(x, y, img.At(x, y))
		}
	}
	t.Logf("screenshot %s", p)
	return n
}

// stageColour is the colour the viewer clears its canvas to, and the
// stage's CSS background (#292b33).
var stageColour = color.NRGBA{41, 43, 51, 255}

// stage is the bounding box of the pixels of the stage's colour.
func stage(img *image.NRGBA) image.Rectangle {
	r := image.Rectangle{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if img.NRGBAAt(x, y) == stageColour {
				r = r.Union(image.Rect(x, y, x+1, y+1))
			}
		}
	}
	return r
}

// drawn counts, in the middle of r (its central half each way, clear of
// the status line), the pixels not of the stage's colour and their
// distinct colours.
func drawn(img *image.NRGBA, r image.Rectangle) (pixels, colours int) {
	in := image.Rect(r.Min.X+r.Dx()/4, r.Min.Y+r.Dy()/4, r.Max.X-r.Dx()/4, r.Max.Y-r.Dy()/4)
	seen := map[color.NRGBA]bool{}
	for y := in.Min.Y; y < in.Max.Y; y++ {
		for x := in.Min.X; x < in.Max.X; x++ {
			if c := img.NRGBAAt(x, y); c != stageColour {
				pixels++
				seen[c] = true
			}
		}
	}
	return pixels, len(seen)
}

// findImage reports whether the opaque pixels of want, a fifth of it at
// least, appear somewhere in img at 1:1, each channel within 3 (2% of
// them may differ).
func findImage(img, want *image.NRGBA) bool {
	b, w := img.Bounds(), want.Bounds()
	var opaque []image.Point
	for y := w.Min.Y; y < w.Max.Y; y++ {
		for x := w.Min.X; x < w.Max.X; x++ {
			if want.NRGBAAt(x, y).A == 255 {
				opaque = append(opaque, image.Pt(x-w.Min.X, y-w.Min.Y))
			}
		}
	}
	near := func(a, b color.NRGBA) bool {
		d := func(p, q uint8) bool { return p-q <= 3 || q-p <= 3 }
		return d(a.R, b.R) && d(a.G, b.G) && d(a.B, b.B)
	}
	if len(opaque) < w.Dx()*w.Dy()/5 {
		return false // too little to tell
	}
	for y := b.Min.Y; y+w.Dy() <= b.Max.Y; y++ {
		for x := b.Min.X; x+w.Dx() <= b.Max.X; x++ {
			miss := 0
			for _, p := range opaque {
				if !near(img.NRGBAAt(x+p.X, y+p.Y), want.NRGBAAt(w.Min.X+p.X, w.Min.Y+p.Y)) {
					if miss++; miss > len(opaque)/50 {
						break
					}
				}
			}
			if miss <= len(opaque)/50 {
				return true
			}
		}
	}
	return false
}

var stateOf = regexp.MustCompile(`<canvas id="view"[^>]*data-state="([a-z]+)"`)
var statusText = regexp.MustCompile(`<div id="status"[^>]*>([^<]*)</div>`)

// TestChromium serves the converted folders of a textured GEM model and a
// Transport Fever model, and has headless Chromium draw the model's page
// and the folder page.
func TestChromium(t *testing.T) {
	bin := chromium(t)
	ctx := context.Background()
	src := t.TempDir()
	mt := decodetest.WriteModelTree(t, src)
	out := t.TempDir()
	var thumb *image.NRGBA
	for _, rel := range []string{mt.Models["tf"], mt.Models["gem"]} {
		m, err := outputs.Open(filepath.Join(src, rel))
		if err != nil {
			t.Fatal(err)
		}
		m.Tree = src
		dir := filepath.Join(out, filepath.Base(rel))
		if err := m.WriteDir(ctx, dir); err != nil {
			t.Fatal(err)
		}
		if thumb != nil {
			continue
		}
		// The Transport Fever model (a textured cube) gets a thumbnail:
		// its part drawn by export/preview; the GEM one none (its row
		// shows the icon).
		part, err := outputs.Open(filepath.Join(src, mt.Deps["tf"]["part"]))
		if err != nil {
			t.Fatal(err)
		}
		s, err := part.Decode(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if thumb, err = preview.Render(s, 64); err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := png.Encode(&b, thumb); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, m.Base+".preview.png"), b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A mesh folder whose .glb is broken: its canvas must stay blank, which
	// shows the check below can fail.
	put(t, out, map[string]string{"broken.ply/broken.glb": "glTF but not really", "broken.ply/header.json": "{}"})

	tree, err := newDirTree(out)
	if err != nil {
		t.Fatal(err)
	}
	defer tree.root.Close()
	srv := httptest.NewServer(site(tree, New(tree)))
	defer srv.Close()

	t.Run("model", func(t *testing.T) {
		url := srv.URL + "/deps.mdl/"
		dom := browse(t, bin, url, "--dump-dom")
		st, status := stateOf.FindStringSubmatch(dom), statusText.FindStringSubmatch(dom)
		if st == nil || st[1] != "drawn" || status == nil {
			t.Fatalf("the viewer did not draw: state %q status %q\n%s", st, status, dom)
		}
		t.Logf("status: %s", status[1])
		if !regexp.MustCompile(`[1-9]\d* triangles, [1-9]\d* textures?`).MatchString(status[1]) {
			t.Errorf("status %q: no triangles or no texture drawn", status[1])
		}
		if !strings.Contains(dom, `data-state="shown"`) || !strings.Contains(dom, `<span class="key">"format"</span>`) {
			t.Errorf("header.json not shown:\n%s", dom)
		}
		img := screenshot(t, bin, url, "model.png")
		r := stage(img)
		if r.Dx() < 400 || r.Dy() < 250 {
			t.Fatalf("no stage in the screenshot (%v)", r)
		}
		px, colours := drawn(img, r)
		t.Logf("canvas %v: %d drawn pixels, %d colours in its middle", r, px, colours)
		if colours < 200 || px < r.Dx()*r.Dy()/4/20 {
			t.Errorf("the canvas is blank: %d drawn pixels, %d colours", px, colours)
		}
	})
	t.Run("broken", func(t *testing.T) {
		url := srv.URL + "/broken.ply"
		dom := browse(t, bin, url, "--dump-dom")
		if st := stateOf.FindStringSubmatch(dom); st == nil || st[1] != "error" || !strings.Contains(dom, "could not show broken.glb") {
			t.Errorf("a broken .glb: state %q\n%s", st, dom)
		}
		img := screenshot(t, bin, url, "broken.png")
		if px, colours := drawn(img, stage(img)); colours > 2 {
			t.Errorf("a broken .glb drew %d pixels, %d colours", px, colours)
		}
	})
	t.Run("folder", func(t *testing.T) {
		dom := browse(t, bin, srv.URL+"/", "--dump-dom")
		for _, want := range []string{
			`<span class="thumb loaded"><img class="thumb" src="/deps.mdl/deps.preview.png"`,
			`<span class="thumb missing"><img class="thumb" src="/tank_small.mdl/tank_small.preview.png"`,
			`<span class="thumb missing"><img class="thumb" src="/broken.ply/broken.preview.png"`,
		} {
			if !strings.Contains(dom, want) {
				t.Errorf("no %s in\n%s", want, dom)
			}
		}
		img := screenshot(t, bin, srv.URL+"/", "folder.png")
		if !findImage(img, thumb) {
			t.Error("the thumbnail is not in the folder page's screenshot")
		}
	})
}
