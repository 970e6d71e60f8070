package browse

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
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

	"github.com/meshfs/meshfs/decode/decodetest"
	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/export/preview"
	"github.com/meshfs/meshfs/vfs"
	"github.com/meshfs/meshfs/vfs/vfstest"
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
			http.Error(w, err.Error(), Status(err))
			return
		}
		defer f.Close()
		http.ServeContent(w, r, name, f.Info().ModTime, io.NewSectionReader(f, 0, f.Info().Size))
	})
}

// serveDir serves the folder dir as site does, until the test ends.
func serveDir(t *testing.T, dir string) *httptest.Server {
	t.Helper()
	tree, err := newDirTree(dir)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(site(tree, New(tree)))
	t.Cleanup(func() {
		srv.Close()
		tree.root.Close()
	})
	return srv
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
		dir := filepath.Join(out, filepath.Base(rel))
		if err := vfstest.WriteFolder(t, vfstest.Tree(t, src, &m.Limits), vfstest.Name(t, src, m.Path), dir); err != nil {
			t.Fatal(err)
		}
		if thumb != nil {
			// The GEM model's thumbnail is taken away: its row shows the icon.
			if err := os.Remove(filepath.Join(dir, m.Base+".preview.png")); err != nil {
				t.Fatal(err)
			}
			continue
		}
		// The Transport Fever model (a textured cube) gets a thumbnail of
		// the screenshot's size: its part drawn by export/preview.
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
	// The same model without its texture, to tell that the texture is
	// drawn.
	untextured(t, filepath.Join(out, "deps.mdl", "deps.glb"), filepath.Join(out, "plain.mdl", "plain.glb"))
	// A mesh folder whose .glb is broken: its canvas must stay blank, which
	// shows the check below can fail.
	put(t, out, map[string]string{"broken.ply/broken.glb": "glTF but not really", "broken.ply/header.json": "{}"})

	srv := serveDir(t, out)

	browser := startDevtools(t, bin, 1000, 760)
	t.Run("model", func(t *testing.T) {
		d := browser.on(t)
		d.load(srv.URL+"/deps.mdl/", viewerDone)
		var st struct{ State, Status, Header string }
		d.eval(`({state: document.getElementById('view').dataset.state, status: document.getElementById('status').textContent,
			header: document.querySelector('pre.json').innerHTML})`, &st)
		t.Logf("status: %s", st.Status)
		if st.State != "drawn" || !regexp.MustCompile(`^\d+ primitives?, [1-9]\d* triangles?, [1-9]\d* textures?(, \d+ animations? \(not played\))?$`).MatchString(st.Status) {
			t.Fatalf("state %s, status %q: no triangles or no texture drawn", st.State, st.Status)
		}
		if !strings.Contains(st.Header, `<span class="key">"format"</span>: <span class="str">"transport-fever-mdl"</span>`) {
			t.Errorf("header.json not shown: %s", st.Header)
		}
		img := d.page("model.png")
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
	t.Run("texture", func(t *testing.T) {
		d := browser.on(t)
		d.load(srv.URL+"/deps.mdl/", viewerDone)
		textured := d.page("textured.png")
		d.load(srv.URL+"/plain.mdl/", viewerDone)
		plain := d.page("plain.png")
		r := stage(textured)
		mid := image.Rect(r.Min.X+r.Dx()/4, r.Min.Y+r.Dy()/4, r.Max.X-r.Dx()/4, r.Max.Y-r.Dy()/4)
		px, _ := drawn(textured, r)
		n := differ(textured.SubImage(mid).(*image.NRGBA), plain.SubImage(mid).(*image.NRGBA))
		t.Logf("the texture changes %d of the %d drawn pixels in the canvas's middle", n, px)
		if n < px/4 {
			t.Errorf("the texture changes only %d of %d pixels", n, px)
		}
	})
	t.Run("controls", func(t *testing.T) { checkControls(t, browser.on(t), srv.URL+"/deps.mdl/") })
	t.Run("broken", func(t *testing.T) {
		d := browser.on(t)
		d.load(srv.URL+"/broken.ply", viewerDone)
		var st struct{ State, Status string }
		d.eval(`({state: document.getElementById('view').dataset.state, status: document.getElementById('status').textContent})`, &st)
		if st.State != "error" || !strings.HasPrefix(st.Status, "could not show broken.glb: ") {
			t.Errorf("a broken .glb: state %s, status %q", st.State, st.Status)
		}
		img := d.page("broken.png")
		if px, colours := drawn(img, stage(img)); colours > 2 {
			t.Errorf("a broken .glb drew %d pixels, %d colours", px, colours)
		}
	})
	t.Run("folder", func(t *testing.T) {
		d := browser.on(t)
		d.load(srv.URL+"/", thumbsDone)
		var dom string
		d.eval(`document.documentElement.outerHTML`, &dom)
		for _, want := range []string{
			`<span class="thumb loaded"><img class="thumb" src="/deps.mdl/deps.preview.png"`,
			`<span class="thumb missing"><img class="thumb" src="/tank_small.mdl/tank_small.preview.png"`,
			`<span class="thumb missing"><img class="thumb" src="/broken.ply/broken.preview.png"`,
		} {
			if !strings.Contains(dom, want) {
				t.Errorf("no %s in\n%s", want, dom)
			}
		}
		if !findImage(d.page("folder.png"), thumb) {
			t.Error("the thumbnail is not in the folder page's screenshot")
		}
	})
}

// untextured writes to dst the GLB src with no material's base-colour
// texture.
func untextured(t *testing.T, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	n := binary.LittleEndian.Uint32(b[12:])
	var doc map[string]any
	if err := json.Unmarshal(b[20:20+n], &doc); err != nil {
		t.Fatal(err)
	}
	for _, m := range doc["materials"].([]any) {
		if pbr, ok := m.(map[string]any)["pbrMetallicRoughness"].(map[string]any); ok {
			delete(pbr, "baseColorTexture")
		}
	}
	j, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	for len(j)%4 != 0 {
		j = append(j, ' ')
	}
	rest := b[20+n:]
	out := binary.LittleEndian.AppendUint32(nil, 0x46546c67)
	out = binary.LittleEndian.AppendUint32(out, 2)
	out = binary.LittleEndian.AppendUint32(out, uint32(12+8+len(j)+len(rest)))
	out = binary.LittleEndian.AppendUint32(out, uint32(len(j)))
	out = binary.LittleEndian.AppendUint32(out, 0x4e4f534a)
	out = append(append(out, j...), rest...)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(dst, out, 0o644); err != nil {
		t.Fatal(err)
	}
}
