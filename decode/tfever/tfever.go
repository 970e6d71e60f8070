// Package tfever reads Transport Fever and Train Fever meshes: a `.msh` Lua
// data script that locates attributes and index lists in its companion
// `.msh.blob`, `.ani` keyframe tracks (FORMATS.md §2), and `.mdl` models,
// which place meshes by reference (Mdl, a decode.ModelDecoder): the
// Transport Fever 2 node tree, and the Train Fever (1) layout that mods
// still ship (each LOD a list of mesh and .grp group children, matConfigs
// choosing each mesh's material configuration, events playing the
// meshes' own animations; mdl_tf1.go states the layout and the public
// files it was fitted to). A model script runs under its path from its
// mod folder (NAME_1/res/models/model/x.mdl), which debug.getinfo gives it.
//
// The scripts run in luasandbox. Conventions of the source: Z up,
// right-handed, metres, counter-clockwise front faces; the decoder rotates
// Z up to glTF's Y up (decode.ZUpToYUp, a rotation, so windings stay
// counter-clockwise). UVs are kept as stored: the game samples DDS textures
// with the top-left origin that glTF uses.
//
// Each submesh's per-attribute index lists are joined into vertices by
// value: corners whose converted attributes are bit-equal share one vertex
// (decode.Primitive.JoinByValue), so the vertex count is that of the
// mesh's real topology, not of its corners. Non-finite values (real files
// hold NaN in a few tangents or normals) do not fail the mesh: they are
// repaired by decode.Scene.Repair's policy, and header.json's "repairs"
// lists what was done (an empty list when the geometry is all finite; the
// scan reads the geometry attributes to tell, and decodes the mesh only
// when it finds a non-finite value).
package tfever

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/tfever/luasandbox"
)

// Msh is the .msh + .msh.blob format. Its zero value uses the sandbox's
// default limits.
type Msh struct {
	Limits luasandbox.Limits
}

// Ani is the .ani keyframe track format.
type Ani struct {
	Limits luasandbox.Limits
}

func (Msh) Name() string { return "transport-fever-msh" }
func (Ani) Name() string { return "transport-fever-ani" }

// Extensions implements decode.Extensions.
func (Msh) Extensions() []string { return []string{".msh"} }

// Extensions implements decode.Extensions.
func (Ani) Extensions() []string { return []string{".ani"} }

// AnimationOnly implements decode.AnimationOnly.
func (Ani) AnimationOnly() {}

func (Msh) Sniff(name string, head []byte) bool { return hasExt(name, ".msh") && looksLikeText(head) }
func (Ani) Sniff(name string, head []byte) bool { return hasExt(name, ".ani") && looksLikeText(head) }

func (Msh) StripExt(name string) string { return stripExt(name, ".msh") }
func (Ani) StripExt(name string) string { return stripExt(name, ".ani") }

// IsCompanion reports NAME.msh.blob as a companion when NAME.msh exists.
func (Msh) IsCompanion(name string, siblings func(string) bool) bool {
	if !hasExt(name, ".blob") {
		return false
	}
	main := name[:len(name)-len(".blob")]
	return hasExt(main, ".msh") && siblings(main)
}

// Companions names NAME.msh.blob for NAME.msh (.ani files have none).
func (Msh) Companions(name string) []string { return []string{name + ".blob"} }

func hasExt(name, ext string) bool {
	return len(name) > len(ext) && strings.EqualFold(name[len(name)-len(ext):], ext)
}

func stripExt(name, ext string) string {
	if hasExt(name, ext) {
		return name[:len(name)-len(ext)]
	}
	return name
}

// looksLikeText tells a Lua script from the binary files of other games that
// also end in .msh: no control bytes but whitespace (a UTF-8 BOM and other
// valid UTF-8 are allowed; the head may end inside a character).
func looksLikeText(head []byte) bool {
	for i := 0; i < len(head); {
		c := head[i]
		if c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' || c == 0x7f {
			return false
		}
		r, n := utf8.DecodeRune(head[i:])
		if r == utf8.RuneError && n == 1 && !(len(head)-i < utf8.UTFMax && !utf8.FullRune(head[i:])) {
			return false
		}
		i += n
	}
	return true
}

// blobName is the companion's base name.
func blobName(src *decode.Source) string { return Msh{}.Companions(filepath.Base(src.Name))[0] }

// readScript reads the whole script, refusing one beyond the sandbox's limit
// before allocating.
func readScript(src *decode.Source, lim luasandbox.Limits) ([]byte, error) {
	max := int64(lim.MaxScript)
	if max <= 0 {
		max = luasandbox.DefaultMaxScript
	}
	if src.Size > max {
		return nil, &decode.FormatError{File: src.Name, Section: "data.lua", Offset: 0,
			Msg: fmt.Sprintf("script is %d bytes, more than the limit of %d", src.Size, max), Err: decode.ErrLimit}
	}
	if src.Size < 0 {
		return nil, decode.Errorf(src.Name, "data.lua", "", 0, "negative size %d", src.Size)
	}
	b := make([]byte, src.Size)
	if _, err := src.R.ReadAt(b, 0); err != nil && !(errors.Is(err, io.EOF) && src.Size == 0) {
		return nil, &decode.FormatError{File: src.Name, Section: "data.lua", Msg: "reading the script", Err: err}
	}
	return b, nil
}

// runScript runs the script and wraps its failure as a FormatError.
func runScript(ctx context.Context, src *decode.Source, script []byte, lim luasandbox.Limits) (any, error) {
	v, err := luasandbox.Run(ctx, path.Base(filepath.ToSlash(src.Name)), script, lim)
	if err != nil {
		fe := &decode.FormatError{File: src.Name, Section: "data.lua", Field: "data()", Msg: "running the script", Err: err}
		if errors.Is(err, luasandbox.ErrLimit) || errors.Is(err, luasandbox.ErrTimeout) {
			fe.Err = limitErr{err}
		}
		return nil, fe
	}
	return v, nil
}

func scriptChunk(size int64) decode.Chunk {
	return decode.Chunk{Name: "data.lua", Offset: 0, Length: size, Size: size}
}

// limitErr marks a sandbox limit as a decode.ErrLimit too, keeping the
// sandbox's message.
type limitErr struct{ err error }

func (e limitErr) Error() string   { return e.err.Error() }
func (e limitErr) Unwrap() []error { return []error{e.err, decode.ErrLimit} }
