package source

import (
	"bytes"
	"path"
	"strings"

	"github.com/meshfs/meshfs/internal/archive"
)

// Nested archives (SetNested, --nested): an entry of an archive that is an
// archive by its first bytes is then a folder of its entries too, beneath
// its own path (/x/a.zip/b.zip/m/a.ply), read through the outer archive's
// reader of that entry: a stored one is a window of a window of the file,
// a deflated one inflated within the view's Limits (in memory up to
// MemInflate, else through checkpoints or SpillDir). Nesting stops
// MaxNesting archives below the archive file, and at an entry declaring
// more than MaxNested bytes (or the view's MaxInflate, if smaller): such
// an entry stays a plain file. An entry's version is still the archive
// file's, its inode number made of its whole path inside the file. A
// nested archive's listing is kept with its archive file's (for the
// file's version) but not across mounts (Keeper).

// MaxNesting is how many archives deep below an archive file nesting goes.
const MaxNesting = 4

// MaxNested is the largest entry opened as a nested archive.
const MaxNested = 256 << 20

// SetNested turns nesting on or off (off: nested archives are files).
func (v *Packed) SetNested(on bool) { v.nested.Store(on) }

// Nested reports whether nesting is on.
func (v *Packed) Nested() bool { return v.nested.Load() }

// descend moves w down into the archives nested in w.a that w.rel
// continues in (and, with into, into w.rel itself), while nesting is on.
func (v *Packed) descend(file string, w *where, into bool) {
	for v.nested.Load() && w.depth < MaxNesting && w.rel != "" {
		comps := strings.Split(w.rel, "/")
		last := len(comps) - 1
		if into {
			last++
		}
		moved := false
		for i := 1; i <= last && i <= len(comps); i++ {
			at := strings.Join(comps[:i], "/")
			e, ok := w.a.Lookup(at)
			if !ok {
				return
			}
			if e.IsDir() {
				continue
			}
			inner, err := v.nestedArchive(file, path.Join(w.pre, at), w, e)
			if inner == nil {
				return
			}
			w.a, w.err, w.pre, w.rel = inner, err, path.Join(w.pre, at), strings.Join(comps[i:], "/")
			w.depth++
			moved = true
			break
		}
		if !moved {
			return
		}
	}
}

// nestedKey is the key of a nested archive's listing (Packed.open): the
// archive file's path and the nested archive's path in it.
func nestedKey(file, full string) string { return file + "\x00" + full }

// nestedArchive lists the entry e of w.a, at full inside the archive file
// file, as an archive: nil when it is none, too big, or cannot be opened.
func (v *Packed) nestedArchive(file, full string, w *where, e *archive.Entry) (*archive.Archive, error) {
	if e.Size > v.maxNested() || e.Size < 4 {
		return nil, nil
	}
	k := nestedKey(file, full)
	pk := v.slot(k, w.read.Ident, func() *packed { return &packed{read: w.read, fi: w.afi} })
	v.mu.Lock()
	limits := v.limits
	v.mu.Unlock()
	pk.once.Do(func() {
		defer v.charge(k, pk)
		head, err := w.a.Head(e, 4)
		if err != nil || !archive.Sniff(head) {
			return
		}
		r, err := w.a.Open(e)
		if err != nil {
			// A folder of nothing, its error.txt saying why.
			pk.a, _ = archive.Open(bytes.NewReader(nil), 0, file+"/"+full, limits)
			pk.err = err
			return
		}
		// The entry's reader stays open with the listing.
		v.Listed.Add(1)
		pk.a, pk.err = archive.Open(r, r.Size(), file+"/"+full, limits)
	})
	return pk.a, pk.err
}

// Descends reports whether the archive at p, a path inside an archive, is
// shown as a folder: nesting is on, it lies less than MaxNesting archives
// deep, it is no bigger than MaxNested (nor the view's MaxInflate) and an
// archive by its first bytes. It lists nothing: the listing waits for the
// folder's.
func (v *Packed) Descends(p string) bool {
	if !v.nested.Load() {
		return false
	}
	w, ok := v.locate(p, false)
	if !ok || w.rel == "" || w.depth >= MaxNesting {
		return false
	}
	e, found := w.a.Lookup(w.rel)
	if !found || e.IsDir() || e.Size < 4 || e.Size > v.maxNested() {
		return false
	}
	head, err := w.a.Head(e, 4)
	return err == nil && archive.Sniff(head)
}

// maxNested is the largest entry opened as a nested archive.
func (v *Packed) maxNested() int64 {
	if v.limits.MaxInflate > 0 {
		return min(MaxNested, v.limits.MaxInflate)
	}
	return MaxNested
}
