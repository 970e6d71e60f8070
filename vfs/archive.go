package vfs

import (
	"hash/fnv"
	"io/fs"
	"syscall"

	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/internal/source"
)

// Archives: a regular file that is an archive by its first bytes
// (archive.Sniff) and no mesh shows as a folder of the same name
// (KindArchive) holding its tree, read through the source view (internal/source):
// inside it every entry is what a source file of that name would be (a
// mesh folder, a texture and its PNG, a plain file of the entry's exact
// size and time), with the stats source.EntryStat gives. An archive
// inside an archive is a plain file, or with nesting on a folder too, as
// far as source.Packed.Descends says. A folder of an archive is never
// watched: it changes only with the archive file, whose folder is, and
// whose new version is a new folder (ArchiveFile) of new entries. An
// archive whose listing found problems also shows error.txt (ErrorText)
// beside whatever could be listed, in place of an entry of that name.

// Packed reports whether the folder is an archive or a folder inside one.
func (d *Folder) Packed() bool {
	if v := d.packed.Load(); v != 0 {
		return v == 1
	}
	p, v := d.View.InArchive(d.Abs), int32(2)
	if p {
		v = 1
	}
	d.packed.Store(v)
	return p
}

// readDir lists the folder, an archive's through the source view, a
// merged one's from its layers (overlay.go): dirs is then the folder each
// entry is in (nil: all in d.Abs).
func (d *Folder) readDir() (ents []fs.DirEntry, dirs []string, err error) {
	if ls, _ := d.merged(); ls != nil {
		return d.readMerged(ls)
	} else if d.Packed() {
		ents, err = d.View.ReadDir(d.Abs)
		return ents, nil, err
	}
	f, err := source.OpenFolder(d.Abs)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	ents, err = f.ReadDir(-1)
	return ents, nil, err
}

// ErrorText is the contents of an archive folder's error.txt: what its
// listing refused or could not read; nil for a sound archive and for
// every other folder.
func (d *Folder) ErrorText() []byte {
	if !d.Packed() {
		return nil
	}
	a, _, _, err := d.View.Archive(d.Abs)
	if a == nil || err == nil {
		return nil
	}
	return outputs.ErrorText(err)
}

// InFolder answers whether a name exists in the folder (an archive's
// too, a merged one's in any layer), for formats.IsCompanion.
func (d *Folder) InFolder() func(string) bool {
	return func(name string) bool {
		var st syscall.Stat_t
		_, _, err := d.lookup(name, &st)
		return err == nil
	}
}

// ArchiveFile is the file a folder made from the archive file st stands
// for: one version of it (its inode number folds in the size and time),
// so that a changed archive gets a new folder node, as a replaced file
// does, and nothing made from its old entries is reused.
func ArchiveFile(st *syscall.Stat_t) source.File {
	id := source.FromStat(st)
	h := fnv.New64a()
	var b [8]byte
	for _, v := range []uint64{id.Ino, uint64(id.Size), uint64(id.MtimeNs)} {
		for i := range b {
			b[i] = byte(v >> (8 * i))
		}
		h.Write(b[:])
	}
	return source.File{Dev: id.Dev, Ino: h.Sum64() | 1<<63}
}
