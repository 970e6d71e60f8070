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
