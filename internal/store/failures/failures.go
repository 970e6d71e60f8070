// Package failures is every mesh a mount knows to be broken, and
// .meshfs/errors.txt, which lists them.
package failures

import (
	"errors"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/internal/source"
)

// List is every mesh the mount knows to be broken: its scan or a
// conversion failed, in this mount (a reader, a listing, the pre-warmer) or
// in an earlier one (the disk cache's records, found when the mesh is
// listed or looked at). A mesh not yet listed, scanned or converted is not
// in it. stats.json counts it and .meshfs/errors.txt prints it.
type List struct {
	mu sync.Mutex
	m  map[string]failureRec // by source path
	// still reports whether a source file is still the version that
	// failed.
	still func(path string, id source.Ident) bool
}

// New is an empty list; still reports whether the source file at path is
// still version id (a failure of another version is no longer listed).
func New(still func(path string, id source.Ident) bool) *List { return &List{still: still} }

type failureRec struct {
	id   source.Ident // the source file's version that failed
	scan bool         // the scan failed (else a conversion)
	msg  string
}

// Note records that source version v of the mesh at abs failed.
func (l *List) Note(abs string, v source.Version, scan bool, err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if r, ok := l.m[abs]; ok && r.id.Same(v.Ident) && (r.scan || !scan) {
		return
	}
	if l.m == nil {
		l.m = map[string]failureRec{}
	}
	l.m[abs] = failureRec{id: v.Ident, scan: scan, msg: err.Error()}
}

// Of returns the error recorded for version id of the file at abs, if
// any.
func (l *List) Of(abs string, id source.Ident) (msg string, ok bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	r, ok := l.m[abs]
	if !ok || !r.id.Same(id) {
		return "", false
	}
	return r.msg, true
}

// Failure is one line of the list: the mesh's path relative to the
// source, whether its scan failed (else a conversion), and the error.
type Failure struct {
	Rel  string
	Scan bool
	Msg  string
}

// Current returns the failures of the source versions still in place,
// sorted by path, dropping those whose source changed or went away.
func (l *List) Current(root string) []Failure {
	l.mu.Lock()
	recs := make(map[string]failureRec, len(l.m))
	for k, v := range l.m {
		recs[k] = v
	}
	l.mu.Unlock()
	var out []Failure
	for abs, r := range recs {
		if !l.still(abs, r.id) {
			l.mu.Lock()
			if l.m[abs] == r {
				delete(l.m, abs)
			}
			l.mu.Unlock()
			continue
		}
		rel, err := filepath.Rel(root, abs)
		if err != nil {
			rel = abs
		}
		out = append(out, Failure{Rel: filepath.ToSlash(rel), Scan: r.scan, Msg: r.msg})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Rel < out[j].Rel })
	return out
}

// ErrorsText is .meshfs/errors.txt: one line per broken mesh, its path
// relative to the source, then the error (outputs.ErrorLine).
func ErrorsText(root string, list []Failure) []byte {
	var b strings.Builder
	for _, f := range list {
		b.WriteString(outputs.ErrorLine(f.Rel, filepath.Join(root, filepath.FromSlash(f.Rel)), errors.New(f.Msg)))
		b.WriteByte('\n')
	}
	return []byte(b.String())
}

// ConvError marks a conversion's failure among a store's errors (Content,
// TexturePNG). It does not unwrap: a reader gets EIO for it even when its
// cause is, say, a missing sibling file.
type ConvError struct{ Err error }

func (e *ConvError) Error() string { return e.Err.Error() }
