package outputs

import (
	"bytes"
	"encoding/json"

	"github.com/meshfs/meshfs/decode"
)

// The folder table: the files a mesh's folder holds, for `convert` (which
// writes them) and the mount (which lists and looks them up). Adding an
// output file is one entry here.
//
// The rule for error.txt: a mesh whose scan failed, or whose conversion
// (decoding, or the export of NAME.glb, of NAME.obj and NAME.mtl, or the
// drawing of NAME.preview.png) failed,
// is broken. A broken mesh's folder holds header.json (which carries the
// error under "error"), chunks/ when the scan found any, and error.txt; it
// holds no NAME.glb, NAME.obj, NAME.mtl or NAME.preview.png, not even the
// export that did succeed, so that a folder either has all of its geometry or says why it
// has none. A chunk that fails to load is named in error.txt too, but
// does not take the geometry away.
//
// NAME.obj and NAME.mtl are a mesh's (HasOBJ): a model's folder has none,
// nor has an animation file's (decode.AnimationOnly), which holds no
// geometry to put in them. NAME.preview.png is a mesh's and a model's
// (HasPreview), a geometry output like NAME.glb.

// Output is what produces a file of the folder.
type Output int

const (
	OutHeader   Output = iota // header.json, rendered from the scan
	OutChunks                 // chunks/, from the scan
	OutGLB                    // NAME.glb, a conversion; a model's NAME.lodN.glb is its part N
	OutOBJ                    // NAME.obj (part 0) and NAME.mtl (part 1): one conversion
	OutError                  // error.txt
	OutAnimated               // NAME.animated.glb, a conversion of the mesh and its folder's animation files (animated.go)
	OutPreview                // NAME.preview.png, drawn from the scene NAME.glb is exported from (preview.go)
)

// Entry is one file (or folder) of a mesh's folder.
type Entry struct {
	Name   string
	Dir    bool
	Output Output
	Part   int    // which file of Output: 1 for NAME.mtl, else 0
	Ino    uint64 // its number within the folder, stable for the mesh
}

// Converted reports whether the entry's bytes need the mesh decoded (a
// conversion); the others come from the cheap structure scan.
func (e Entry) Converted() bool {
	return e.Output == OutGLB || e.Output == OutOBJ || e.Output == OutAnimated || e.Output == OutPreview
}

// ChangedByFailure reports whether a failed conversion adds e to the
// folder or takes it away (the rule for error.txt above).
func (e Entry) ChangedByFailure() bool {
	return State{Animated: true}.Holds(e) != State{Broken: true, Animated: true}.Holds(e)
}

// State is what is known of a mesh when its folder is listed.
type State struct {
	Chunks bool // the scan found chunks
	Broken bool // the scan or a conversion failed
	// Animated: some animation file of the folder belongs to the mesh
	// (the rule of animated.go).
	Animated bool
}

// Entries is every file a folder of m may hold, in the order `convert`
// writes them (error.txt, holding every failure, last).
func (m *Mesh) Entries() []Entry {
	if m.IsModel() {
		// A model: its LODs' files are the parts of one conversion
		// (GLBFiles), and it has no OBJ.
		es := []Entry{
			{Name: HeaderName, Output: OutHeader, Ino: 4},
			{Name: ChunksDir, Dir: true, Output: OutChunks, Ino: 5},
		}
		lods, colliders := m.shape()
		for n := range lods {
			ino := uint64(1)
			if n > 0 {
				ino = 7 + uint64(n)
			}
			es = append(es, Entry{Name: m.LODGLBName(n), Output: OutGLB, Part: n, Ino: ino})
		}
		if colliders {
			// The part after the LODs' (ModelGLBs).
			es = append(es, Entry{Name: m.CollisionGLBName(), Output: OutGLB, Part: lods, Ino: 7})
		}
		if m.HasPreview() {
			es = append(es, Entry{Name: m.PreviewName(), Output: OutPreview, Ino: 2})
		}
		return append(es, Entry{Name: ErrorName, Output: OutError, Ino: 6})
	}
	es := []Entry{
		{Name: HeaderName, Output: OutHeader, Ino: 4},
		{Name: ChunksDir, Dir: true, Output: OutChunks, Ino: 5},
		{Name: m.GLBName(), Output: OutGLB, Ino: 1},
	}
	if m.HasOBJ() {
		es = append(es,
			Entry{Name: m.OBJName(), Output: OutOBJ, Ino: 2},
			Entry{Name: m.MTLName(), Output: OutOBJ, Part: 1, Ino: 3})
	}
	if m.HasPreview() {
		es = append(es, Entry{Name: m.PreviewName(), Output: OutPreview, Ino: 8})
	}
	return append(es,
		Entry{Name: m.AnimatedGLBName(), Output: OutAnimated, Ino: 7},
		Entry{Name: ErrorName, Output: OutError, Ino: 6})
}

// HasOBJ reports whether m's folder holds NAME.obj and NAME.mtl: a mesh's
// does, a model's and an animation file's do not (the rule above).
func (m *Mesh) HasOBJ() bool {
	_, anim := m.Format.(decode.AnimationOnly)
	return !m.IsModel() && !anim
}

// Names are the names of Entries.
func (m *Mesh) Names() []string {
	es := m.Entries()
	names := make([]string, len(es))
	for i, e := range es {
		names[i] = e.Name
	}
	return names
}

// Files is the folder of m in state s: Entries without those s rules out
// (see the rule for error.txt above).
func (m *Mesh) Files(s State) []Entry {
	all := m.Entries()
	list := all[:0]
	for _, e := range all {
		if s.Holds(e) {
			list = append(list, e)
		}
	}
	return list
}

// Holds reports whether a folder in state s holds e.
func (s State) Holds(e Entry) bool {
	switch {
	case e.Output == OutChunks:
		return s.Chunks
	case e.Output == OutError:
		return s.Broken
	case e.Output == OutAnimated:
		return s.Animated && !s.Broken
	case e.Converted():
		return !s.Broken
	}
	return true
}

// Entry returns the entry of m's folder called name, whatever the state.
func (m *Mesh) Entry(name string) (Entry, bool) {
	for _, e := range m.Entries() {
		if e.Name == name {
			return e, true
		}
	}
	return Entry{}, false
}

// ChunkEntries is the folder chunks/ of a mesh whose scan found the
// chunks named names (decode.SafeName, in the scan's order): one file
// each, numbered from 1 in that order.
func ChunkEntries(names []string) []Entry {
	es := make([]Entry, len(names))
	for i, n := range names {
		es[i] = Entry{Name: n, Output: OutChunks, Ino: uint64(i + 1)}
	}
	return es
}

// HeaderWithError is header.json hdr (as Header renders it) with the
// conversion error err added under "error": a broken mesh's header says
// why, for the scan and the conversion alike.
func HeaderWithError(hdr []byte, err error) []byte {
	if err == nil {
		return hdr
	}
	end := bytes.LastIndexByte(hdr, '}')
	if end < 0 {
		return hdr
	}
	msg, _ := json.Marshal(err.Error())
	head := bytes.TrimRight(hdr[:end], " \n")
	var b bytes.Buffer
	b.Write(head)
	if len(head) > 0 && head[len(head)-1] != '{' {
		b.WriteByte(',')
	}
	b.WriteString("\n  \"error\": ")
	b.Write(msg)
	b.WriteString("\n}\n")
	return b.Bytes()
}
