package decode

import (
	"io/fs"
	"path/filepath"
)

// Engines' rules. A game looks up the files a file names in its own way:
// GEM beneath the folder holding texture/, Transport Fever beneath res/,
// UNIGINE through its project's data/ folder. Those rules are the engine's
// package's: its formats implement AssetRooter, MaterialResolver and
// Merger (and Companion, Animator, ProjectIndexer), decode/formats lists
// the formats (the one registry),
// and the caller (export/outputs) finds the rules on the format it
// sniffed, handing them the files through Files and MaterialFiles, its
// view of the source (archives, no link followed out, no FIFO waited on,
// every file read recorded). Adding an engine is its package and its
// formats' line in decode/formats.

// Files is how an engine's rules reach the source tree: ProjectFiles, and
// the game's view of a folder holding archives.
type Files interface {
	ProjectFiles
	// Layers are the folders whose trees the game's view of the folder
	// root merges, in the order a name is looked for: root, then the
	// archives it holds (export/outputs: source.Layers).
	Layers(root string) []string
}

// AssetRooter is implemented by a format whose engine looks the files its
// files name up beneath an asset root above them.
type AssetRooter interface {
	// AssetRoot returns the engine's asset root for a file in the folder
	// dir, the nearest folder from dir upward that is one, looking no
	// higher than stop ("" for no bound; Up), or ok false.
	AssetRoot(dir, stop string, files Files) (root string, ok bool)
}

// Up returns dir and the folders above it, nearest first, none above
// stop ("" for no bound): just dir when dir is not beneath stop.
func Up(dir, stop string) []string {
	out := []string{dir}
	for d := dir; ; {
		up := filepath.Dir(d)
		if up == d || stop != "" && !beneath(stop, up) {
			return out
		}
		out = append(out, up)
		d = up
	}
}

// beneath reports whether p is root or a path beneath it.
func beneath(root, p string) bool {
	rel, err := filepath.Rel(root, p)
	return err == nil && filepath.IsLocal(rel) || rel == "."
}

// Merger is implemented by a format whose game sees a folder of some name
// with the archives it holds merged into it (the game's view: a GEM
// install's resource/, a Transport Fever res/), which the mount's
// --overlay shows so.
type Merger interface {
	// Merges reports whether a folder called name (a base name) is one.
	Merges(name string) bool
}

// MaterialResolver is implemented by a format whose materials name files
// (material files, textures) by its engine's rules.
type MaterialResolver interface {
	// ResolveMaterial resolves m in place through files: its neutral
	// fields (images, alpha mode, factors) from the files it names. It
	// returns m's entry in header.json's "materials": a name that
	// resolves to no file is listed with the paths tried ("unresolved"),
	// never an error.
	ResolveMaterial(files MaterialFiles, m *Material) Fields
}

// FileRef is a file to look for: Rel (slash-separated, local) beneath the
// folder Root.
type FileRef struct{ Root, Rel string }

// MaxMaterialFile bounds the size of a material file or script a
// material's rules read.
const MaxMaterialFile = 1 << 20

// MaterialFiles is the files of one resolving pass over a mesh's
// materials, as the caller reaches them: every file opened is one the
// outputs are made from (its version and permissions count).
type MaterialFiles interface {
	// Dir is the mesh's folder.
	Dir() string
	// Roots are the asset roots, in the order they are searched: the
	// engine's own above the mesh (AssetRooter) when there is one, then
	// the user's.
	Roots() []string
	// Read returns the contents of the first of cands that opens, at
	// most max bytes (a larger one is an error), which it was, and every
	// candidate tried as header.json names them. b is nil when none
	// could be read, err then saying why of the last tried.
	Read(cands []FileRef, max int64) (b []byte, found FileRef, tried []string, err error)
	// Show is how header.json names the file f.
	Show(f FileRef) string
	// Texture resolves the texture a material names as stored for slot
	// through cands and, when an output embeds the slot (used), decodes
	// it: into pixels when the engine's rules repack or rebuild them
	// (pixels), else into the PNG the output embeds. It returns the slot
	// as header.json shows it, the image (nil when unresolved or not
	// decodable) and the file found.
	Texture(slot, stored string, cands []FileRef, pixels, used bool) (TextureSlot, *Image, FileRef)
	// Repack returns img with each opaque pixel's channels moved by f
	// (alpha 255), made once a pass for img and kind; an image without
	// pixels is returned as it is.
	Repack(img *Image, kind string, f func(r, g, b uint8) (uint8, uint8, uint8)) *Image
	// ReadDir lists the folder dir (an error when there is no folder, as
	// for a mesh held in memory).
	ReadDir(dir string) ([]fs.DirEntry, error)
	// Reference resolves a name of the mesh's project index
	// (ProjectIndex.Resolve) to the file beneath its root, having read
	// the files that say so; why says what is known of one it does not
	// resolve.
	Reference(ref string) (f FileRef, why string, ok bool)
	// Given is the material the mesh's project gives its surface
	// (MeshMaterials), and the file saying so as header.json names it;
	// "" when it gives none.
	Given(surface string) (material, by string)
}

// TextureSlot is one texture slot of a material as header.json shows it.
type TextureSlot struct {
	Slot, Name string // the slot, and the texture's name as stored
	Path       string // the file found, as shown; "" when unresolved
	Tried      []string
	Err        string // found but not decodable, or why unresolved
}

// Fields are the slot's entry in header.json.
func (s TextureSlot) Fields() Fields {
	var f Fields
	f.Add("slot", s.Slot)
	f.Add("name", s.Name)
	if s.Path != "" {
		f.Add("path", s.Path)
	} else {
		f.Add("unresolved", s.Tried)
	}
	if s.Err != "" {
		f.Add("error", s.Err)
	}
	return f
}

// AlphaFields adds the material's alpha mode (and double-sidedness) to f,
// as every engine's header.json entry ends.
func AlphaFields(f *Fields, m *Material) {
	switch {
	case m.AlphaBlend:
		f.Add("alpha_mode", "BLEND")
	case m.AlphaMask:
		f.Add("alpha_mode", "MASK")
		f.Add("alpha_cutoff", m.AlphaCutoff)
	default:
		f.Add("alpha_mode", "OPAQUE")
	}
	if m.DoubleSided {
		f.Add("double_sided", true)
	}
}

// NonNilStrings is s, or an empty list for nil (a JSON [] rather than null).
func NonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
