package vfs

import (
	"context"
	"errors"
	"io/fs"
	"syscall"

	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/internal/source"
	"github.com/meshfs/meshfs/internal/store"
	"github.com/meshfs/meshfs/internal/walk"
)

// What an entry of a source folder shows as is decided here, once, for
// every door: the tree's Stat, ReadDir and Open, and the mount's LOOKUP
// and READDIR (package fs), which keeps kernel state over the answer.

// SourceKind is what an entry of a source folder shows as.
type SourceKind uint8

const (
	SourceFolder  SourceKind = iota + 1 // a folder
	SourceArchive                       // an archive: a folder of its tree
	SourceMesh                          // a mesh or model: a folder of its outputs
	SourceLink                          // a symbolic link, shown as it is
	SourceFile                          // a file passed through
	SourcePNG                           // a texture's PNG
	SourceText                          // an error text known now (Text)
)

// A SourceEntry is what the entry of a source folder shows as now.
type SourceEntry struct {
	Kind SourceKind
	// Stat is the source's (a PNG's and a texture error's: the
	// texture's; an archive's error.txt: the archive's), a mesh's
	// permissions narrowed by the files its outputs are made from as far
	// as they are known (Narrow); At is when it was taken.
	Stat syscall.Stat_t
	At   Moment
	// Path is where the source is read from (a PNG's: the texture's),
	// Packed set inside an archive.
	Path   string
	Packed bool
	// Mesh is a mesh's, as the store converts it (store.NewMesh).
	Mesh *outputs.Mesh
	// Text is an error text's bytes: a texture's NAME.EXT.error.txt once
	// its PNG failed, an archive's error.txt (Folder.ErrorText).
	Text []byte
}

// A SourceID is what a node of a source entry stands for: what it shows
// as and the source file's identity (an archive's: ArchiveFile). A
// door that keeps nodes (the mount) reuses one for a name only while its
// SourceID is the same, so that a file replaced by another, or turned from
// a plain file into a mesh, gets a fresh node (and the kernel a fresh inode).
type SourceID struct {
	Kind SourceKind
	source.File
}

// ID is e's SourceID.
func (e *SourceEntry) ID() SourceID {
	if e.Kind == SourceArchive {
		return SourceID{e.Kind, ArchiveFile(&e.Stat)}
	}
	return SourceID{e.Kind, source.FromStat(&e.Stat).File}
}

// SourceLookup decides what the entry name of source folder d shows as now
// (Folder's rules; a name the root keeps for the mount,
// MetaName, is the caller's): fs.ErrNotExist, wrapped, for a name not
// shown.
func (t *FS) SourceLookup(d *Folder, name string) (SourceEntry, error) {
	var e SourceEntry
	e.At = d.Now()
	if err := d.Lstat(name, &e.Stat, e.At); err != nil {
		e.Path, e.Packed = d.Path(name)
		if !errors.Is(err, syscall.ENOENT) {
			return e, err
		} else if src := PNGSource(name); src != "" {
			return t.pngSource(d, src)
		} else if src := ErrorSource(name); src != "" {
			return t.textureError(d, src)
		} else if b := d.ErrorText(); b != nil && name == outputs.ErrorName {
			e.Kind, e.Text = SourceText, b
			return e, syscall.Stat(d.Abs, &e.Stat)
		}
		return e, err
	}
	return t.sourceEntry(d, name, e)
}

// listedEntry is what the listed entry le of source folder d shows as,
// from the listing's own stat: SourceLookup at the listing's moment, with
// no second stat. A PNG or error.txt (no stat of its own) is looked up.
func (t *FS) listedEntry(d *Folder, le Entry) (SourceEntry, error) {
	if le.Stat == nil {
		return t.SourceLookup(d, le.Name)
	}
	return t.sourceEntry(d, le.Name, SourceEntry{Stat: *le.Stat, At: le.At})
}

// sourceEntry is what the entry name of d, whose stat e holds, shows as.
func (t *FS) sourceEntry(d *Folder, name string, e SourceEntry) (SourceEntry, error) {
	e.Path, e.Packed = d.Path(name)
	k, format, _ := d.Kind(name, &e.Stat, d.InFolder())
	switch k {
	case 0:
		return e, fs.ErrNotExist
	case syscall.S_IFDIR:
		e.Kind = SourceFolder
	case KindArchive:
		e.Kind = SourceArchive
	case KindMesh:
		e.Kind, e.Mesh = SourceMesh, t.st.NewMesh(e.Path, format)
		Narrow(e.Mesh, &e.Stat, t.versions.Set(e.Path).Paths())
	case syscall.S_IFLNK:
		e.Kind = SourceLink
	default:
		e.Kind = SourceFile
	}
	return e, nil
}

// texture is an entry of kind k standing for the texture called src in
// d: its path and stat, fs.ErrNotExist when there is none.
func texture(d *Folder, src string, k SourceKind) (SourceEntry, error) {
	e := SourceEntry{Kind: k, At: d.Now()}
	e.Path, e.Packed = d.Path(src)
	if err := d.Lstat(src, &e.Stat, e.At); err != nil {
		return e, fs.ErrNotExist
	}
	return e, nil
}

// pngSource is the PNG of the texture called src in d: there while the
// texture is a regular file that decodes (walk.Sniffer.ShowsPNG) and its
// PNG is not known to fail.
func (t *FS) pngSource(d *Folder, src string) (SourceEntry, error) {
	e, err := texture(d, src, SourcePNG)
	if err == nil && (e.Stat.Mode&syscall.S_IFMT != syscall.S_IFREG || !t.sniffer.ShowsPNG(e.Path, &e.Stat) || t.st.TextureFailure(e.Path, &e.Stat) != "") {
		err = fs.ErrNotExist
	}
	return e, err
}

// textureError is NAME.EXT.error.txt of the texture called src in d: there
// once its PNG is known to fail, in the PNG's place.
func (t *FS) textureError(d *Folder, src string) (SourceEntry, error) {
	e, err := texture(d, src, SourceText)
	if err != nil {
		return e, err
	}
	msg := t.st.TextureFailure(e.Path, &e.Stat)
	if msg == "" {
		return e, fs.ErrNotExist
	}
	e.Text = []byte(msg + "\n")
	return e, nil
}

// Made is what a file made whole from source entry e holds now, for every
// door: a PNG's bytes (store.TexturePNG, the texture's stat then), an error
// text's (fixed when e was looked up, e's stat), and the version they are of.
func (t *FS) Made(ctx context.Context, e *SourceEntry) ([]byte, *syscall.Stat_t, source.Version, error) {
	if e.Kind == SourceText {
		return e.Text, &e.Stat, source.Version{Ident: source.FromStat(&e.Stat)}, nil
	}
	return t.st.TexturePNG(ctx, e.Path, source.FromStat(&e.Stat).File)
}

// List is the listing of source folder d (Folder.List), a
// texture's PNG known to fail listed as NAME.EXT.error.txt instead.
func (t *FS) List(d *Folder) ([]Entry, error) {
	if t.ahead != nil && d.parent != nil {
		defer d.parent.ListAhead(t.ahead, t.sniffer, d, d.name) // after its own sniffs
	}
	ents, err := d.List()
	if err != nil {
		return nil, err
	}
	for i, e := range ents {
		if src := PNGSource(e.Name); src != "" && e.Ino == 0 {
			if _, err := t.textureError(d, src); err == nil {
				ents[i].Name = src + TextureErrorSuffix
			}
		}
	}
	return ents, nil
}

// Parts are what the tree is made of that the mount (package fs) keeps its
// kernel state over: the store and the sniffer. A mount made on
// a tree gives the store its Events and Activity (Config.Store) and runs
// the watcher itself (Config.NoWatch).
func (t *FS) Parts() (*store.Store, *walk.Sniffer) {
	return t.st, t.sniffer
}

// SubFolder is the Folder of d's entry name, e (a SourceFolder or
// SourceArchive), as a door keeps it, unwatched: its first listing sniffs
// ahead of the walker in d (Config.Ahead).
func (t *FS) SubFolder(d *Folder, name string, e *SourceEntry) *Folder {
	f := t.newFolder(e.Path)
	f.parent, f.name = d, name
	return f
}
