// Package formats is the list of decoders meshfs knows, and the sniffer that
// picks one for a file. It is the only package that names every format,
// the one registry of formats and their engines' rules (decode's
// interfaces). It reads no file: callers hand it names and bytes.
package formats

import (
	"io"
	"sync"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/gem"
	"github.com/meshfs/meshfs/decode/tfever"
	"github.com/meshfs/meshfs/decode/unigine"
)

// All is every supported format, in sniffing order. GEM's .mdl comes
// before any other .mdl format: it claims only text that opens with a
// group or a ';' comment.
var All = []decode.Format{
	gem.Format{},
	gem.Mdl{},
	gem.AnmFormat{},
	gem.VolFormat{},
	unigine.Format{},
	unigine.AnimFormat{},
	unigine.SceneFormat{},
	tfever.Msh{},
	tfever.Ani{},
	tfever.Mdl{},
}

// Extensions returns the file extensions format f claims
// (decode.Extensions; every format of All names them).
func Extensions(f decode.Format) []string {
	if e, ok := f.(decode.Extensions); ok {
		return e.Extensions()
	}
	return nil
}

// HeadSize is how many leading bytes Sniff needs.
const HeadSize = 16

// Sniff returns the format of the file called name whose first bytes are
// head, or nil when meshfs does not convert it.
func Sniff(name string, head []byte) decode.Format {
	for _, f := range All {
		if f.Sniff(name, head) {
			return f
		}
	}
	return nil
}

// SniffReader reads the head of r, the file called name, and sniffs it.
func SniffReader(name string, r io.Reader) (decode.Format, error) {
	head := make([]byte, HeadSize)
	n, err := io.ReadFull(r, head)
	if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
		return nil, err
	}
	return Sniff(name, head[:n]), nil
}

// IsCompanion reports whether name is a companion file of another file in
// the same folder (siblings answers whether a name exists there), so that
// listings can hide it.
func IsCompanion(name string, siblings func(string) bool) bool {
	for _, f := range All {
		if c, ok := f.(decode.Companion); ok && c.IsCompanion(name, siblings) {
			return true
		}
	}
	return false
}

// IsAnimationFile reports whether name may hold animations for the meshes
// of some format (decode.Animator) beside it.
func IsAnimationFile(name string) bool {
	for _, f := range All {
		if a, ok := f.(decode.Animator); ok && a.IsAnimationFile(name) {
			return true
		}
	}
	return false
}

// IsDependency reports whether name is a file that other files' outputs in
// the same folder may read: a companion, or an animation file. A change of
// one is a change of every mesh beside it (the mount's watcher and disk
// cache treat both alike).
func IsDependency(name string, siblings func(string) bool) bool {
	return IsCompanion(name, siblings) || IsAnimationFile(name)
}

// Merges reports whether a folder called name is one some game sees with
// the archives it holds merged into it (decode.Merger).
func Merges(name string) bool {
	for _, f := range All {
		if m, ok := f.(decode.Merger); ok && m.Merges(name) {
			return true
		}
	}
	return false
}

// Among is the siblings function for a folder listed as names (the set is
// built at the first question, once: safe for concurrent use).
func Among(names []string) func(name string) bool {
	var set map[string]bool
	var once sync.Once
	return func(name string) bool {
		once.Do(func() {
			set = make(map[string]bool, len(names))
			for _, n := range names {
				set[n] = true
			}
		})
		return set[name]
	}
}
