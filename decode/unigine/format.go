// Package unigine reads UNIGINE meshes: `.mesh` (ms15, and the older ms14,
// ms11 and ms10 found in the wild) and `.mesh_skinned` (sk10), as described
// in FORMATS.md §3. Read parses a file into the raw model (File), Encode
// writes one, and Format ties both to meshfs.
package unigine

import (
	"context"
	"path/filepath"
	"strings"

	"github.com/meshfs/meshfs/decode"
)

// Name is the format's identifier.
const Name = "unigine-mesh"

// Format is the UNIGINE mesh format.
type Format struct{}

func (Format) Name() string { return Name }

// extension returns the UNIGINE extension name ends with, or "".
func extension(name string) string {
	l := strings.ToLower(name)
	for _, e := range []string{".mesh_skinned", ".mesh"} {
		if strings.HasSuffix(l, e) {
			return e
		}
	}
	return ""
}

// Sniff claims .mesh and .mesh_skinned files whose magic is a known
// version, and also those whose magic merely starts with "ms" or "sk", so
// that an unknown version shows error.txt saying so instead of vanishing.
func (Format) Sniff(name string, head []byte) bool {
	if extension(filepath.Base(name)) == "" || len(head) < 2 {
		return false
	}
	if len(head) >= 4 {
		if _, ok := layoutOf(string(head[:4])); ok {
			return true
		}
	}
	p := string(head[:2])
	return p == "ms" || p == "sk"
}

// StripExt removes .mesh or .mesh_skinned.
func (Format) StripExt(name string) string {
	if e := extension(name); e != "" {
		return name[:len(name)-len(e)]
	}
	return name
}

// Decode reads the file and builds its scene.
func (Format) Decode(ctx context.Context, src *decode.Source) (*decode.Scene, error) {
	f, err := Read(ctx, src)
	if err != nil {
		return nil, err
	}
	return Scene(f, src.Name, Format{}.StripExt(filepath.Base(src.Name)))
}
