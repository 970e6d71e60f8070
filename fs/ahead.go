package fs

import "path/filepath"

// What the mount does ahead of a walker (vfs.Folder.ScanAhead and
// ListAhead).

// scanSiblings starts a pass over the meshes of m's source folder after m.
func (f *FS) scanSiblings(m *meshDir) {
	if d := m.parent; d != nil {
		d.dir.ScanAhead(f.ahead, filepath.Base(m.src.Path()), f.st.ScanAhead)
	}
}

// listAhead sniffs ahead of a walker that has just listed d (not the root)
// for the first time. It returns at once.
func (f *FS) listAhead(d *dirNode) {
	if d.dir.Abs == f.source {
		return
	}
	if name, parent := d.Parent(); parent != nil {
		if pd, ok := parent.Operations().(*dirNode); ok {
			pd.dir.ListAhead(f.ahead, f.sniffer, d.dir, name)
		}
	}
}
