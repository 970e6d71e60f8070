package serve

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"sync"
	"time"

	"golang.org/x/net/webdav"

	"github.com/meshfs/meshfs/vfs"
)

// PROPFIND is golang.org/x/net/webdav's, over a davFS made for the one
// request. webdav's walk asks of each entry a Stat, then opens it and
// asks its Stat again (and would read 512 bytes of a file whose content
// type its extension does not tell): davFS answers all of them from what
// the request has learnt, so that each entry costs the tree nothing
// beyond the folder's ReadDir when the listing gave its size, and one
// Stat (which converts, as stat in the mount does) when only a conversion
// can tell it. Its files are never read: the content type and the ETag
// come from davInfo.

// propfind answers a PROPFIND of name.
func (h *Handler) propfind(w http.ResponseWriter, r *http.Request, tree vfs.Tree, name string) {
	switch r.Header.Get("Depth") {
	case "0", "1":
	default: // "infinity", or none, which means infinity (RFC 4918, 9.1)
		w.Header().Set("Content-Type", `application/xml; charset="utf-8"`)
		w.WriteHeader(http.StatusForbidden)
		io.WriteString(w, `<?xml version="1.0" encoding="utf-8"?>`+"\n"+
			`<D:error xmlns:D="DAV:"><D:propfind-finite-depth/></D:error>`+"\n")
		return
	}
	if !h.acquire(w) {
		return
	}
	defer h.release()
	d := &davFS{tree: tree, infos: map[string]vfs.Info{}}
	info, err := d.stat(r.Context(), name)
	if err == nil && !shown(info.Mode) {
		err = fmt.Errorf("%s: not a folder or a regular file: %w", name, fs.ErrNotExist)
	}
	if err == nil && info.IsDir() && r.Header.Get("Depth") == "1" {
		// Listed before webdav writes its 207: an error after that could
		// only cut the multistatus short.
		d.listing, err = tree.ReadDir(r.Context(), name)
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	dav := &webdav.Handler{FileSystem: d, LockSystem: noLocks{}, Logger: func(r *http.Request, err error) {
		if err != nil && r.Context().Err() == nil {
			h.log.Printf("meshfs serve: PROPFIND %s: %v", r.URL.Path, err)
		}
	}}
	dav.ServeHTTP(w, r)
}

// davFS is the tree as one PROPFIND sees it: what it learns of a name is
// kept for the rest of the request.
type davFS struct {
	tree vfs.Tree
	mu   sync.Mutex
	// infos are the entries known so far, by tree name.
	infos map[string]vfs.Info
	// listing is the asked folder's, for a depth-1 PROPFIND.
	listing []vfs.Info
}

// stat is the Info of name: known, or asked of the tree once.
func (d *davFS) stat(ctx context.Context, name string) (vfs.Info, error) {
	d.mu.Lock()
	info, ok := d.infos[name]
	d.mu.Unlock()
	if ok {
		return info, nil
	}
	info, err := d.tree.Stat(ctx, name)
	if err != nil {
		return vfs.Info{}, err
	}
	d.mu.Lock()
	d.infos[name] = info
	d.mu.Unlock()
	return info, nil
}

// name is the tree name of webdav's path p.
func davName(p string) (string, error) {
	n, ok := treeName(p)
	if !ok {
		return "", &fs.PathError{Op: "stat", Path: p, Err: fs.ErrInvalid}
	}
	return n, nil
}

func (d *davFS) Stat(ctx context.Context, p string) (os.FileInfo, error) {
	name, err := davName(p)
	if err != nil {
		return nil, err
	}
	info, err := d.stat(ctx, name)
	if err != nil {
		return nil, asPathError("stat", p, err)
	}
	return davInfo{info}, nil
}

func (d *davFS) OpenFile(ctx context.Context, p string, flag int, _ os.FileMode) (webdav.File, error) {
	if flag&(os.O_WRONLY|os.O_RDWR|os.O_CREATE|os.O_TRUNC|os.O_APPEND) != 0 {
		return nil, &fs.PathError{Op: "open", Path: p, Err: fs.ErrPermission}
	}
	name, err := davName(p)
	if err != nil {
		return nil, err
	}
	return &davFile{d: d, ctx: ctx, name: name, p: p}, nil
}

func (d *davFS) Mkdir(context.Context, string, os.FileMode) error { return fs.ErrPermission }
func (d *davFS) RemoveAll(context.Context, string) error          { return fs.ErrPermission }
func (d *davFS) Rename(context.Context, string, string) error     { return fs.ErrPermission }

// asPathError is err as webdav wants it: an *fs.PathError (so that a
// broken entry is left out of a listing rather than ending it).
func asPathError(op, p string, err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return err
	}
	return &fs.PathError{Op: op, Path: p, Err: err}
}

// davFile is a name webdav opened: it lists a folder and describes an
// entry, and is never read.
type davFile struct {
	d    *davFS
	ctx  context.Context
	name string
	p    string
}

func (f *davFile) Close() error { return nil }

func (f *davFile) Stat() (fs.FileInfo, error) { return f.d.Stat(f.ctx, f.p) }

// Readdir lists the folder: each entry shown (a folder or a regular
// file) is remembered when the listing knows its size.
func (f *davFile) Readdir(int) ([]fs.FileInfo, error) {
	infos := f.d.listing // webdav lists only the folder asked, once
	if infos == nil {
		var err error
		if infos, err = f.d.tree.ReadDir(f.ctx, f.name); err != nil {
			return nil, asPathError("readdir", f.p, err)
		}
	}
	out := make([]fs.FileInfo, 0, len(infos))
	f.d.mu.Lock()
	defer f.d.mu.Unlock()
	for _, i := range infos {
		if !shown(i.Mode) {
			continue
		}
		if i.Size >= 0 {
			child := i.Name
			if f.name != "" {
				child = f.name + "/" + i.Name
			}
			f.d.infos[child] = i
		}
		out = append(out, davInfo{i})
	}
	return out, nil
}

var errNoRead = errors.New("serve: a PROPFIND reads no bytes")

func (f *davFile) Read([]byte) (int, error)       { return 0, errNoRead }
func (f *davFile) Seek(int64, int) (int64, error) { return 0, errNoRead }
func (f *davFile) Write([]byte) (int, error)      { return 0, fs.ErrPermission }

// davInfo is an entry as webdav's properties read it.
type davInfo struct{ i vfs.Info }

func (v davInfo) Name() string       { return v.i.Name }
func (v davInfo) Size() int64        { return v.i.Size }
func (v davInfo) Mode() fs.FileMode  { return v.i.Mode }
func (v davInfo) ModTime() time.Time { return v.i.ModTime }
func (v davInfo) IsDir() bool        { return v.i.IsDir() }
func (v davInfo) Sys() any           { return nil }

// ContentType is the file's type by its name (webdav.ContentTyper).
func (v davInfo) ContentType(context.Context) (string, error) {
	return contentType(v.i.Name), nil
}

// ETag is the file's ETag, the same as its GET's (webdav.ETager).
func (v davInfo) ETag(context.Context) (string, error) { return etag(v.i), nil }

// noLocks is the lock system of a server that takes none: webdav's
// handler asks for one, and PROPFIND never uses it.
type noLocks struct{}

var errNoLocks = errors.New("serve: read-only, no locks")

func (noLocks) Confirm(time.Time, string, string, ...webdav.Condition) (func(), error) {
	return nil, webdav.ErrConfirmationFailed
}
func (noLocks) Create(time.Time, webdav.LockDetails) (string, error) { return "", errNoLocks }
func (noLocks) Refresh(time.Time, string, time.Duration) (webdav.LockDetails, error) {
	return webdav.LockDetails{}, errNoLocks
}
func (noLocks) Unlock(time.Time, string) error { return errNoLocks }
