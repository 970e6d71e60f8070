// Package serve is the HTTP and WebDAV door to a vfs.Tree: `meshfs serve`,
// the tree the mount shows, for Windows Explorer (map a network drive),
// macOS Finder (connect to server), rclone, davfs2 and browsers. It knows
// the tree only through the vfs.Tree interface: nothing of FUSE, the store
// or formats.
//
// The door is read-only WebDAV class 1: OPTIONS, GET, HEAD and PROPFIND of
// depth 0 or 1 (infinity is refused with 403 and propfind-finite-depth).
// PUT, DELETE, MKCOL, COPY, MOVE and PROPPATCH are refused with 403; LOCK,
// UNLOCK and every other method with 405. No LOCK is faked: a class-1
// server is what makes Finder mount read-only, and Explorer maps it the
// same way (DESIGN.md, Serve).
//
// A file's GET is HTTP done whole by net/http.ServeContent: the exact
// Content-Length, a strong ETag made from Info.Version, Last-Modified,
// Range (206) and If-Range, If-None-Match and If-Modified-Since (304), and
// a Cache-Control that lets a shared cache keep it for MaxAge. The ETag,
// length and bytes are those of one opened version (vfs.File.Info).
//
// A folder's GET or HEAD that asks for HTML (browse.WantsHTML), and
// everything under browse.AssetPrefix, is the browser's view (package
// serve/browse); any other folder GET gets the folder's listing as plain
// text (serveListing).
//
// Without Auth a client may be any user of the machine (or of the network
// the operator opened the door to): the door serves the tree as the
// "other" class may read it (vfs.Others), so that no one reads through it
// what the source's modes keep from them. With Auth, an admitted client is
// one the operator trusts with the daemon user's view.
//
// A request holds one of Queue slots while the tree resolves it (the Stat,
// Open or listing that may convert: a warm one for microseconds, a cold
// one for its conversion), and none while its body is sent; when every
// slot is taken it gets 503 with Retry-After. Each tree call carries the
// request's context, so a client that goes away stops waiting at once and
// frees its slot; the conversion itself is the tree's (shared by all who
// asked, within the tree's limits).
//
// URL paths become tree names by one rule (treeName): an element "." or
// "..", a backslash or a NUL anywhere (after percent-decoding) is 400; the
// tree checks again. Only folders and regular files are shown (a symbolic
// link or a special file is neither listed nor served).
package serve

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/meshfs/meshfs/serve/browse"
	"github.com/meshfs/meshfs/vfs"
)

// DefaultQueue is Config.Queue's default: enough for 32 clients each
// waiting on a cold output, twice over.
const DefaultQueue = 64

// DefaultMaxAge is Config.MaxAge's default: as long as the mount lets the
// kernel trust a size (its attribute timeout while watched).
const DefaultMaxAge = time.Minute

// retryAfter is the Retry-After of a 503, in seconds.
const retryAfter = "2"

// Config is what one door is made of.
type Config struct {
	// Queue is how many requests may be in the tree's hands at once
	// (0: DefaultQueue); one more gets 503.
	Queue int
	// MaxAge is how long a cache may reuse a file's response without
	// asking again (0: DefaultMaxAge; negative: never, no-cache).
	MaxAge time.Duration
	// Auth, when set, is asked of every request.
	Auth *Auth
	// TLS says the door is reached over TLS: only then is basic auth
	// accepted.
	TLS bool
	// Log receives a line per failed request that is the server's fault
	// (nil: discard).
	Log *log.Logger
}

// Handler is the door to one tree.
type Handler struct {
	tree   vfs.Tree
	cfg    Config
	browse *browse.Handler
	// slots holds a token per request in the tree's hands.
	slots chan struct{}
	log   *log.Logger
}

// New returns the door to t.
func New(t vfs.Tree, cfg Config) *Handler {
	if cfg.Queue <= 0 {
		cfg.Queue = DefaultQueue
	}
	if cfg.MaxAge == 0 {
		cfg.MaxAge = DefaultMaxAge
	}
	lg := cfg.Log
	if lg == nil {
		lg = log.New(io.Discard, "", 0)
	}
	return &Handler{tree: t, cfg: cfg, browse: browse.New(t), slots: make(chan struct{}, cfg.Queue), log: lg}
}

// Allowed is the Allow header of every resource.
const Allowed = "OPTIONS, GET, HEAD, PROPFIND"

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if h.cfg.Auth != nil && !h.cfg.Auth.admits(r, h.cfg.TLS) {
		h.cfg.Auth.challenge(w, h.cfg.TLS)
		http.Error(w, "authentication required", http.StatusUnauthorized)
		return
	}
	switch r.Method {
	case http.MethodOptions:
		hd := w.Header()
		hd.Set("DAV", "1")
		hd.Set("MS-Author-Via", "DAV")
		hd.Set("Allow", Allowed)
		hd.Set("Content-Length", "0")
		w.WriteHeader(http.StatusOK)
		return
	case http.MethodGet, http.MethodHead, "PROPFIND":
	case http.MethodPut, http.MethodDelete, "MKCOL", "COPY", "MOVE", "PROPPATCH":
		http.Error(w, "meshfs serve is read-only", http.StatusForbidden)
		return
	default: // LOCK, UNLOCK, POST, ...: not methods of a class-1 read-only server
		w.Header().Set("Allow", Allowed)
		http.Error(w, r.Method+" is not supported (read-only WebDAV class 1)", http.StatusMethodNotAllowed)
		return
	}
	if strings.HasPrefix(r.URL.Path, browse.AssetPrefix) {
		h.browse.ServeHTTP(w, r)
		return
	}
	name, ok := treeName(r.URL.Path)
	if !ok {
		http.Error(w, "invalid path", http.StatusBadRequest)
		return
	}
	if r.Method == "PROPFIND" {
		h.propfind(w, r, h.treeFor(), name)
		return
	}
	h.get(w, r, h.treeFor(), name)
}

// treeFor is the tree a request is answered from: without Auth, the
// other class's view (a fresh vfs.Others, whose folder checks last the
// request).
func (h *Handler) treeFor() vfs.Tree {
	if h.cfg.Auth == nil {
		return vfs.Others(h.tree)
	}
	return h.tree
}

// treeName is the tree name of the URL path p (already percent-decoded):
// p without its leading slash, empty elements (a trailing slash, doubled
// slashes) dropped; false when an element is "." or "..", or p holds a
// backslash or a NUL, or does not start with "/".
func treeName(p string) (string, bool) {
	if !strings.HasPrefix(p, "/") || strings.ContainsAny(p, "\\\x00") {
		return "", false
	}
	elems := strings.Split(p, "/")
	out := elems[:0]
	for _, e := range elems {
		switch e {
		case "":
		case ".", "..":
			return "", false
		default:
			out = append(out, e)
		}
	}
	return strings.Join(out, "/"), true
}

// acquire takes a slot, or answers 503 and returns false.
func (h *Handler) acquire(w http.ResponseWriter) bool {
	select {
	case h.slots <- struct{}{}:
		return true
	default:
		w.Header().Set("Retry-After", retryAfter)
		http.Error(w, "busy: every conversion slot is taken, retry shortly", http.StatusServiceUnavailable)
		return false
	}
}

func (h *Handler) release() { <-h.slots }

// shown reports whether an entry of mode m is served: folders and
// regular files.
func shown(m fs.FileMode) bool { return m.IsDir() || m.IsRegular() }

// get answers a GET or HEAD of name.
func (h *Handler) get(w http.ResponseWriter, r *http.Request, tree vfs.Tree, name string) {
	if !h.acquire(w) {
		return
	}
	held := true
	defer func() {
		if held {
			h.release()
		}
	}()
	ctx := r.Context()
	info, err := tree.Stat(ctx, name)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if info.IsDir() && browse.WantsHTML(r) {
		h.release()
		held = false
		h.browse.With(tree).ServeHTTP(w, r)
		return
	}
	if info.IsDir() {
		list, err := tree.ReadDir(ctx, name)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		h.release()
		held = false
		serveListing(w, r, list)
		return
	}
	if !info.Mode.IsRegular() {
		http.Error(w, "not a regular file", http.StatusForbidden)
		return
	}
	var content io.ReaderAt = noReads{}
	if r.Method == http.MethodGet {
		f, err := tree.Open(ctx, name)
		if err != nil {
			h.fail(w, r, err)
			return
		}
		defer f.Close()
		content, info = f, f.Info()
	}
	h.release()
	held = false
	h.fileHeaders(w, name, info)
	rd := &staleReader{r: io.NewSectionReader(content, 0, info.Size)}
	http.ServeContent(w, r, "", info.ModTime, rd)
	if rd.err != nil && ctx.Err() == nil {
		h.log.Printf("meshfs serve: GET /%s: %v", name, rd.err)
	}
}

// serveListing answers the GET or HEAD of a folder that does not ask for
// HTML (curl, a script, a WebDAV client) with its listing as plain text:
// each entry shown on a line of its own, its name percent-encoded (a line
// is one name, whatever bytes the name holds), a folder's ending in "/":
// references relative to the folder's URL with its trailing slash.
func serveListing(w http.ResponseWriter, r *http.Request, list []vfs.Info) {
	var b []byte
	for _, e := range list {
		if !shown(e.Mode) {
			continue
		}
		b = append(b, url.PathEscape(e.Name)...)
		if e.IsDir() {
			b = append(b, '/')
		}
		b = append(b, '\n')
	}
	hd := w.Header()
	hd.Set("Content-Type", "text/plain; charset=utf-8")
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("Cache-Control", "no-cache")
	hd.Add("Vary", "Accept") // a browser gets the page at the same URL
	http.ServeContent(w, r, "", time.Time{}, bytes.NewReader(b))
}

// fileHeaders sets the headers of a file's response, but for those
// ServeContent sets.
func (h *Handler) fileHeaders(w http.ResponseWriter, name string, info vfs.Info) {
	hd := w.Header()
	hd.Set("Content-Type", contentType(name))
	hd.Set("X-Content-Type-Options", "nosniff")
	hd.Set("ETag", etag(info))
	hd.Set("Cache-Control", h.cacheControl())
}

// cacheControl is a file response's Cache-Control: shared caches may keep
// it for MaxAge, then ask again (a 304 when unchanged); behind auth, only
// the client's own cache may.
func (h *Handler) cacheControl() string {
	if h.cfg.MaxAge < 0 {
		return "no-cache"
	}
	scope := "public"
	if h.cfg.Auth != nil {
		scope = "private"
	}
	return fmt.Sprintf("%s, max-age=%d", scope, int(h.cfg.MaxAge/time.Second))
}

// etag is the strong ETag of info's bytes: a digest of its Version (which
// may hold any byte).
func etag(info vfs.Info) string {
	sum := sha256.Sum256([]byte(info.Version))
	return `"` + hex.EncodeToString(sum[:16]) + `"`
}

// types are the content types of meshfs's outputs that mime does not know.
var types = map[string]string{
	".glb":  "model/gltf-binary",
	".gltf": "model/gltf+json",
	".obj":  "model/obj",
	".mtl":  "model/mtl",
	".json": "application/json",
	".txt":  "text/plain; charset=utf-8",
}

// contentType is the type of the file name, by its extension (never by
// its bytes: sniffing would read, and so convert).
func contentType(name string) string {
	ext := strings.ToLower(path.Ext(name))
	if t, ok := types[ext]; ok {
		return t
	}
	if t := mime.TypeByExtension(ext); t != "" {
		return t
	}
	return "application/octet-stream"
}

// fail answers a tree error, unless the client has gone.
func (h *Handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	if r.Context().Err() != nil {
		return // nobody to answer
	}
	code := browse.Status(err)
	if code == http.StatusServiceUnavailable {
		w.Header().Set("Retry-After", retryAfter)
	}
	if code == http.StatusInternalServerError {
		h.log.Printf("meshfs serve: %s %s: %v", r.Method, r.URL.Path, err)
	}
	http.Error(w, err.Error(), code)
}

// noReads is the content of a HEAD: its bytes are never read.
type noReads struct{}

func (noReads) ReadAt([]byte, int64) (int, error) {
	return 0, errors.New("serve: HEAD reads no bytes")
}

// staleReader keeps the first error of a read, for the log: once headers
// are sent the response can only be cut short.
type staleReader struct {
	r   *io.SectionReader
	err error
}

func (s *staleReader) Read(p []byte) (int, error) {
	n, err := s.r.Read(p)
	if err != nil && err != io.EOF && s.err == nil {
		s.err = err
	}
	return n, err
}

func (s *staleReader) Seek(off int64, whence int) (int64, error) { return s.r.Seek(off, whence) }
