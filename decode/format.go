package decode

import (
	"context"
	"io"
)

// Source is one file handed to a decoder. Decoders read it only through R,
// by random access, so the structure scan never loads what it does not need.
type Source struct {
	// Name is the file's path as the user gave it; errors name it.
	Name string
	R    io.ReaderAt
	Size int64
	// OpenSibling opens a file beside this one by base name (for example
	// "x.msh.blob" beside "x.msh"). It is nil when there is no folder to look
	// in. The caller closes what it returns when it implements io.Closer.
	OpenSibling func(name string) (io.ReaderAt, int64, error)
	// OpenAsset opens rel (slash-separated) beneath the asset roots, the
	// game's own first (TF: the res/ folder above the file; GEM: the
	// folder above it holding texture/), then the --asset-path roots, and
	// says which path it opened. Model files read the scripts they require
	// through it. It is nil when there are no roots to look in. The caller
	// closes what it returns when it implements io.Closer.
	OpenAsset func(rel string) (r io.ReaderAt, size int64, opened string, err error)
	// Project is the index of the file's project when its format is a
	// ProjectIndexer and the file is in a project (project.go), else nil.
	// A model resolves references through it and opens the files it
	// names through OpenAsset, whose roots then start with the project's.
	Project ProjectIndex
	// Reopen opens the file again as R was opened (an archive's entry
	// within its archive), for a chunk's Load called after the caller
	// closed R; done closes what it opened. Nil: the file is not reopened.
	Reopen func() (r io.ReaderAt, done func(), err error)
}

// Format is one supported file format.
type Format interface {
	// Name is a short stable identifier ("gem-ply").
	Name() string
	// Sniff reports whether the file called name, whose first bytes are head
	// (up to 16 bytes, fewer for a shorter file), is this format. It decides
	// by extension and magic together.
	Sniff(name string, head []byte) bool
	// StripExt returns the output base name for a source file name
	// ("a.b.ply" → "a.b").
	StripExt(name string) string
	// Scan reads the file's header and chunk layout without building
	// geometry. On error it still returns what it could read (non-nil when
	// anything was), so header.json shows as much as possible.
	Scan(ctx context.Context, src *Source) (*Structure, error)
	// Decode builds the scene.
	Decode(ctx context.Context, src *Source) (*Scene, error)
}

// Extensions is implemented by a format to name the file extensions it
// claims (lower case, with the dot; Sniff decides by these and the magic
// together). decode/formats requires it of every format it registers, and
// the command's help lists them from there.
type Extensions interface {
	Extensions() []string
}

// AnimationOnly is implemented by a format whose files hold animations
// and no geometry (a skeleton at most): their folders have no OBJ.
type AnimationOnly interface {
	AnimationOnly()
}

// ScanDecoder is implemented by a format that can Scan and Decode a file in
// one pass, which costs less than the two calls when both are wanted (the
// first conversion of a file: header.json's scan and the scene). It
// returns exactly what Scan and Decode return for a file both accept; on
// any error it returns (nil, nil, err) and the caller runs Scan and Decode
// as usual, which give partial structures and errors in their own terms.
type ScanDecoder interface {
	ScanDecode(ctx context.Context, src *Source) (*Structure, *Scene, error)
}

// Companion is implemented by formats whose files come in groups: it names
// the sibling files that belong to a main file, so a directory listing can
// hide them (".msh.blob" beside ".msh").
type Companion interface {
	// IsCompanion reports whether name is a companion of some main file
	// whose name is in siblings.
	IsCompanion(name string, siblings func(name string) bool) bool
	// Companions returns the base names of the files beside a main file
	// called name (a base name) that its outputs are made from.
	Companions(name string) []string
}

// Animator is implemented by a mesh format whose skinned meshes may take
// their animations from animation files in their folder (a UNIGINE .mesh
// from .anim files): it names the files worth trying. Which of them belong
// to a mesh is decided by Attach (every joint they drive is a joint of the
// mesh's skeleton, by name).
type Animator interface {
	// IsAnimationFile reports whether the file called name may hold
	// animations for the format's meshes.
	IsAnimationFile(name string) bool
}
