package vfs

import (
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/meshfs/meshfs/decode/formats"
	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/internal/source"
)

// The game's view in the mount (Folder.Overlay, --overlay): a folder on
// disk named resource or res (in any case) whose source.Layers hold
// archives shows its loose entries merged with the trees of its archives,
// by that one rule (loose first, then the archives from the last by name
// to the first), and so does every folder beneath it, the same path
// beneath each layer. A name is the first layer's that holds it: a file
// there is that file (a packed one read as in its archive's folder: a
// mesh is a folder of outputs, a texture has its PNG, a plain entry its
// exact size), a folder is the merged folder of that name. The archives
// still show as their own folders too. A merged folder's time is the
// latest of its layers' and of the archive files', so that a rewritten
// archive changes it (the kernel drops a listing it keeps when a folder's
// time changes); its permission bits are those all its layers grant
// (statLayers), so no one lists names from an archive they may not read.
// It is never watched for its archives (they change with their files in
// the root), so it counts as Unwatched: what the kernel learns there it
// keeps for the unwatched timeouts only. Beneath two such folders, the
// nearer one merges.

// merged gives the folders whose trees d shows (layers, in lookup order,
// d.Abs first) and the archive files they come from; nil for a folder not
// merged (no Overlay, inside an archive, beneath no resource/ or res/
// folder holding archives).
func (d *Folder) merged() (layers, packs []string) {
	if !d.Overlay || d.Packed() {
		return nil, nil
	}
	for root := d.Abs; ; {
		if mergesAt(root) {
			if ls := source.Layers(d.View, root); len(ls) > 1 {
				rel := strings.TrimPrefix(d.Abs[len(root):], "/")
				layers = make([]string, len(ls))
				for i, l := range ls {
					layers[i] = filepath.Join(l, rel)
				}
				return layers, ls[1:]
			}
		}
		up := filepath.Dir(root)
		if up == root {
			return nil, nil
		}
		root = up
	}
}

// mergesAt reports whether a folder at p, by its name, merges its layers
// (a game's, formats.Merges: a resource or res folder, in any case).
func mergesAt(p string) bool { return formats.Merges(filepath.Base(p)) }

// Merged reports whether the folder shows the game's view (above).
func (d *Folder) Merged() bool {
	ls, _ := d.merged()
	return ls != nil
}

// lookup stats the entry name (source.Packed.SysLstat) where it is read from and
// gives that path, and whether it lies inside an archive: in a merged
// folder, the first layer holding it, a folder's stat being the merged
// one (statLayers).
func (d *Folder) lookup(name string, st *syscall.Stat_t) (p string, packed bool, err error) {
	ls, packs := d.merged()
	if ls == nil {
		p = filepath.Join(d.Abs, name)
		err = d.View.SysLstat(p, st)
		if err == nil && d.Overlay && st.Mode&syscall.S_IFMT == syscall.S_IFDIR && mergesAt(p) && !d.Packed() {
			// The top of a merged tree: its stat is its layers'.
			if ls := source.Layers(d.View, p); len(ls) > 1 {
				return p, false, d.statLayers(ls, ls[1:], st)
			}
		}
		return p, d.Packed(), err
	}
	err = syscall.ENOENT
	for i, l := range ls {
		p := filepath.Join(l, name)
		e := d.View.SysLstat(p, st)
		if e == nil {
			if st.Mode&syscall.S_IFMT == syscall.S_IFDIR {
				return p, i > 0, d.statLayers(joined(ls, name), packs, st)
			}
			return p, i > 0, nil
		}
		if i == 0 && !errors.Is(e, syscall.ENOENT) && !errors.Is(e, syscall.ENOTDIR) {
			err = e
		}
	}
	return filepath.Join(d.Abs, name), false, err
}

func joined(ls []string, name string) []string {
	out := make([]string, len(ls))
	for i, l := range ls {
		out[i] = filepath.Join(l, name)
	}
	return out
}

// Path is where the entry name is read from, and whether that is inside
// an archive: its path beneath the folder, but in a merged folder a file's
// path in the first layer holding it (a folder's stays beneath this one:
// it is merged again).
func (d *Folder) Path(name string) (string, bool) {
	if !d.Merged() {
		return filepath.Join(d.Abs, name), d.Packed()
	}
	var st syscall.Stat_t
	p, packed, err := d.lookup(name, &st)
	if err == nil && st.Mode&syscall.S_IFMT == syscall.S_IFDIR {
		return filepath.Join(d.Abs, name), false
	}
	return p, packed
}

// Stat is the folder's own stat (source.Packed.SysStat), a merged folder's made by
// statLayers.
func (d *Folder) Stat(st *syscall.Stat_t) error {
	ls, packs := d.merged()
	if ls == nil {
		return d.View.SysStat(d.Abs, st)
	}
	return d.statLayers(ls, packs, st)
}

// statLayers is the stat of the merged folder whose layers are ls, from
// the archive files packs (ls[i] lies in packs[i-1]): the first layer's
// that is a folder, with the latest modification time of those and of
// packs, and the permission bits every one of those grants
// (outputs.Narrow): who could not list a layer (an archive whose file
// they may not read) may not list the merged folder, which shows its
// names. The top of an archive is a folder with its file's bits, those
// that read it searching it (source.EntryStat).
func (d *Folder) statLayers(ls, packs []string, st *syscall.Stat_t) error {
	found := false
	var s syscall.Stat_t
	var access []outputs.Access
	latest := func(t syscall.Timespec) {
		if t.Nano() > st.Mtim.Nano() {
			st.Mtim = t
		}
	}
	for i, l := range ls {
		if d.View.SysLstat(l, &s) != nil {
			continue
		}
		if s.Mode&syscall.S_IFMT != syscall.S_IFDIR {
			if i == 0 || l != packs[i-1] || s.Mode&syscall.S_IFMT != syscall.S_IFREG {
				continue
			}
			perm := s.Mode & 0o555
			s.Mode = syscall.S_IFDIR | perm | (perm&0o444)>>2
		}
		if !found {
			*st, found = s, true
		}
		access = append(access, outputs.Access{Uid: s.Uid, Gid: s.Gid, Perm: s.Mode})
		latest(s.Mtim)
	}
	if !found {
		return syscall.ENOENT
	}
	st.Mode = st.Mode&^0o777 | outputs.Narrow(access...).Perm
	for _, p := range packs {
		if syscall.Lstat(p, &s) == nil {
			latest(s.Mtim)
		}
	}
	return nil
}

// SkipWatch reports whether the watcher is to leave the folder alone: an
// archive's folder (it changes with its file, whose folder is watched),
// and a merged folder with no loose layer. A merged folder counts as
// Unwatched (above).
func (d *Folder) SkipWatch() bool {
	if d.Packed() {
		return true
	}
	if !d.Merged() {
		return false
	}
	d.Unwatched.Store(true)
	var st syscall.Stat_t
	return syscall.Lstat(d.Abs, &st) != nil
}

// readMerged lists a merged folder: the union of its layers' listings,
// each name the first layer's, by name; dirs gives each entry's layer.
func (d *Folder) readMerged(ls []string) (ents []fs.DirEntry, dirs []string, err error) {
	type ent struct {
		e   fs.DirEntry
		dir string
	}
	var all []ent
	seen := map[string]bool{}
	any := false
	for i, l := range ls {
		es, e := d.View.ReadDir(l)
		if e != nil {
			if i == 0 && !errors.Is(e, syscall.ENOENT) {
				err = e
			}
			continue
		}
		any = true
		for _, x := range es {
			if !seen[x.Name()] {
				seen[x.Name()] = true
				all = append(all, ent{x, l})
			}
		}
	}
	if !any {
		if err == nil {
			err = syscall.ENOENT
		}
		return nil, nil, err
	}
	slices.SortFunc(all, func(a, b ent) int { return strings.Compare(a.e.Name(), b.e.Name()) })
	for _, x := range all {
		ents, dirs = append(ents, x.e), append(dirs, x.dir)
	}
	return ents, dirs, nil
}
