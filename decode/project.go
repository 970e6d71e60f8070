package decode

import (
	"io"
	"io/fs"
)

// Some engines name files by identity rather than by path: a UNIGINE
// .world, .node or .mat names meshes, materials and textures as
// guid://<40 hex>, which the project's .meta files and data/.runtimes/
// resolve. A format whose files do implements ProjectIndexer; the caller
// (export/outputs) finds a file's project, builds its index once per run
// (a mount, a convert), builds it again when a file it was made from
// changes, and hands it to DecodeModel in Source.Project and to the
// engine's material rules. Decoders keep no index of their own.

// ProjectIndexer is implemented by a format whose files name others
// through an index of their project.
type ProjectIndexer interface {
	// ProjectKind names the kind of index IndexProject builds: formats
	// of one engine that share an index give the same kind, and a caller
	// keeps one index per project root and kind.
	ProjectKind() string
	// ProjectRoot returns the root folder of the project holding the file
	// or folder at path, looking no higher than stop ("" for no bound),
	// or ok false when the file is in none.
	ProjectRoot(path, stop string, files ProjectFiles) (root string, ok bool)
	// IndexProject builds the index of the project at root. Only a root
	// that cannot be read is an error: files that cannot be are recorded
	// in the index.
	IndexProject(root string, files ProjectFiles) (ProjectIndex, error)
}

// ProjectFiles is how a project indexer reaches the project's files: the
// caller's view of the source (loose files, and an archive's entries as
// the files of a folder of its name). Paths are absolute and clean.
type ProjectFiles interface {
	// Stat describes the file or folder at p, following no final link.
	Stat(p string) (fs.FileInfo, error)
	// ReadDir lists the folder at p, by name.
	ReadDir(p string) ([]fs.DirEntry, error)
	// Open opens the regular file at p, following no link.
	Open(p string) (ProjectReader, error)
}

// ProjectReader is a file ProjectFiles opened.
type ProjectReader interface {
	io.ReaderAt
	io.Closer
	Size() int64
}

// ProjectIndex resolves a project's references. It is not changed once
// built, so it may be shared by conversions running at once.
type ProjectIndex interface {
	// Root is the project's root folder.
	Root() string
	// Resolve returns the file the reference ref names (a slash path
	// beneath Root) and the files beneath Root that say so (a .meta
	// whose GUID it is): a change of either may change the answer. ok
	// is false when ref is not a reference of the index's kind or names
	// no file of the project; why then says what is known (a file a
	// .meta names that the project lacks), or is "".
	Resolve(ref string) (rel string, via []string, why string, ok bool)
	// Read are the files and folders the index was made from, each with
	// what its stat said when it was read: when any of them changes (a
	// folder when a file is added or removed in it), the index is stale.
	Read() []ProjectFile
}

// ProjectFile is one file or folder an index was made from.
type ProjectFile struct {
	Path string
	Info fs.FileInfo
}

// MeshMaterials is implemented by a ProjectIndex that knows which
// materials its project gives a mesh file's surfaces (UNIGINE: the scene
// the editor made of the mesh's source asset names them), for a mesh read
// alone.
type MeshMaterials interface {
	// MeshMaterials returns, for the mesh file rel (a slash path beneath
	// Root), the material each surface is given, by surface name, as the
	// engine's material rules take a name, and the files beneath Root
	// that say so; nil when the project says nothing.
	MeshMaterials(rel string) (bySurface map[string]string, via []string)
}
