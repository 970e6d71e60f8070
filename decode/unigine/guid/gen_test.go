package guid_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/decodetest"
	"github.com/meshfs/meshfs/decode/unigine/guid"
)

// g is a GUID of 40 hex digits starting with prefix.
func g(prefix string) string { return prefix + strings.Repeat("0", 40-len(prefix)) }

func write(t *testing.T, root, rel, body string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

func xmlMeta(id string, runtimes ...string) string {
	s := "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<asset version=\"2.15.0.1\">\n\t<guid>" + id + "</guid>\n\t<type>x</type>\n\t<runtimes>\n"
	for _, r := range runtimes {
		s += "\t\t<runtime id=\"" + r + "\" name=\"r\" link=\"1\"/>\n"
	}
	return s + "\t</runtimes>\n</asset>\n"
}

func jsonMeta(asset string) string {
	return "{\n\t\"asset\": \"" + asset + "\",\n\t\"alias\": \"a\",\n\t\"primary\": 1,\n\t\"version\": \"2.15.0.1\"\n}\n"
}

func mat(id string) string {
	return "<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<material version=\"2.15.0.1\" guid=\"" + id + "\">\n\t<texture name=\"albedo\">guid://" + g("7") + "</texture>\n</material>\n"
}

// TestScanGenerated builds a tiny project with each way a GUID names a file,
// and each way a file is skipped, and checks what resolves and what is
// recorded.
func TestScanGenerated(t *testing.T) {
	top := t.TempDir()
	root := filepath.Join(top, "data")
	var (
		srcGUID   = g("51")  // box.fbx's .meta
		rtMesh    = g("ab1") // runtime mesh made from box.fbx
		matMeta   = g("a1")  // a.mat: .meta and guid attribute agree
		matOnly   = g("b2")  // b.mat: guid attribute, no .meta
		copyMeta  = g("c3")  // copy.mat's own .meta; its attribute is a.mat's GUID
		absent    = g("d4")  // t.png.meta, t.png left out
		rtDDS     = g("cd1") // runtime .dds left out, its .meta names t2.png's GUID
		t2        = g("e5")
		dup       = g("f6")  // two .meta files claim it
		both      = g("121") // a runtime file and a source .meta claim it
		outside   = g("99")  // only in a .meta reached through a link out of the root
		misplaced = g("ab2") // a runtime file in the wrong folder
		world     = g("3")   // a world's .meta, not XML past <parameters>
	)
	write(t, root, ".runtimes/ab/"+rtMesh+".mesh", "mesh")
	write(t, root, ".runtimes/ab/"+rtMesh+".mesh.meta", jsonMeta(srcGUID))
	write(t, root, "models/box.fbx", "fbx")
	write(t, root, "models/box.fbx.meta", xmlMeta(srcGUID, rtMesh))
	write(t, root, "mats/a.mat", mat(matMeta))
	write(t, root, "mats/a.mat.meta", xmlMeta(matMeta))
	write(t, root, "mats/b.mat", mat(matOnly))
	write(t, root, "mats/copy.mat", mat(matMeta))
	write(t, root, "mats/copy.mat.meta", xmlMeta(copyMeta))
	write(t, root, "tex/t.png.meta", xmlMeta(absent))
	write(t, root, ".runtimes/cd/"+rtDDS+".dds.meta", jsonMeta(t2))
	write(t, root, "tex/t2.png", "png")
	write(t, root, "tex/t2.png.meta", xmlMeta(t2))
	write(t, root, "d1/x.png", "png")
	write(t, root, "d1/x.png.meta", xmlMeta(dup))
	write(t, root, "d2/y.png", "png")
	write(t, root, "d2/y.png.meta", xmlMeta(dup))
	write(t, root, ".runtimes/12/"+both+".node", "node")
	write(t, root, "scene.node", "node")
	write(t, root, "scene.node.meta", xmlMeta(both))
	write(t, root, ".runtimes/00/"+misplaced+".mesh", "mesh")
	// A world's .meta: its <parameters> hold elements named <1>, not XML.
	write(t, root, "w.world", "world")
	write(t, root, "w.world.meta", strings.Replace(xmlMeta(world), "</asset>",
		"\t<parameters><parameter type=\"xml\" name=\"viewports\"><viewport_list><1></1></viewport_list></parameter></parameters>\n</asset>", 1))
	// Broken input: each is skipped with an error naming it.
	write(t, root, "bad.png", "png")
	write(t, root, "bad.png.meta", "<asset><guid>"+g("88"))
	write(t, root, ".runtimes/ef/"+g("ef")+".mesh.meta", "{\"asset\": ")
	write(t, root, "notguid.png.meta", xmlMeta("not-a-guid"))
	write(t, root, "big.png.meta", xmlMeta(g("77"))+strings.Repeat(" ", guid.MaxMetaBytes))
	// Links out of the root are not followed: neither a linked folder nor
	// a linked .meta.
	write(t, top, "elsewhere/o.png", "png")
	write(t, top, "elsewhere/o.png.meta", xmlMeta(outside))
	if err := os.Symlink(filepath.Join(top, "elsewhere"), filepath.Join(root, "linked")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(top, "elsewhere", "o.png.meta"), filepath.Join(root, "o.png.meta")); err != nil {
		t.Fatal(err)
	}
	write(t, root, "o.png", "png")

	ix, err := guid.Scan(root, decodetest.DirFiles{Root: root})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ix.Errors {
		t.Logf("recorded: %v", e)
	}

	want := []struct {
		name, guid, rel, kind string
	}{
		{"runtime file", rtMesh, ".runtimes/ab/" + rtMesh + ".mesh", guid.KindRuntime},
		{"source beside its .meta", srcGUID, "models/box.fbx", guid.KindMeta},
		{".meta over the guid attribute of a copied .mat", matMeta, "mats/a.mat", guid.KindMeta},
		{"guid attribute of a .mat without .meta", matOnly, "mats/b.mat", guid.KindMat},
		{"copied .mat by its own .meta", copyMeta, "mats/copy.mat", guid.KindMeta},
		{"absent runtime, by its source asset", rtDDS, "tex/t2.png", guid.KindAsset},
		{"duplicate: first in path order", dup, "d1/x.png", guid.KindMeta},
		{"runtime over a source .meta", both, ".runtimes/12/" + both + ".node", guid.KindRuntime},
		{"world .meta read up to <parameters>", world, "w.world", guid.KindMeta},
		{"guid:// and upper case", "guid://" + strings.ToUpper(srcGUID), "models/box.fbx", guid.KindMeta},
	}
	for _, w := range want {
		p, kind, ok := ix.Resolve(w.guid)
		if wp := filepath.Join(root, filepath.FromSlash(w.rel)); !ok || p != wp || kind != w.kind {
			t.Errorf("%s: Resolve(%s) = %q, %q, %v; want %q, %q", w.name, w.guid, p, kind, ok, wp, w.kind)
		}
	}
	for _, id := range []string{absent, outside, misplaced, g("88"), g("77"), "guid://xyz", ""} {
		if p, kind, ok := ix.Resolve(id); ok {
			t.Errorf("Resolve(%q) = %q, %q; want unresolved", id, p, kind)
		}
	}
	if p, ok := ix.Missing(absent); !ok || p != filepath.Join(root, "tex", "t.png") {
		t.Errorf("Missing(%s) = %q, %v; want tex/t.png", absent, p, ok)
	}
	if a, ok := ix.Asset(rtMesh); !ok || a != srcGUID {
		t.Errorf("Asset(%s) = %q, %v; want %s", rtMesh, a, ok, srcGUID)
	}

	// Each skipped or overruled file is recorded once, by name and field.
	wantErr := []struct{ file, field string }{
		{"bad.png.meta", ""},
		{".runtimes/ef/" + g("ef") + ".mesh.meta", ""},
		{"notguid.png.meta", "guid"},
		{"big.png.meta", "size"},
		{"d2/y.png.meta", "guid"},
		{"mats/copy.mat", "guid"}, // its attribute is a.mat's too
		{".runtimes/00/" + misplaced + ".mesh", "folder"},
	}
	if len(ix.Errors) != len(wantErr) {
		t.Errorf("%d errors recorded, want %d", len(ix.Errors), len(wantErr))
	}
	for _, w := range wantErr {
		file := filepath.Join(root, filepath.FromSlash(w.file))
		found := false
		for _, e := range ix.Errors {
			var fe *decode.FormatError
			if errors.As(e, &fe) && fe.File == file && fe.Field == w.field {
				found = true
			}
		}
		if !found {
			t.Errorf("no error recorded for %s (field %q)", w.file, w.field)
		}
	}
	for _, e := range ix.Errors {
		var fe *decode.FormatError
		if errors.As(e, &fe) && fe.Field == "size" && !errors.Is(e, decode.ErrLimit) {
			t.Errorf("oversized .meta: %v does not wrap ErrLimit", e)
		}
		// The offset of a bad <guid> is just after its start tag.
		if errors.As(e, &fe) && strings.HasSuffix(fe.File, "notguid.png.meta") {
			if want := int64(strings.Index(xmlMeta("not-a-guid"), "<guid>") + len("<guid>")); fe.Offset != want {
				t.Errorf("%v: offset %d, want %d (after <guid>)", e, fe.Offset, want)
			}
		}
	}
}

// TestFindRoot finds the data root from files at any depth: the nearest
// folder with .runtimes, else the nearest named data, never above stop.
func TestFindRoot(t *testing.T) {
	top := t.TempDir()
	withRT := filepath.Join(top, "proj", "data")
	write(t, withRT, ".runtimes/ab/x", "")
	write(t, withRT, "a/data/b/c.mesh", "") // a nested folder called data
	bare := filepath.Join(top, "bare", "data")
	write(t, bare, "m/n.mesh", "")
	cases := []struct {
		path, stop, want string
	}{
		{filepath.Join(withRT, "a", "data", "b", "c.mesh"), "", withRT},
		{withRT, "", withRT},
		{filepath.Join(bare, "m", "n.mesh"), "", bare},
		{filepath.Join(bare, "m", "n.mesh"), filepath.Join(bare, "m"), ""},
		{filepath.Join(top, "elsewhere.mesh"), "", ""},
	}
	for _, c := range cases {
		got, ok := guid.FindRoot(c.path, c.stop, decodetest.DirFiles{Root: "/"})
		if got != c.want || ok != (c.want != "") {
			t.Errorf("FindRoot(%s, %q) = %q, %v; want %q", c.path, c.stop, got, ok, c.want)
		}
	}
}
