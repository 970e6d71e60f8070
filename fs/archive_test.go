package fs

import (
	"archive/zip"
	"bytes"
	"image"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/woozymasta/bcn"

	"github.com/meshfs/meshfs/decode/decodetest"
	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/internal/source"
	"github.com/meshfs/meshfs/internal/store"
)

// mountedFiles reads every file under root in a mount (skipping the
// folder skip), by slash path, and checks that each one's size is its
// stat's; folders map to their sorted listing.
func mountedFiles(t *testing.T, root, skip string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if rel == skip {
			return filepath.SkipDir
		}
		if d.IsDir() {
			ents, err := os.ReadDir(p)
			var names []string
			for _, e := range ents {
				if rel != "." || e.Name() != skip {
					names = append(names, e.Name())
				}
			}
			out[rel+"/"] = strings.Join(names, "\n")
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if fi, err := os.Stat(p); err != nil || fi.Size() != int64(len(b)) {
			t.Errorf("%s: stat %v (%v), %d bytes read", p, fi.Size(), err, len(b))
		}
		out[rel] = string(b)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestArchivesMountLikeLoose: a folder holding ZIP copies of each tree of
// ../shared/assets (stored and deflated entries, tf-inova's once more with
// ZIP64 end records) shows, in each archive's folder, the same files and
// folders (meshes, models, header.json, every output, the textures' PNGs,
// plain files), byte for byte, as a mount of the loose trees. Every tree
// in the default mode; with a handle per open (and race-built), the small
// trees: the modes differ in how the kernel reads, not in what the trees
// hold.
func TestArchivesMountLikeLoose(t *testing.T) { bothModes(t, testArchivesMountLikeLoose) }

func testArchivesMountLikeLoose(t *testing.T) {
	assets := decodetest.NeedShared(t, "assets")
	trees, err := os.ReadDir(assets)
	if err != nil {
		t.Fatal(err)
	}
	packed := t.TempDir()
	var names []string
	// Race-built, the big trees' conversions outlast their timeout: the
	// small ones still put archives and conversions under the detector.
	small := map[string]bool{"gem-pilot": true, "tf-roadsign": true, "tf-nan": true, "unigine": true}
	few := raceOn || strings.HasSuffix(t.Name(), "/"+handlesMode)
	for _, tr := range trees {
		if tr.IsDir() && (!few || small[tr.Name()]) {
			names = append(names, tr.Name())
			decodetest.ZipTree(t, filepath.Join(assets, tr.Name()), filepath.Join(packed, tr.Name()+".zip"), 0)
		}
	}
	zip64 := "tf-inova"
	if few {
		zip64 = "tf-roadsign"
	}
	decodetest.ZipTree(t, filepath.Join(assets, zip64), filepath.Join(packed, "inova64.pak"), 65600)
	_, loose := mountT(t, assets, Config{})
	_, pmnt := mountT(t, packed, Config{})
	files := 0
	for _, name := range append(names, "inova64.pak") {
		wantDir := filepath.Join(loose, strings.TrimSuffix(name, ".pak"))
		gotDir := filepath.Join(pmnt, name+".zip")
		if strings.HasSuffix(name, ".pak") {
			wantDir, gotDir = filepath.Join(loose, zip64), filepath.Join(pmnt, name)
		}
		want, got := mountedFiles(t, wantDir, ""), mountedFiles(t, gotDir, "pad")
		for p, b := range want {
			if g, ok := got[p]; !ok || g != b {
				t.Errorf("%s: %d bytes loose, %d (present %v) in %s", p, len(b), len(g), ok, name)
			}
		}
		for p := range got {
			if _, ok := want[p]; !ok {
				t.Errorf("%s: in %s only", p, name)
			}
		}
		files += len(want)
	}
	if files < 500 && !few {
		t.Errorf("%d files and folders compared", files)
	}
}

// gemZip writes into the ZIP at dest the GEM fixtures names (by their
// names in the archive), or for a name that is no fixture its own bytes.
func gemZip(t *testing.T, dest string, names map[string]string) {
	t.Helper()
	dir := t.TempDir()
	for in, fixture := range names {
		b, err := os.ReadFile(filepath.Join(repoRoot(t), "testdata", "gem", fixture))
		if err != nil {
			b = []byte(fixture)
		}
		write(t, filepath.Join(dir, filepath.FromSlash(in)), b)
	}
	decodetest.ZipTree(t, dir, dest, 0)
}

// TestArchiveChangeRemakes: rewriting an archive in place makes the mount
// show its new entries: a mesh inside it re-made from the new bytes, an
// entry it no longer holds gone, one it gained there; a plain entry reads
// with its exact size. In both open modes.
func TestArchiveChangeRemakes(t *testing.T) { bothModes(t, testArchiveChangeRemakes) }

func testArchiveChangeRemakes(t *testing.T) {
	src := t.TempDir()
	pak := filepath.Join(src, "game.pak")
	gemZip(t, pak, map[string]string{"m/a.ply": "eply_multi_uv.ply", "m/old.txt": "plain text"})
	_, mnt := mountT(t, src, Config{})
	glb := filepath.Join(mnt, "game.pak", "m", "a.ply", "a.glb")
	before, err := os.ReadFile(glb)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(mnt, "game.pak", "m", "old.txt")); err != nil || string(b) != "plain text" {
		t.Errorf("a plain entry: %v, %q", err, b)
	}
	gemZip(t, pak+".new", map[string]string{"m/a.ply": "pm01_gem3.ply", "m/new.ply": "eply_multi_uv.ply"})
	b, _ := os.ReadFile(pak + ".new")
	write(t, pak, b) // in place: the same inode
	os.Remove(pak + ".new")
	if !waitFor(5*time.Second, func() bool {
		after, err := os.ReadFile(glb)
		return err == nil && !bytes.Equal(after, before)
	}) {
		t.Fatal("a.glb is the old archive's after the rewrite")
	}
	if _, err := os.Stat(filepath.Join(mnt, "game.pak", "m", "old.txt")); !os.IsNotExist(err) {
		t.Errorf("an entry the archive no longer holds: %v", err)
	}
	if _, err := os.Stat(filepath.Join(mnt, "game.pak", "m", "new.ply", "new.glb")); err != nil {
		t.Errorf("a mesh the archive gained: %v", err)
	}
}

// TestBrokenArchiveFolder: an archive cut inside its central directory
// is a folder holding error.txt (naming what went wrong, even when the
// archive holds an entry of that name) and the entries recovered from its
// local headers, whose mesh converts. In both open modes.
func TestBrokenArchiveFolder(t *testing.T) { bothModes(t, testBrokenArchiveFolder) }

func testBrokenArchiveFolder(t *testing.T) {
	src := t.TempDir()
	pak := filepath.Join(src, "cut.zip")
	gemZip(t, pak, map[string]string{"a.ply": "eply_multi_uv.ply", "b.txt": "plain text", "error.txt": "forged: all is well"})
	b, _ := os.ReadFile(pak)
	write(t, pak, b[:len(b)-30])
	_, mnt := mountT(t, src, Config{})
	got := names(t, filepath.Join(mnt, "cut.zip"))
	if strings.Join(got, " ") != "a.ply/ b.txt error.txt" {
		t.Errorf("the broken archive's folder lists %v", got)
	}
	if txt, err := os.ReadFile(filepath.Join(mnt, "cut.zip", "error.txt")); err != nil || !strings.Contains(string(txt), "recovered from local headers") {
		t.Errorf("error.txt: %v\n%s", err, txt)
	}
	if _, err := os.ReadFile(filepath.Join(mnt, "cut.zip", "a.ply", "a.glb")); err != nil {
		t.Errorf("the recovered mesh: %v", err)
	}
}

// BenchmarkFirstReadGLBPacked: the first read of benchSource's big.ply's
// .glb (conversion included, in MB/s of source) loose, and from inside a
// ZIP holding it stored and deflated: each iteration a new version of the
// source (loose: the mesh's time; packed: the archive's).
func BenchmarkFirstReadGLBPacked(b *testing.B) {
	big := filepath.Join(benchSource(b), "big.ply")
	src := b.TempDir()
	data, err := os.ReadFile(big)
	if err != nil {
		b.Fatal(err)
	}
	write(b, filepath.Join(src, "big.ply"), data)
	for _, m := range []struct {
		name   string
		method uint16
	}{{"stored.zip", zip.Store}, {"deflated.zip", zip.Deflate}} {
		var buf bytes.Buffer
		w := zip.NewWriter(&buf)
		f, _ := w.CreateHeader(&zip.FileHeader{Name: "big.ply", Method: m.method})
		f.Write(data)
		w.Close()
		write(b, filepath.Join(src, m.name), buf.Bytes())
	}
	fsys, mnt := mountT(b, src, Config{})
	for _, c := range []struct{ name, touch, glb string }{
		{"loose", "big.ply", "big.ply/big.glb"},
		{"stored", "stored.zip", "stored.zip/big.ply/big.glb"},
		{"deflated", "deflated.zip", "deflated.zip/big.ply/big.glb"},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			base, before := time.Now(), conversions(fsys.Stats())
			defer func() {
				if n := conversions(fsys.Stats()) - before; n < int64(b.N) {
					b.Errorf("%d conversions for %d first reads", n, b.N)
				}
			}()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				if err := os.Chtimes(filepath.Join(src, c.touch), base, base.Add(time.Duration(i+1)*time.Second)); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				prev := conversions(fsys.Stats())
				for try := 0; ; try++ {
					// Until the watcher's news reaches the kernel, the
					// old path may serve the old version's pages.
					_, err := os.ReadFile(filepath.Join(mnt, c.glb))
					if err == nil && conversions(fsys.Stats()) > prev {
						break
					} else if try == 1000 {
						b.Fatal("no conversion of the new version: ", err)
					}
					time.Sleep(time.Millisecond)
				}
			}
		})
	}
}

// TestPrewarmArchive: --prewarm converts the meshes inside an archive
// too (a nested archive's only with nesting on), so that reading one then
// converts nothing.
func TestPrewarmArchive(t *testing.T) {
	src := t.TempDir()
	inner := filepath.Join(t.TempDir(), "inner.zip")
	gemZip(t, inner, map[string]string{"c.ply": "eply_multi_uv.ply"})
	nested, _ := os.ReadFile(inner)
	dir := t.TempDir()
	for name, fixture := range map[string]string{"m/a.ply": "eply_multi_uv.ply", "b.ply": "pm01_gem3.ply"} {
		b, _ := os.ReadFile(filepath.Join(repoRoot(t), "testdata", "gem", fixture))
		write(t, filepath.Join(dir, filepath.FromSlash(name)), b)
	}
	write(t, filepath.Join(dir, "nested.zip"), nested)
	decodetest.ZipTree(t, dir, filepath.Join(src, "game.pak"), 0)
	f, mnt := mountT(t, src, Config{})
	f.Prewarm()
	if !waitFor(30*time.Second, func() bool { return prewarmed(f) }) {
		t.Fatal("prewarm did not finish")
	}
	if ps := f.Stats().Prewarm; ps.Found != 2 || ps.Done != 2 || ps.Failed != 0 {
		t.Fatalf("prewarm: %+v, want the archive's 2 meshes", ps)
	}
	before := conversions(f.Stats())
	if _, err := os.ReadFile(filepath.Join(mnt, "game.pak", "m", "a.ply", "a.glb")); err != nil {
		t.Fatal(err)
	}
	if n := conversions(f.Stats()) - before; n != 0 {
		t.Errorf("reading a prewarmed mesh converted %d times", n)
	}

	// With nesting on (--nested), the nested archive's mesh too.
	f, _ = mountT(t, src, nestedConfig())
	f.Prewarm()
	if !waitFor(30*time.Second, func() bool { return prewarmed(f) }) {
		t.Fatal("prewarm did not finish")
	}
	if ps := f.Stats().Prewarm; ps.Found != 3 || ps.Done != 3 || ps.Failed != 0 {
		t.Fatalf("prewarm with nesting: %+v, want 3 meshes", ps)
	}
}

// nestedConfig is a mount's config with nesting on (--nested): its view
// descends archives inside archives.
func nestedConfig() Config {
	lim := outputs.DefaultLimits
	lim.View = source.NewView()
	lim.View.SetNested(true)
	return Config{Store: store.Config{Limits: &lim}}
}

// bc1DDS is a w×h BC1 DDS of a pattern set by seed (bcn's encoder).
func bc1DDS(t *testing.T, w, h int, seed uint8) []byte {
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = uint8(i*13) ^ seed
	}
	return decodetest.DDS(t, img, bcn.FormatBC1, false)
}

// TestOverlayPakInMount: a mod mounted with an asset path whose
// texture.pak alone holds a $/ texture the mod's material names embeds it
// (header.json names it beneath the archive), and rewriting the archive
// re-makes the mod's .glb: the archive file is in the mesh's version set.
func TestOverlayPakInMount(t *testing.T) {
	root := t.TempDir()
	mod, game := filepath.Join(root, "mod", "resource"), filepath.Join(root, "game", "resource")
	ply, err := os.ReadFile(filepath.Join(repoRoot(t), "testdata", "gem", "eply_tangents_textures.ply"))
	if err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(mod, "entity", "tank", "body.ply"), ply)
	write(t, filepath.Join(mod, "entity", "tank", "body.mtl"), []byte("{material bump\n\t{diffuse \"$/model/common_nm\"}\n}"))
	os.MkdirAll(filepath.Join(mod, "texture"), 0o755)
	packTexture := func(seed uint8) {
		dir := t.TempDir()
		write(t, filepath.Join(dir, "texture", "model", "common_nm.dds"), bc1DDS(t, 8, 8, seed))
		decodetest.ZipTree(t, dir, filepath.Join(game, "texture.pak"), 0)
	}
	os.MkdirAll(game, 0o755)
	packTexture(1)
	lim := outputs.DefaultLimits
	lim.AssetPaths = []string{game}
	_, mnt := mountT(t, filepath.Join(root, "mod"), Config{Store: store.Config{Limits: &lim}})
	dir := filepath.Join(mnt, "resource", "entity", "tank", "body.ply")
	hdr, err := os.ReadFile(filepath.Join(dir, "header.json"))
	if want := filepath.Join(game, "texture.pak", "texture", "model", "common_nm.dds"); err != nil || !bytes.Contains(hdr, []byte(`"path": "`+want+`"`)) {
		t.Fatalf("header.json does not name %s (%v):\n%s", want, err, hdr)
	}
	before, err := os.ReadFile(filepath.Join(dir, "body.glb"))
	if err != nil || !bytes.Contains(before, []byte("image/png")) {
		t.Fatalf("body.glb embeds no image (%v)", err)
	}
	packTexture(2)
	if !waitFor(5*time.Second, func() bool {
		after, err := os.ReadFile(filepath.Join(dir, "body.glb"))
		return err == nil && !bytes.Equal(after, before)
	}) {
		t.Error("body.glb is not re-made after its texture's archive changed")
	}
}
