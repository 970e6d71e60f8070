package browse

import (
	"context"
	"encoding/xml"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/meshfs/meshfs/vfs"
)

// put writes the files of a tree under dir: a name ending in "/" is a
// folder.
func put(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if strings.HasSuffix(name, "/") {
			if err := os.MkdirAll(p, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func newHandler(t *testing.T, dir string, unknown ...string) *Handler {
	t.Helper()
	tree, err := newDirTree(dir, unknown...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tree.root.Close() })
	return New(tree)
}

// get asks h for target as a browser does and returns the response.
func get(t *testing.T, h http.Handler, method, target string, hdr ...string) *http.Response {
	t.Helper()
	r := httptest.NewRequest(method, "http://meshfs.test"+target, nil)
	r.Header.Set("Accept", "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8")
	for i := 0; i+1 < len(hdr); i += 2 {
		r.Header.Set(hdr[i], hdr[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w.Result()
}

func body(t *testing.T, res *http.Response) string {
	t.Helper()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// elem is one element of a page: its name, attributes and the text
// directly inside it.
type elem struct {
	Name string
	Attr map[string]string
	Text string
}

// parse reads an HTML page as HTML-tolerant XML, failing on what it
// cannot read.
func parse(t *testing.T, page string) []*elem {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(page))
	d.Strict = false
	d.AutoClose = xml.HTMLAutoClose
	d.Entity = xml.HTMLEntity
	var all, open []*elem
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("page does not parse: %v\n%s", err, page)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			e := &elem{Name: strings.ToLower(tok.Name.Local), Attr: map[string]string{}}
			for _, a := range tok.Attr {
				e.Attr[strings.ToLower(a.Name.Local)] = a.Value
			}
			all = append(all, e)
			open = append(open, e)
		case xml.EndElement:
			if len(open) > 0 {
				open = open[:len(open)-1]
			}
		case xml.CharData:
			if len(open) > 0 {
				open[len(open)-1].Text += string(tok)
			}
		}
	}
	return all
}

func find(es []*elem, name, attr string) []*elem {
	var out []*elem
	for _, e := range es {
		if e.Name == name {
			if _, ok := e.Attr[attr]; ok || attr == "" {
				out = append(out, e)
			}
		}
	}
	return out
}

// unURL is the path a page's link names.
func unURL(t *testing.T, s string) string {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatalf("link %q: %v", s, err)
	}
	if u.Scheme != "" || u.Host != "" || u.RawQuery != "" || u.Fragment != "" {
		t.Errorf("link %q is not a plain path", s)
	}
	return u.Path
}

// checkSafe fails when the page holds a script not among the handler's
// assets, an inline handler, or an inline script or style.
func checkSafe(t *testing.T, page string, es []*elem) {
	t.Helper()
	for _, e := range es {
		for a := range e.Attr {
			if strings.HasPrefix(a, "on") || a == "style" {
				t.Errorf("<%s> has attribute %s=%q", e.Name, a, e.Attr[a])
			}
		}
		switch e.Name {
		case "script":
			if !strings.HasPrefix(e.Attr["src"], AssetPrefix) || strings.TrimSpace(e.Text) != "" {
				t.Errorf("script %q with text %q", e.Attr["src"], e.Text)
			}
		case "style", "iframe", "object", "embed", "base", "form":
			t.Errorf("page has <%s>", e.Name)
		}
	}
	if n := strings.Count(strings.ToLower(page), "<script"); n != len(find(es, "script", "src")) {
		t.Errorf("%d <script in the text, %d script elements", n, len(find(es, "script", "src")))
	}
}

func TestFolderPage(t *testing.T) {
	dir := t.TempDir()
	put(t, dir, map[string]string{
		"plain/":                      "",
		"tank.mdl/tank.glb":           "glb",
		"tank.mdl/tank.lod1.glb":      "glb",
		"tank.mdl/header.json":        `{"format":"gem-mdl"}`,
		"tank.mdl/chunks/":            "",
		"skin.mesh_skinned/skin.glb":  "glb",
		"Big.PLY/Big.glb":             "glb",
		"notes.txt":                   "hello",
		"cube.glb":                    "glb bytes",
		"wall.dds.png":                "png",
		"z.bin":                       strings.Repeat("x", 3000),
		"tank.mdl/chunks/0000_HEADER": "h",
	})
	h := newHandler(t, dir, ".glb")
	res := get(t, h, "GET", "/")
	page := body(t, res)
	if res.StatusCode != 200 {
		t.Fatalf("GET /: %d %s", res.StatusCode, page)
	}
	if ct := res.Header.Get("Content-Type"); ct != "text/html; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	if csp := res.Header.Get("Content-Security-Policy"); csp != CSP || !strings.Contains(csp, "default-src 'none'") {
		t.Errorf("Content-Security-Policy %q", csp)
	}
	es := parse(t, page)
	checkSafe(t, page, es)

	// Rows in order: folders first, then files, each by name.
	var names []string
	var sizes []string
	for _, tr := range find(es, "tr", "class") {
		_ = tr
	}
	for _, td := range find(es, "td", "class") {
		if td.Attr["class"] == "num" {
			sizes = append(sizes, td.Text)
		}
	}
	for _, a := range find(es, "a", "href") {
		if a.Attr["class"] == "" && a.Text != ".." && a.Text != "meshfs" {
			names = append(names, a.Text)
		}
	}
	wantNames := []string{"Big.PLY/", "plain/", "skin.mesh_skinned/", "tank.mdl/", "cube.glb", "notes.txt", "wall.dds.png", "z.bin"}
	if !slices.Equal(names, wantNames) {
		t.Errorf("entries %q, want %q", names, wantNames)
	}
	// Sizes: blank for folders and for a size ReadDir does not know.
	wantSizes := []string{"", "", "", "", "", "5 B", "3 B", "2.9 KiB"}
	if !slices.Equal(sizes, wantSizes) {
		t.Errorf("sizes %q, want %q", sizes, wantSizes)
	}
	var thumbs []string
	for _, img := range find(es, "img", "src") {
		if img.Attr["loading"] != "lazy" || img.Attr["class"] != "thumb" {
			t.Errorf("img %v is not a lazy thumbnail", img.Attr)
		}
		thumbs = append(thumbs, unURL(t, img.Attr["src"]))
	}
	wantThumbs := []string{"/Big.PLY/Big.preview.png", "/skin.mesh_skinned/skin.preview.png", "/tank.mdl/tank.preview.png", "/wall.dds.png"}
	if !slices.Equal(thumbs, wantThumbs) {
		t.Errorf("thumbnails %q, want %q", thumbs, wantThumbs)
	}
	var downloads []string
	for _, a := range find(es, "a", "download") {
		downloads = append(downloads, unURL(t, a.Attr["href"]))
	}
	if want := []string{"/cube.glb", "/notes.txt", "/wall.dds.png", "/z.bin"}; !slices.Equal(downloads, want) {
		t.Errorf("download links %q, want %q", downloads, want)
	}
	if len(find(es, "canvas", "")) != 0 || strings.Contains(page, "viewer.js") {
		t.Error("the root, which holds cube.glb but is no mesh folder, has a viewer")
	}
	if len(find(es, "a", "href")) == 0 || page != body(t, get(t, h, "GET", "/")) {
		t.Error("the same folder gives another page")
	}
}

func TestMeshFolderPage(t *testing.T) {
	dir := t.TempDir()
	put(t, dir, map[string]string{
		"m/tank.mdl/tank.collision.glb":   "c",
		"m/tank.mdl/tank.glb":             "glb",
		"m/tank.mdl/tank.lod1.glb":        "glb",
		"m/tank.mdl/tank.obj":             "o",
		"m/tank.mdl/header.json":          `{"format":"gem-mdl"}`,
		"m/tank.mdl/error.txt":            "broken",
		"m/tank.mdl/chunks/0000":          "h",
		"m/other/x.glb":                   "glb",
		"m/a.b.ply/a.b.glb":               "glb",
		"m/noext/noext.glb":               "glb",
		"m/renamed.zip/renamed.glb":       "glb",
		"m/renamed.zip/unrelated.lod.glb": "glb",
	})
	h := newHandler(t, dir)
	for _, target := range []string{"/m/tank.mdl", "/m/tank.mdl/"} {
		res := get(t, h, "GET", target)
		page := body(t, res)
		if res.StatusCode != 200 {
			t.Fatalf("GET %s: %d %s", target, res.StatusCode, page)
		}
		es := parse(t, page)
		checkSafe(t, page, es)
		c := find(es, "canvas", "data-glb")
		if len(c) != 1 || unURL(t, c[0].Attr["data-glb"]) != "/m/tank.mdl/tank.glb" {
			t.Fatalf("%s: canvas %v", target, c)
		}
		var glbs []string
		for _, b := range find(es, "button", "data-glb") {
			glbs = append(glbs, b.Text+"="+unURL(t, b.Attr["data-glb"]))
		}
		if want := []string{"tank.glb=/m/tank.mdl/tank.glb", "tank.collision.glb=/m/tank.mdl/tank.collision.glb",
			"tank.lod1.glb=/m/tank.mdl/tank.lod1.glb"}; !slices.Equal(glbs, want) {
			t.Errorf("%s: glb buttons %q, want %q", target, glbs, want)
		}
		var fetched []string
		for _, p := range find(es, "pre", "data-src") {
			fetched = append(fetched, unURL(t, p.Attr["data-src"]))
		}
		if want := []string{"/m/tank.mdl/error.txt", "/m/tank.mdl/header.json"}; !slices.Equal(fetched, want) {
			t.Errorf("%s: shown files %q, want %q", target, fetched, want)
		}
		var downloads []string
		for _, a := range find(es, "a", "download") {
			downloads = append(downloads, unURL(t, a.Attr["href"]))
		}
		if len(downloads) != 6 || downloads[0] != "/m/tank.mdl/error.txt" {
			t.Errorf("%s: download links %q", target, downloads)
		}
		var links []string
		for _, a := range find(es, "a", "href") {
			links = append(links, a.Text+"="+unURL(t, a.Attr["href"]))
		}
		for _, want := range []string{"meshfs=/", "m=/m/", "tank.mdl=/m/tank.mdl/", "..=/m/", "chunks/=/m/tank.mdl/chunks/"} {
			if !slices.Contains(links, want) {
				t.Errorf("%s: no link %s among %q", target, want, links)
			}
		}
		if !strings.Contains(page, "viewer.js") {
			t.Errorf("%s: no viewer script", target)
		}
	}
	for target, want := range map[string]string{"/m/other": "", "/m/a.b.ply/": "/m/a.b.ply/a.b.glb",
		"/m/noext": "/m/noext/noext.glb", "/m/renamed.zip": "/m/renamed.zip/renamed.glb"} {
		es := parse(t, body(t, get(t, h, "GET", target)))
		c := find(es, "canvas", "data-glb")
		switch {
		case want == "" && len(c) != 0:
			t.Errorf("%s: a viewer of %v", target, c[0].Attr)
		case want != "" && (len(c) != 1 || unURL(t, c[0].Attr["data-glb"]) != want):
			t.Errorf("%s: canvas %v, want one of %s", target, c, want)
		}
		if target == "/m/renamed.zip" && len(find(es, "button", "data-glb")) != 1 {
			t.Errorf("%s: unrelated.lod.glb offered as a view of renamed", target)
		}
	}
}

// hostile are names a game file may carry (any bytes but "/" and NUL),
// each an attempt at markup, script, a link elsewhere or a path escape.
var hostile = []string{
	`<script>alert(1)<`,
	`" onmouseover="alert(2)`,
	`' onerror='alert(3)' x='`,
	`javascript:alert(4)`,
	`a&amp;b&lt;`,
	`%2e%2e`,
	`x?y=1#z`,
	"line\nbreak\ttab",
	`<img src=x onerror=alert(5)>`,
	`--><!--`,
	`{{.Title}}`,
	`@evil.example:80`,
	`+ ;,=@$`,
	"\u202eevil\u202c",
}

func TestHostileNames(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	for _, n := range hostile {
		files[n+".txt"] = "x"
		files[n+"/"] = ""
		files[n+".ply/"+n+".glb"] = "glb"
		files[n+".ply/header.json"] = "{}"
	}
	put(t, dir, files)
	h := newHandler(t, dir)
	check := func(target string, want map[string]string) {
		t.Helper()
		res := get(t, h, "GET", target)
		page := body(t, res)
		if res.StatusCode != 200 {
			t.Fatalf("GET %q: %d %s", target, res.StatusCode, page)
		}
		if strings.Contains(page, "<script>alert") || strings.Contains(page, "<img src=x") {
			t.Errorf("GET %q: a name came through unescaped", target)
		}
		es := parse(t, page)
		checkSafe(t, page, es)
		got := map[string]bool{}
		for _, e := range es {
			for _, a := range []string{"href", "src", "data-glb", "data-src"} {
				v, ok := e.Attr[a]
				if !ok || strings.HasPrefix(v, AssetPrefix) {
					continue
				}
				if !strings.HasPrefix(v, "/") || strings.HasPrefix(v, "//") {
					t.Errorf("GET %q: %s %q leaves the site", target, a, v)
				}
				got[e.Name+" "+unURL(t, v)] = true
			}
		}
		for p, el := range want {
			if !got[el+" "+p] {
				t.Errorf("GET %q: no <%s> linking %q (links: %v)", target, el, p, got)
			}
		}
		for _, n := range hostile {
			found := false
			for _, a := range find(es, "a", "href") {
				found = found || a.Text == n+".txt"
			}
			if target == "/" && !found {
				t.Errorf("no link shows the name %q as text", n+".txt")
			}
		}
	}
	want := map[string]string{}
	for _, n := range hostile {
		want["/"+n+".txt"] = "a"
		want["/"+n+"/"] = "a"
		want["/"+n+".ply/"+n+".preview.png"] = "img"
	}
	check("/", want)
	for _, n := range hostile {
		check(urlOf(n+".ply"), map[string]string{"/" + n + ".ply/" + n + ".glb": "button", "/" + n + ".ply/header.json": "pre"})
		check(urlOf(n), map[string]string{"/": "a"})
	}
}

func TestRefusals(t *testing.T) {
	dir := t.TempDir()
	put(t, dir, map[string]string{"a/b.txt": "b", "c/": ""})
	h := newHandler(t, dir)
	for _, c := range []struct {
		method, target string
		status         int
	}{
		{"GET", "/missing", 404},
		{"GET", "/a/b.txt", 404}, // a file is no folder: serve answers its bytes
		{"GET", "/a/../c", 400},
		{"GET", "/a/%2e%2e/c", 400},
		{"GET", "/a/./", 400},
		{"GET", "//a", 400},
		{"GET", "/a%5cb", 400},
		{"GET", "/a%00", 400},
		{"POST", "/a/", 405},
		{"PROPFIND", "/a/", 405},
		{"GET", AssetPrefix + "nothing.js", 404},
		{"GET", AssetPrefix + "../page.html", 404},
		{"GET", "/a/", 200},
		{"GET", "/a", 200},
		{"HEAD", "/a", 200},
	} {
		res := get(t, h, c.method, c.target)
		b := body(t, res)
		if res.StatusCode != c.status {
			t.Errorf("%s %s: %d, want %d (%s)", c.method, c.target, res.StatusCode, c.status, b)
		}
		if c.method == "HEAD" && (b != "" || res.Header.Get("Content-Length") == "") {
			t.Errorf("HEAD %s: body %q, Content-Length %q", c.target, b, res.Header.Get("Content-Length"))
		}
	}
	if res := get(t, h, "POST", "/a/"); res.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("405 Allow %q", res.Header.Get("Allow"))
	}
	// ServeFolder takes the tree name as given, whatever the URL.
	for name, status := range map[string]int{"a": 200, "": 200, "c": 200, "a/b.txt": 404, "a/../c": 400, "nothing": 404} {
		w := httptest.NewRecorder()
		h.ServeFolder(w, httptest.NewRequest("GET", "/elsewhere//x", nil), name)
		if w.Code != status {
			t.Errorf("ServeFolder %q: %d, want %d", name, w.Code, status)
		}
	}
	if page := body(t, get(t, h, "GET", "/a")); !strings.Contains(page, `href="/a/b.txt"`) {
		t.Errorf("the page of a links b.txt elsewhere:\n%s", page)
	}
}

var assetRef = regexp.MustCompile(`(?:href|src)="(/\.meshfs/web/[^"]+)"`)

func TestAssets(t *testing.T) {
	dir := t.TempDir()
	put(t, dir, map[string]string{"m.ply/m.glb": "glb", "m.ply/header.json": "{}"})
	h := newHandler(t, dir)
	page := body(t, get(t, h, "GET", "/m.ply"))
	refs := assetRef.FindAllStringSubmatch(page, -1)
	types := map[string]string{}
	for _, m := range refs {
		res := get(t, h, "GET", m[1])
		b := body(t, res)
		if res.StatusCode != 200 || len(b) == 0 {
			t.Fatalf("GET %s: %d", m[1], res.StatusCode)
		}
		if cc := res.Header.Get("Cache-Control"); !strings.Contains(cc, "immutable") {
			t.Errorf("GET %s: Cache-Control %q", m[1], cc)
		}
		types[filepath.Ext(strings.Split(m[1], "?")[0])] = strings.Split(res.Header.Get("Content-Type"), ";")[0]
		etag := res.Header.Get("ETag")
		if res := get(t, h, "GET", m[1], "If-None-Match", etag); res.StatusCode != 304 {
			t.Errorf("GET %s If-None-Match %s: %d", m[1], etag, res.StatusCode)
		}
		// An old digest is answered, never cached for good.
		unversioned := strings.Split(m[1], "?")[0]
		if res := get(t, h, "GET", unversioned+"?v=0"); res.StatusCode != 200 || res.Header.Get("Cache-Control") != "no-cache" {
			t.Errorf("GET %s?v=0: %d %q", unversioned, res.StatusCode, res.Header.Get("Cache-Control"))
		}
	}
	for ext, want := range map[string]string{".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml"} {
		if types[ext] != want {
			t.Errorf("%s assets: Content-Type %q, want %q (of %q)", ext, types[ext], want, types)
		}
	}
	// style.css names its icons relative to itself.
	css := body(t, get(t, h, "GET", AssetPrefix+"style.css"))
	for _, m := range regexp.MustCompile(`url\(([a-z]+\.svg)\)`).FindAllStringSubmatch(css, -1) {
		if res := get(t, h, "GET", AssetPrefix+m[1]); res.StatusCode != 200 {
			t.Errorf("style.css names %s: %d", m[1], res.StatusCode)
		}
	}
	res := get(t, h, "GET", "/m.ply")
	etag := res.Header.Get("ETag")
	if res := get(t, h, "GET", "/m.ply/", "If-None-Match", etag); etag == "" || res.StatusCode != 304 {
		t.Errorf("page If-None-Match %q: %d", etag, res.StatusCode)
	}
}

func TestWantsHTML(t *testing.T) {
	for accept, want := range map[string]bool{
		"text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8": true,
		"TEXT/HTML":                 true,
		"":                          false,
		"*/*":                       false,
		"application/xml, text/xml": false,
		"text/htmlx":                false,
	} {
		r := httptest.NewRequest("GET", "/", nil)
		if accept != "" {
			r.Header.Set("Accept", accept)
		}
		if got := WantsHTML(r); got != want {
			t.Errorf("Accept %q: WantsHTML %v, want %v", accept, got, want)
		}
	}
}

// countingTree counts the calls made of a tree.
type countingTree struct {
	vfs.Tree
	stats, readDirs, opens int
}

func (c *countingTree) Stat(ctx context.Context, name string) (vfs.Info, error) {
	c.stats++
	return c.Tree.Stat(ctx, name)
}

func (c *countingTree) ReadDir(ctx context.Context, name string) ([]vfs.Info, error) {
	c.readDirs++
	return c.Tree.ReadDir(ctx, name)
}

func (c *countingTree) Open(ctx context.Context, name string) (vfs.File, error) {
	c.opens++
	return c.Tree.Open(ctx, name)
}

// TestPageConvertsNothing: a page of 1 000 mesh folders and files asks the
// tree for the folder's Stat and ReadDir once each, and opens nothing: no
// output is converted, nor a child folder listed, to make it.
func TestPageConvertsNothing(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{}
	for i := range 500 {
		files[fmt.Sprintf("big/m%03d.ply/m%03d.glb", i, i)] = "glb"
		files[fmt.Sprintf("big/f%03d.txt", i)] = "x"
	}
	put(t, dir, files)
	tree, err := newDirTree(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer tree.root.Close()
	c := &countingTree{Tree: tree}
	res := get(t, New(c), "GET", "/big/")
	page := body(t, res)
	if res.StatusCode != 200 {
		t.Fatalf("%d %s", res.StatusCode, page)
	}
	if c.stats != 1 || c.readDirs != 1 || c.opens != 0 {
		t.Errorf("%d Stat, %d ReadDir, %d Open; want 1, 1, 0", c.stats, c.readDirs, c.opens)
	}
	if n := len(find(parse(t, page), "img", "src")); n != 500 {
		t.Errorf("%d thumbnails, want 500", n)
	}
}

// BenchmarkFolderPage makes the page of a folder of 500 mesh folders and
// 500 files.
func BenchmarkFolderPage(b *testing.B) {
	dir := b.TempDir()
	for i := range 500 {
		for _, p := range []string{fmt.Sprintf("m%03d.ply", i), fmt.Sprintf("f%03d.txt", i)} {
			if err := os.Mkdir(filepath.Join(dir, p), 0o755); err != nil {
				b.Fatal(err)
			}
		}
	}
	tree, err := newDirTree(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer tree.root.Close()
	h := New(tree)
	r := httptest.NewRequest("GET", "/", nil)
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != 200 {
			b.Fatal(w.Code)
		}
	}
}
