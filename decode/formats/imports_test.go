package formats

import (
	"go/ast"
	"go/build"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/meshfs/meshfs"

// repoRoot is the module's root, two folders above this package's.
func repoRoot(t *testing.T) string {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// packages calls fn with each package (its import path and the imports
// of its non-test files) in the folders beneath top, a folder of the
// module.
func packages(t *testing.T, top string, fn func(path string, pkg *build.Package)) {
	root := repoRoot(t)
	n := 0
	err := filepath.WalkDir(filepath.Join(root, top), func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if d.Name() == "testdata" {
			return filepath.SkipDir
		}
		pkg, err := build.ImportDir(p, 0)
		if _, ok := err.(*build.NoGoError); ok {
			return nil
		}
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		fn(module+"/"+filepath.ToSlash(rel), pkg)
		n++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatalf("no package beneath %s", top)
	}
}

// TestDecodeImportsNoInternal: decoders read only through what their
// callers hand them (decode.Source, decode.Files), never through the
// module's internal packages.
func TestDecodeImportsNoInternal(t *testing.T) {
	packages(t, "decode", func(path string, pkg *build.Package) {
		for _, imp := range pkg.Imports {
			if strings.HasPrefix(imp, module+"/internal/") {
				t.Errorf("%s imports %s", path, imp)
			}
		}
	})
}

// TestSourceIsALeaf: internal/source, how every layer above decode reads
// the source, imports of the module only the archive reader beneath it.
func TestSourceIsALeaf(t *testing.T) {
	packages(t, "internal/source", func(path string, pkg *build.Package) {
		for _, imp := range pkg.Imports {
			if strings.HasPrefix(imp, module+"/") && imp != module+"/internal/archive" {
				t.Errorf("%s imports %s", path, imp)
			}
		}
	})
}

// neutral are the packages under decode/ that exporters may import: the
// neutral scene and interfaces, this registry, and the texture decoder.
var neutral = map[string]bool{module + "/decode": true, module + "/decode/formats": true, module + "/decode/texture": true}

// TestExportImportsNoEngine: nothing in export/ names an engine's package;
// it finds engines' rules on the formats this package lists.
func TestExportImportsNoEngine(t *testing.T) {
	packages(t, "export", func(path string, pkg *build.Package) {
		for _, imp := range pkg.Imports {
			if strings.HasPrefix(imp, module+"/decode/") && !neutral[imp] {
				t.Errorf("%s imports %s", path, imp)
			}
		}
	})
}

// TestKeepsNoPackageState: no package of export/ or internal/ keeps a
// map or a sync value at package level (a cache, registry or view shared
// by every mount in the process): those travel in explicit values. A
// sync.Pool is allowed: it holds spare allocations, nothing a caller can
// see, and the collector empties it.
func TestKeepsNoPackageState(t *testing.T) {
	for _, top := range []string{"export", "internal"} {
		keepsNoPackageState(t, top)
	}
}

func keepsNoPackageState(t *testing.T, top string) {
	packages(t, top, func(path string, pkg *build.Package) {
		fset := token.NewFileSet()
		for _, name := range pkg.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(pkg.Dir, name), nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range f.Decls {
				g, ok := d.(*ast.GenDecl)
				if !ok || g.Tok != token.VAR {
					continue
				}
				for _, s := range g.Specs {
					vs := s.(*ast.ValueSpec)
					var exprs []ast.Expr
					if vs.Type != nil {
						exprs = append(exprs, vs.Type)
					}
					exprs = append(exprs, vs.Values...)
					for _, e := range exprs {
						if kind := stateKind(e); kind != "" {
							t.Errorf("%s: package-level %s %s", fset.Position(vs.Pos()), kind, vs.Names[0].Name)
						}
					}
				}
			}
		}
	})
}

// stateKind says what shared state the expression e (a var's type or
// value) makes: "map" or "sync value", else "".
func stateKind(e ast.Expr) string {
	kind := ""
	ast.Inspect(e, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.FuncLit:
			return false // a function's own locals are not package state
		case *ast.MapType:
			kind = "map"
		case *ast.SelectorExpr:
			if x, ok := n.X.(*ast.Ident); ok && x.Name == "sync" && n.Sel.Name != "Pool" {
				kind = "sync value"
			}
		}
		return kind == ""
	})
	return kind
}

// TestNoTunables: no package-level var of export/ or internal/ is
// assigned once the program runs (a tunable a test or a command sets, seen
// by every mount in the process): settings travel in explicit values (a
// Config). An assignment counts wherever it is in the module, tests
// included: `=`, `op=`, `++`, or taking the var's address, to the var or
// to a field or element of it; a var's own declaration does not.
func TestNoTunables(t *testing.T) {
	vars := map[string]map[string]bool{} // import path → its package-level vars
	names := map[string]string{}         // import path → package name
	for _, top := range []string{"export", "internal"} {
		packages(t, top, func(path string, pkg *build.Package) {
			names[path] = pkg.Name
			vars[path] = map[string]bool{}
			fset := token.NewFileSet()
			for _, name := range pkg.GoFiles {
				f, err := parser.ParseFile(fset, filepath.Join(pkg.Dir, name), nil, 0)
				if err != nil {
					t.Fatal(err)
				}
				for _, vs := range packageVars(f) {
					for _, n := range vs.Names {
						if n.Name != "_" {
							vars[path][n.Name] = true
						}
					}
				}
			}
		})
	}
	root := repoRoot(t)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != root && (d.Name() == "testdata" || strings.HasPrefix(d.Name(), ".")) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") {
			return nil
		}
		rel, _ := filepath.Rel(root, filepath.Dir(p))
		for _, a := range assignedVars(t, p, module+"/"+filepath.ToSlash(rel), vars, names) {
			t.Errorf("%s: assigns package-level %s", a.pos, a.name)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// packageVars are the package-level var specs of f.
func packageVars(f *ast.File) []*ast.ValueSpec {
	var specs []*ast.ValueSpec
	for _, d := range f.Decls {
		if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.VAR {
			for _, s := range g.Specs {
				specs = append(specs, s.(*ast.ValueSpec))
			}
		}
	}
	return specs
}

type assignment struct {
	pos  token.Position
	name string // path.Var
}

// assignedVars are the assignments the Go file at p (of the package whose
// import path is dir) makes to the vars of vars (by import path), whose
// packages are named names.
func assignedVars(t *testing.T, p, dir string, vars map[string]map[string]bool, names map[string]string) []assignment {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, p, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	// own: the vars an unqualified name may be (the file's package, not
	// its external test package); imported: a qualifier's import path.
	var own map[string]bool
	if !strings.HasSuffix(f.Name.Name, "_test") {
		own = vars[dir]
	}
	decl := map[any]bool{}
	for _, vs := range packageVars(f) {
		decl[vs] = true
	}
	imported := map[string]string{}
	for _, imp := range f.Imports {
		path := strings.Trim(imp.Path.Value, `"`)
		name := names[path]
		if imp.Name != nil {
			name = imp.Name.Name
		}
		if vars[path] != nil {
			imported[name] = path
		}
	}
	var found []assignment
	// target reports the package var that assigning to e changes.
	target := func(e ast.Expr) {
		for {
			switch x := e.(type) {
			case *ast.ParenExpr:
				e = x.X
			case *ast.StarExpr:
				e = x.X
			case *ast.IndexExpr:
				e = x.X
			case *ast.SelectorExpr:
				// A qualifier is an unresolved name: not a local.
				if q, ok := x.X.(*ast.Ident); ok && q.Obj == nil && imported[q.Name] != "" {
					if path := imported[q.Name]; vars[path][x.Sel.Name] {
						found = append(found, assignment{fset.Position(x.Pos()), path + "." + x.Sel.Name})
					}
					return
				}
				e = x.X
			case *ast.Ident:
				// The file resolves its own names (a local, or a var
				// declared in it); a name it leaves unresolved is the
				// package's (or the universe's).
				if own[x.Name] && (x.Obj == nil || decl[x.Obj.Decl]) {
					found = append(found, assignment{fset.Position(x.Pos()), dir + "." + x.Name})
				}
				return
			default:
				return
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			if n.Tok != token.DEFINE {
				for _, l := range n.Lhs {
					target(l)
				}
			}
		case *ast.IncDecStmt:
			target(n.X)
		case *ast.UnaryExpr:
			if n.Op == token.AND {
				target(n.X)
			}
		}
		return true
	})
	return found
}
