package guid_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/meshfs/meshfs/decode/decodetest"
	"github.com/meshfs/meshfs/decode/unigine/guid"
)

const skyrunner = "assets/unigine-skyrunner"

var metaRE = regexp.MustCompile(`<guid>([0-9a-f]{40})</guid>`)

// listed returns the files SOURCE.txt lists, slash paths beneath data/.
func listed(t *testing.T, dir string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "SOURCE.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var files []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); strings.HasPrefix(l, "data/") && !strings.Contains(l, " ") {
			files = append(files, strings.TrimPrefix(l, "data/"))
		}
	}
	if len(files) < 100 {
		t.Fatalf("SOURCE.txt lists %d files; its list was not found", len(files))
	}
	return files
}

// TestSkyrunnerSourceTxt checks the index against what SOURCE.txt says: each
// runtime it lists resolves to itself, and each source beside an XML .meta
// to itself unless a runtime has its GUID.
func TestSkyrunnerSourceTxt(t *testing.T) {
	dir := decodetest.NeedShared(t, skyrunner)
	root := filepath.Join(dir, "data")
	ix, err := guid.Scan(root, decodetest.DirFiles{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ix.Errors {
		t.Errorf("recorded: %v", e)
	}
	files := listed(t, dir)
	present := map[string]bool{}
	for _, f := range files {
		present[f] = true
	}
	runtimes, sources := 0, 0
	for _, f := range files {
		if strings.HasPrefix(f, ".runtimes/") && !strings.HasSuffix(f, ".meta") {
			id := strings.SplitN(filepath.Base(f), ".", 2)[0]
			p, kind, ok := ix.Resolve("guid://" + id)
			if want := filepath.Join(root, filepath.FromSlash(f)); !ok || p != want || kind != guid.KindRuntime {
				t.Errorf("runtime %s: Resolve = %q, %q, %v; want itself", f, p, kind, ok)
			}
			runtimes++
		}
		if strings.HasSuffix(f, ".meta") && !strings.HasPrefix(f, ".runtimes/") {
			b, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(f)))
			if err != nil {
				t.Fatal(err)
			}
			m := metaRE.FindSubmatch(b)
			if m == nil {
				t.Errorf("%s: no <guid>", f)
				continue
			}
			id, src := string(m[1]), strings.TrimSuffix(f, ".meta")
			p, kind, ok := ix.Resolve(id)
			switch {
			case present[".runtimes/"+id[:2]+"/"+id+filepath.Ext(src)]:
				// A runtime of its GUID wins; none in this project.
			case present[src]:
				if want := filepath.Join(root, filepath.FromSlash(src)); !ok || p != want || kind != guid.KindMeta {
					t.Errorf("%s: Resolve(%s) = %q, %q, %v; want %s", f, id, p, kind, ok, want)
				}
				sources++
			default:
				// The snapshot left the source out.
				if mp, mok := ix.Missing(id); ok || !mok || mp != filepath.Join(root, filepath.FromSlash(src)) {
					t.Errorf("%s: source absent, yet Resolve = %q, %v and Missing = %q, %v", f, p, ok, mp, mok)
				}
			}
		}
	}
	t.Logf("%d GUIDs indexed from %d .meta files; %d runtimes and %d sources checked", ix.Len(), ix.Metas, runtimes, sources)

	// The examples SOURCE.txt's rules are read from.
	for _, c := range []struct{ id, rel, kind string }{
		{"074fe425b80147400c23119f8bc332720893ef29", "JumpRunTest.world", guid.KindMeta},
		{"856a527c0a972ae0b1a7012ba883608a786bfe78", "csharp_template/template_props/primitives/materials/cube_mat.mat", guid.KindMeta},
		{"b6674b045b8932059769ee326a8eb293037aeb19", ".runtimes/b6/b6674b045b8932059769ee326a8eb293037aeb19.dds", guid.KindRuntime},
		{"4d4169f591e5f2d0fa2b27ef08e03482256f69f9", ".runtimes/4d/4d4169f591e5f2d0fa2b27ef08e03482256f69f9.node", guid.KindRuntime},
	} {
		p, kind, ok := ix.Resolve(c.id)
		if want := filepath.Join(root, filepath.FromSlash(c.rel)); !ok || p != want || kind != c.kind {
			t.Errorf("Resolve(%s) = %q, %q, %v; want %s, %s", c.id, p, kind, ok, want, c.kind)
		}
	}
	if a, ok := ix.Asset("0d6abf6a2478e7c1e4c29e2cd7a2839bca42643e"); !ok || a != "6fda30c49d158553cec0ca96559700fdd833ce38" {
		t.Errorf("Asset of wall_0.mesh's runtime = %q, %v; want its .meta's asset", a, ok)
	}
}

// TestSkyrunnerReferences resolves every guid:// that the project's .mat,
// .node and .world files name, and the bare GUIDs of their material= and
// parent= attributes, and reports how many resolve, and how.
func TestSkyrunnerReferences(t *testing.T) {
	dir := decodetest.NeedShared(t, skyrunner)
	root := filepath.Join(dir, "data")
	ix, err := guid.Scan(root, decodetest.DirFiles{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		re   *regexp.Regexp
		min  int // how many resolve in the project as committed
	}{
		{"guid://", regexp.MustCompile(`guid://([0-9a-f]{40})`), 18},
		{"material= and parent=", regexp.MustCompile(`(?:material|parent)="([0-9a-f]{40})"`), 1},
	} {
		refs := references(t, root, c.re)
		byKind, byExt := map[string]int{}, map[string]int{}
		var unresolved []string
		for _, r := range refs {
			p, kind, ok := ix.Resolve(r)
			if !ok {
				unresolved = append(unresolved, r)
				continue
			}
			if _, err := os.Stat(p); err != nil {
				t.Errorf("%s resolves to %s: %v", r, p, err)
			}
			byKind[kind]++
			byExt[filepath.Ext(p)]++
		}
		t.Logf("%s: %d distinct references, %d resolve: by kind %v, by extension %v",
			c.name, len(refs), len(refs)-len(unresolved), byKind, byExt)
		if resolved := len(refs) - len(unresolved); resolved < c.min {
			t.Errorf("%s: %d references resolve, fewer than the project's %d", c.name, resolved, c.min)
		}
		// A reference that does not resolve is to a file the snapshot
		// lacks (SOURCE.txt: "7 files the snapshot lacks") or the
		// engine's own (mesh_base): no file of the project claims it.
		for _, u := range unresolved {
			n := traces(t, root, u)
			t.Logf("%s: unresolved %s (%d traces in the project)", c.name, u, n)
			if n != 0 {
				t.Errorf("%s: %s unresolved, yet %d .meta or .mat files, or file names, claim it", c.name, u, n)
			}
		}
	}
}

// references returns the distinct GUIDs re's first group finds in the .mat,
// .node and .world files beneath root, sorted.
func references(t *testing.T, root string, re *regexp.Regexp) []string {
	t.Helper()
	seen := map[string]bool{}
	err := filepath.WalkDir(root, func(p string, de os.DirEntry, err error) error {
		if err != nil || de.IsDir() {
			return err
		}
		switch filepath.Ext(p) {
		case ".mat", ".node", ".world":
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for _, m := range re.FindAllSubmatch(b, -1) {
				seen[string(m[1])] = true
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	refs := make([]string, 0, len(seen))
	for r := range seen {
		refs = append(refs, r)
	}
	sort.Strings(refs)
	return refs
}

// traces counts the files of root that claim id as theirs: a .meta's <guid>,
// a runtime's id= or "asset", a .mat's guid=, a file named by it. (A mention
// such as an .fbx .meta's material_guids "mesh_base,<guid>", the engine's
// own base material, is no claim.)
func traces(t *testing.T, root, id string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(root, func(p string, de os.DirEntry, err error) error {
		if err != nil || de.IsDir() {
			return err
		}
		if strings.HasPrefix(de.Name(), id) {
			n++
			return nil
		}
		if e := filepath.Ext(p); e == ".meta" || e == ".mat" {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			for _, claim := range []string{"<guid>" + id, `id="` + id, `guid="` + id, `"asset": "` + id} {
				if strings.Contains(string(b), claim) {
					n++
					break
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// BenchmarkScan indexes the skyrunner project's data/ folder.
func BenchmarkScan(b *testing.B) {
	dir := decodetest.NeedShared(b, skyrunner)
	root := filepath.Join(dir, "data")
	var metas int
	for b.Loop() {
		ix, err := guid.Scan(root, decodetest.DirFiles{Root: root})
		if err != nil {
			b.Fatal(err)
		}
		metas = ix.Metas
	}
	b.ReportMetric(float64(metas), "metas/op")
}

// BenchmarkScan1500 indexes a generated project of the size issue #29
// names: 1 500 sources beside XML .meta files (in 50 folders) and 1 500
// runtimes with JSON .meta files, 3 000 .meta files in all.
func BenchmarkScan1500(b *testing.B) {
	root := b.TempDir()
	for i := range 1500 {
		src := fmt.Sprintf("%02x%038x", i%256, i)
		rt := fmt.Sprintf("%02x%038x", (i+7)%256, i+1<<20)
		rel := fmt.Sprintf("props/f%02d/p%04d.fbx", i%50, i)
		for _, f := range []struct{ rel, body string }{
			{rel, "fbx"},
			{rel + ".meta", xmlMeta(src, rt)},
			{".runtimes/" + rt[:2] + "/" + rt + ".mesh", "mesh"},
			{".runtimes/" + rt[:2] + "/" + rt + ".mesh.meta", jsonMeta(src)},
		} {
			p := filepath.Join(root, filepath.FromSlash(f.rel))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				b.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(f.body), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	var ix *guid.Index
	for b.Loop() {
		var err error
		if ix, err = guid.Scan(root, decodetest.DirFiles{Root: root}); err != nil {
			b.Fatal(err)
		}
	}
	if ix.Metas != 3000 || ix.Len() != 3000 || len(ix.Errors) != 0 {
		b.Fatalf("%d .meta read, %d GUIDs, errors %v; want 3000, 3000, none", ix.Metas, ix.Len(), ix.Errors)
	}
	b.ReportMetric(float64(ix.Metas), "metas/op")
}
