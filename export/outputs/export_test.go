package outputs

// InProject reports whether m's format names files through a project index
// and m's file is in such a project (what a mesh in memory never is).
func InProject(m *Mesh) bool { return m.project(nil) != nil }
