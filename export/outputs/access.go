package outputs

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
