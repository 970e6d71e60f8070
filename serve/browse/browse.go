// Package browse is the browser's view of a vfs.Tree: an HTML page for
// each folder, and for a mesh or model folder an interactive 3D view of its
// NAME.glb, its header.json and download links. Package serve routes to it
// the GET and HEAD of a folder (ServeFolder, with the tree name serve made
// of the URL), and the requests for its assets under AssetPrefix
// (ServeHTTP, which also answers folders by itself); it serves no file's
// bytes but its own
// assets (scripts, style, icons, embedded in the binary): pages link each
// file by its URL ("/" + its tree name, each element percent-encoded), and
// serve answers those.
//
// Pages are plain HTML made with html/template: every name is escaped,
// links are built from names only by percent-encoding, and no script or
// handler is written inline. Each page is sent with a Content-Security-Policy
// that lets it load scripts, style, images and data from its own origin
// only, so a page works offline and nothing in it reaches elsewhere.
//
// A folder page lists folders first, then files, each group in the tree's
// order (by name), with the sizes ReadDir tells (a size only a conversion
// can tell is left blank: a listing converts nothing). A folder whose name
// a decoder claims (a mesh or model file's folder) shows the thumbnail
// NAME.preview.png of its output base name NAME, and a .png file shows
// itself; images load lazily, and one that fails to load gives way to an
// icon. A folder holding the file NAME.glb, NAME being the folder's output
// base name (the decoder's, else the name up to its last dot), is a mesh
// or model folder: its page draws NAME.glb (and on request its other .glb
// files) with the WebGL viewer in web/viewer.js, and shows header.json
// and error.txt when the folder holds them.
package browse

import (
	"bytes"
	"context"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/meshfs/meshfs/decode/formats"
	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/vfs"
)

// AssetPrefix is the URL path under which the handler serves its assets.
// The tree shows no name starting with "." at its root that could clash:
// .meshfs is the mount's own folder.
const AssetPrefix = "/.meshfs/web/"

// CSP is the Content-Security-Policy of every page: scripts, style, images
// and fetches from the page's own origin only (images also from blob: URLs,
// the viewer's textures), nothing inline, no frames, forms or plugins.
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' blob:; " +
	"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

//go:embed web
var webFiles embed.FS

// Handler answers folder pages of one tree and serves the pages' assets.
type Handler struct {
	tree   vfs.Tree
	page   *template.Template
	assets map[string]asset
}

type asset struct {
	body  []byte
	ctype string
	etag  string
}

// New returns the handler of t's pages.
func New(t vfs.Tree) *Handler {
	h := &Handler{tree: t, assets: map[string]asset{}}
	entries, err := fs.ReadDir(webFiles, "web")
	if err != nil {
		panic(err) // the embedded folder is part of the binary
	}
	for _, e := range entries {
		b, err := webFiles.ReadFile("web/" + e.Name())
		if err != nil {
			panic(err)
		}
		sum := sha256.Sum256(b)
		ctype := mime.TypeByExtension(path.Ext(e.Name()))
		if ctype == "" {
			ctype = "application/octet-stream"
		}
		h.assets[e.Name()] = asset{body: b, ctype: ctype, etag: `"` + hex.EncodeToString(sum[:8]) + `"`}
	}
	h.page = template.Must(template.New("page.html").Funcs(template.FuncMap{
		"asset": h.assetURL,
	}).ParseFS(webFiles, "web/page.html"))
	return h
}

// With is h over the tree t: the same page and assets, for a caller that
// answers each request from a view of its own (serve's vfs.Others).
func (h *Handler) With(t vfs.Tree) *Handler {
	c := *h
	c.tree = t
	return &c
}

// assetURL is the URL of the asset name, carrying its digest so that a
// cache may keep it for good.
func (h *Handler) assetURL(name string) string {
	a, ok := h.assets[name]
	if !ok {
		panic("browse: no asset " + name) // a template names only embedded files
	}
	return AssetPrefix + name + "?v=" + strings.Trim(a.etag, `"`)
}

// WantsHTML reports whether r asks for an HTML page (a browser's
// navigation: its Accept header names text/html), rather than a WebDAV
// client's or a download's bytes.
func WantsHTML(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept") {
		for _, part := range strings.Split(v, ",") {
			mt, _, _ := strings.Cut(part, ";")
			if strings.EqualFold(strings.TrimSpace(mt), "text/html") {
				return true
			}
		}
	}
	return false
}

// ServeHTTP answers a GET or HEAD of AssetPrefix+NAME with that asset, and
// of a folder's URL, with or without its trailing slash, with the folder's
// page (ServeFolder). A name that is no folder is 404, as is one the tree
// does not have; an invalid name (a ".." element, a backslash, a NUL) is
// 400.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !allowed(w, r) {
		return
	}
	p := r.URL.Path
	if strings.HasPrefix(p, AssetPrefix) {
		h.serveAsset(w, r, strings.TrimPrefix(p, AssetPrefix))
		return
	}
	name, ok := strings.CutPrefix(p, "/")
	if !ok {
		http.Error(w, "browse: the path does not start with /", http.StatusBadRequest)
		return
	}
	h.ServeFolder(w, r, strings.TrimSuffix(name, "/"))
}

// ServeFolder answers a GET or HEAD with the page of the folder the tree
// calls name, for a caller that has made the tree name of r's URL itself.
func (h *Handler) ServeFolder(w http.ResponseWriter, r *http.Request, name string) {
	if !allowed(w, r) {
		return
	}
	page, err := h.render(r.Context(), name)
	if err != nil {
		if r.Context().Err() != nil {
			return // the client went away
		}
		http.Error(w, "browse: "+err.Error(), Status(err))
		return
	}
	sum := sha256.Sum256(page)
	hd := w.Header()
	hd.Set("Content-Type", "text/html; charset=utf-8")
	hd.Set("Content-Security-Policy", CSP)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Referrer-Policy", "no-referrer")
	hd.Set("Cache-Control", "no-cache")
	hd.Add("Vary", "Accept")
	hd.Set("ETag", `"`+hex.EncodeToString(sum[:8])+`"`)
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(page))
}

// allowed answers a request other than GET or HEAD with 405 and returns
// false.
func allowed(w http.ResponseWriter, r *http.Request) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		return true
	}
	w.Header().Set("Allow", "GET, HEAD")
	http.Error(w, "browse: method not allowed", http.StatusMethodNotAllowed)
	return false
}

func (h *Handler) serveAsset(w http.ResponseWriter, r *http.Request, name string) {
	a, ok := h.assets[name]
	if !ok {
		http.Error(w, "browse: no such asset", http.StatusNotFound)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", a.ctype)
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("ETag", a.etag)
	if r.URL.Query().Get("v") == strings.Trim(a.etag, `"`) {
		hd.Set("Cache-Control", "public, max-age=31536000, immutable")
	} else {
		hd.Set("Cache-Control", "no-cache")
	}
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(a.body))
}

// Status is the HTTP status of a tree error, for every answer of the
// door (package serve's and these pages'): 404 for a name the tree does
// not have, 403 for one the viewer may not reach, 400 for an invalid name,
// 503 for a source that changed under the request (asked again, it is the
// new version), 500 for anything else.
func Status(err error) int {
	switch {
	case errors.Is(err, fs.ErrInvalid):
		return http.StatusBadRequest
	case errors.Is(err, fs.ErrNotExist):
		return http.StatusNotFound
	case errors.Is(err, fs.ErrPermission):
		return http.StatusForbidden
	case errors.Is(err, vfs.ErrStale):
		return http.StatusServiceUnavailable
	}
	return http.StatusInternalServerError
}

// errNotFolder is the error of a page asked for a file.
var errNotFolder = fmt.Errorf("not a folder: %w", fs.ErrNotExist)

// pageData is what page.html shows.
type pageData struct {
	Title   string
	Crumbs  []link // the root first, the folder itself last
	Parent  string // the parent folder's URL, "" at the root
	Folders []row
	Files   []row
	Viewer  *viewer
}

type link struct {
	Name, Href string
}

type row struct {
	Name, Href string
	Size       string // "" when unknown or a folder
	Bytes      int64  // exact size, -1 when unknown
	Modified   string
	Thumb      string // an image's URL, "" for none
	Kind       string // "folder", "mesh" (a folder with a thumbnail) or "file"
}

type viewer struct {
	Name   string // the folder's output base name
	GLBs   []link // the main .glb first
	Header string // header.json's URL, "" when absent
	Error  string // error.txt's URL, "" when absent
}

// render makes the page of the folder name.
func (h *Handler) render(ctx context.Context, name string) ([]byte, error) {
	info, err := h.tree.Stat(ctx, name)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		return nil, fmt.Errorf("%s: %w", displayName(name), errNotFolder)
	}
	list, err := h.tree.ReadDir(ctx, name)
	if err != nil {
		return nil, err
	}
	d := pageData{Title: displayName(name), Crumbs: crumbs(name)}
	if len(d.Crumbs) > 1 {
		d.Parent = d.Crumbs[len(d.Crumbs)-2].Href
	}
	base := outputBase(info.Name)
	var v viewer
	for _, e := range list {
		href := urlOf(join(name, e.Name))
		r := row{Name: e.Name, Href: href, Bytes: -1, Modified: modified(e.ModTime)}
		if e.IsDir() {
			r.Kind = "folder"
			if b, ok := claimed(e.Name); ok {
				r.Kind, r.Thumb = "mesh", href+"/"+escape(b+".preview.png")
			}
			d.Folders = append(d.Folders, r)
			continue
		}
		r.Kind = "file"
		if e.Size >= 0 {
			r.Bytes, r.Size = e.Size, humanSize(e.Size)
		}
		if strings.EqualFold(path.Ext(e.Name), outputs.PNGSuffix) {
			r.Thumb = href
		}
		d.Files = append(d.Files, r)
		switch {
		case e.Name == base+".glb":
			v.GLBs = append([]link{{e.Name, href}}, v.GLBs...)
			v.Name = base
		case strings.HasSuffix(e.Name, ".glb") && strings.HasPrefix(e.Name, base+"."):
			v.GLBs = append(v.GLBs, link{e.Name, href})
		case e.Name == outputs.HeaderName:
			v.Header = href
		case e.Name == "error.txt":
			v.Error = href
		}
	}
	if v.Name != "" {
		d.Viewer = &v
	}
	var buf bytes.Buffer
	if err := h.page.Execute(&buf, d); err != nil {
		return nil, fmt.Errorf("%s: page: %w", displayName(name), err)
	}
	return buf.Bytes(), nil
}

// claimed reports whether a decoder claims the file name, and the output
// base name it gives it.
func claimed(name string) (string, bool) {
	for _, f := range formats.All {
		if b := f.StripExt(name); b != name && b != "" {
			return b, true
		}
	}
	return "", false
}

// outputBase is the output base name of a folder called name: its
// decoder's, else the name up to its last dot.
func outputBase(name string) string {
	if b, ok := claimed(name); ok {
		return b
	}
	if i := strings.LastIndexByte(name, '.'); i > 0 {
		return name[:i]
	}
	return name
}

func join(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// escape percent-encodes one path element.
func escape(elem string) string { return url.PathEscape(elem) }

// urlOf is the URL path of the tree name.
func urlOf(name string) string {
	if name == "" {
		return "/"
	}
	parts := strings.Split(name, "/")
	for i, p := range parts {
		parts[i] = escape(p)
	}
	return "/" + strings.Join(parts, "/")
}

func displayName(name string) string { return "/" + name }

// crumbs links the root and each folder down to name.
func crumbs(name string) []link {
	c := []link{{"meshfs", "/"}}
	if name == "" {
		return c
	}
	parts := strings.Split(name, "/")
	for i, p := range parts {
		c = append(c, link{p, urlOf(strings.Join(parts[:i+1], "/")) + "/"})
	}
	return c
}

func modified(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04")
}

// humanSize is n bytes in the largest binary unit that keeps it ≥ 1.
func humanSize(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
