package outputs

import (
	"syscall"

	"github.com/meshfs/meshfs/internal/source"
)

// Access is who may do what with a file: its owner, its group and its
// permission bits (rwxrwxrwx; no file type, setuid, setgid or sticky bits).
type Access struct {
	Uid, Gid uint32
	Perm     uint32
}

// Narrow returns the access of an output made from files, the first being
// the main source file: nobody may read through the output what they could
// not read from every one of them. The output has the main file's owner and
// group; each of its classes (owner, group, other) keeps a bit only when
// every file grants it to every user who may be in that class:
//   - the output's owner is the owner of a file with the same owner, and
//     otherwise in that file's group or not (both classes must grant it);
//   - a user of the output's group may own a file owned by someone else
//     (its owner class must grant it), is in the group class of a file of
//     the same group, and otherwise in its group or other class;
//   - any other user may own a file owned by someone else, is in the other
//     class of a file of the same group (they are not in that group), and
//     otherwise in its group or other class.
//
// Group membership is not looked up: where it could go either way, the
// stricter class rules. With one file, the output's access is the file's.
func Narrow(files ...Access) Access {
	if len(files) == 0 {
		return Access{}
	}
	out := files[0]
	out.Perm &= 0o777
	owner, group, other := (out.Perm>>6)&7, (out.Perm>>3)&7, out.Perm&7
	for _, f := range files[1:] {
		fo, fg, fx := (f.Perm>>6)&7, (f.Perm>>3)&7, f.Perm&7
		sameOwner, sameGroup := f.Uid == out.Uid, f.Gid == out.Gid
		// The output's owner.
		if sameOwner {
			owner &= fo
		} else {
			owner &= fg & fx
		}
		// A user of the output's group (not its owner).
		if !sameOwner {
			group &= fo
		}
		if sameGroup {
			group &= fg
		} else {
			group &= fg & fx
		}
		// Anyone else (neither the output's owner nor in its group).
		if !sameOwner {
			other &= fo
		}
		if sameGroup {
			other &= fx
		} else {
			other &= fg & fx
		}
	}
	out.Perm = owner<<6 | group<<3 | other
	return out
}

// StatAccess appends to files the access of each of paths, files the
// mesh m is made from, stat'ed through links (the file whose bytes
// would be read; for an entry of an archive, the archive file), and of
// every folder on the way to it that the mesh's own path does not pass
// (source.Folders: those it passes stand between any reader and the
// mesh's outputs already). A file counts as readable only where its
// folders are searchable: a folder grants a class everything when it may
// search it, else nothing. A path that cannot be stat'ed (missing) adds
// nothing: no output has its bytes. Each folder is stat'ed once per call.
func (m *Mesh) StatAccess(files []Access, paths ...string) []Access {
	folders := map[string]bool{}
	for _, p := range paths {
		var st syscall.Stat_t
		read := p
		err := syscall.Stat(p, &st)
		if err == syscall.ENOTDIR {
			// An entry of an archive: the archive's access (internal/source).
			if _, r, verr := m.Limits.view().Stat(p); verr == nil {
				read = r.Path
				err = syscall.Stat(read, &st)
			}
		}
		if err != nil {
			continue
		}
		files = append(files, Access{Uid: st.Uid, Gid: st.Gid, Perm: st.Mode})
		for _, d := range source.Folders(m.Path, read) {
			if folders[d] {
				break // and the folders above it
			}
			folders[d] = true
			if syscall.Stat(d, &st) == nil {
				files = append(files, Access{Uid: st.Uid, Gid: st.Gid, Perm: searchable(st.Mode)})
			}
		}
	}
	return files
}

// searchable is the access a folder of mode perm gives to the files
// beneath it: all of a class's bits where it may search the folder.
func searchable(perm uint32) uint32 {
	var out uint32
	for shift := uint32(0); shift <= 6; shift += 3 {
		if perm>>shift&1 != 0 {
			out |= 7 << shift
		}
	}
	return out
}
