package clienttest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/meshfs/meshfs/export/gltf/validator"
)

var (
	clients        = flag.Bool("clients", false, "run the real-client test: glTF validator, Blender and assimp over the mounted fixtures and real files (make test-clients)")
	updateWarnings = flag.Bool("update-warnings", false, "with -clients: rewrite validator-warnings.txt from this run (review the diff)")
)

const warningsFile = "validator-warnings.txt"

// TestClients is the real-client test; see the package documentation.
func TestClients(t *testing.T) {
	if !*clients {
		t.Skip("needs Blender 3.4, assimp and the glTF validator: run make test-clients (go test ./internal/clienttest -clients)")
	}
	blender := lookTool(t, "blender", "apt-get install --no-install-recommends blender python3-numpy")
	assimp := lookTool(t, "assimp", "apt-get install --no-install-recommends assimp-utils")
	if err := validator.Available(); err != nil {
		t.Fatal(err)
	}

	bin := buildMeshfs(t)
	var folders []*meshFolder
	for _, r := range sourceRoots(t) {
		folders = append(folders, meshFolders(t, r, mountTree(t, bin, r.dir))...)
	}
	if len(folders) == 0 {
		t.Fatal("no mesh folders found")
	}
	t.Logf("%d mesh folders read from the mounts", len(folders))

	exp := map[*meshFolder]*fileExpect{}
	var judged []*meshFolder
	for _, mf := range folders {
		s, err := decodeSource(mf.source, mf.root.dir)
		if err != nil {
			// A source the decoder rejects (a deliberately broken fixture)
			// is no client's business: the mount must say why instead.
			if mf.errTxt == "" {
				t.Errorf("%s: decoding fails (%v), but the mount shows no error.txt", mf.label(), err)
			}
			if mf.root.whole {
				t.Errorf("%s: does not convert: %v", mf.label(), err)
			}
			t.Logf("%s: broken source, not imported: %v", mf.label(), err)
			continue
		}
		if mf.errTxt != "" {
			t.Errorf("%s: error.txt in the mount: %s", mf.label(), mf.errTxt)
		}
		if mf.glb == "" || (mf.obj == "") == mf.hasOBJ {
			t.Errorf("%s: the mount shows no .glb, or an .obj where the folder table has none or none where it has one", mf.label())
		}
		judged = append(judged, mf)
		e := expectFrom(s)
		exp[mf] = &e
		checkHeader(t, mf, &e)
	}
	folders = judged

	t.Run("validator", func(t *testing.T) { checkValidator(t, folders) })
	// The import rules the counts rely on, checked on a scene made for them.
	rf, re := rulesFolder(t)
	exp[rf] = re
	imported := append(folders[:len(folders):len(folders)], rf)
	t.Run("assimp", func(t *testing.T) { checkAssimp(t, assimp, imported, exp) })
	t.Run("blender", func(t *testing.T) { checkBlender(t, blender, imported, exp) })
	t.Run("animations", func(t *testing.T) { checkPlays(t, blender, folders, exp) })
}

// checkHeader compares the scene with the totals of header.json (read
// from the mount) that an importer shows as they are: triangles (less those
// repairs dropped), morph targets and animations. (Its vertices count the source's records, bones
// the source's bone list: see expect_test.go.)
func checkHeader(t *testing.T, mf *meshFolder, e *fileExpect) {
	b, err := os.ReadFile(filepath.Join(mf.dir, "header.json"))
	if err != nil {
		t.Errorf("%s: %v", mf.label(), err)
		return
	}
	var h struct {
		Counts *struct {
			Triangles    *int `json:"triangles"`
			MorphTargets *int `json:"morph_targets"`
			Animations   *int `json:"animations"`
		} `json:"counts"`
		// The source's own bone names: GEM's SKIN chunk, UNIGINE's joints.
		Skin *struct {
			Bones []string `json:"bones"`
		} `json:"skin"`
		Joints []struct {
			Name string `json:"name"`
		} `json:"joints"`
	}
	if err := json.Unmarshal(b, &h); err != nil {
		t.Errorf("%s: header.json: %v", mf.label(), err)
		return
	}
	if h.Counts == nil {
		t.Errorf("%s: header.json has no counts", mf.label())
		return
	}
	if h.Skin != nil {
		e.sourceBones = append(e.sourceBones, h.Skin.Bones...)
	}
	for _, j := range h.Joints {
		e.sourceBones = append(e.sourceBones, j.Name)
	}
	c := e.scene.Count()
	// The header counts the source's triangles; repairs of non-finite
	// values may have dropped some, and say how many uses they had.
	dropped := 0
	for _, r := range e.scene.Repairs {
		dropped += r.Triangles
	}
	for _, f := range []struct {
		name   string
		hdr    *int
		scene  int
		spread int
	}{{"triangles", h.Counts.Triangles, c.Triangles, dropped}, {"morph_targets", h.Counts.MorphTargets, c.MorphTargets, 0},
		{"animations", h.Counts.Animations, c.Animations, 0}} {
		switch {
		case f.hdr == nil:
			t.Errorf("%s: header.json counts has no %s", mf.label(), f.name)
		case *f.hdr < f.scene || *f.hdr > f.scene+f.spread:
			t.Errorf("%s: header.json counts.%s is %d, the decoded scene has %d (%d dropped by repairs)", mf.label(), f.name, *f.hdr, f.scene, f.spread)
		}
	}
}

// checkValidator validates every .glb from the mount in one validator run:
// no errors, and the warnings are exactly the reviewed list.
func checkValidator(t *testing.T, folders []*meshFolder) {
	var paths []string
	var labels []string
	for _, mf := range folders {
		for _, p := range []string{mf.glb, mf.animated} {
			if p != "" {
				paths = append(paths, p)
				labels = append(labels, mf.label()+"/"+filepath.Base(p))
			}
		}
	}
	reports, err := validator.ValidateFiles(paths...)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i, r := range reports {
		if r.Fatal != "" {
			t.Errorf("%s: validator could not read it: %s", labels[i], r.Fatal)
			continue
		}
		count := map[string]int{}
		for _, m := range r.Issues.Messages {
			switch m.Severity {
			case validator.SeverityError:
				t.Errorf("%s: %s", labels[i], m)
			case validator.SeverityWarning:
				count[m.Code]++
			}
		}
		for code, n := range count {
			got = append(got, fmt.Sprintf("%s %s %d", labels[i], code, n))
		}
	}
	sort.Strings(got)
	t.Logf("validated %d .glb files: %d warning lines", len(paths), len(got))
	mounted := map[string]bool{}
	for _, mf := range folders {
		mounted[mf.root.label] = true
	}
	checkWarnings(t, got, mounted)
}

// checkWarnings compares this run's warnings ("FILE CODE COUNT" lines) with
// validator-warnings.txt, whose comment lines hold the review of each code.
// Lines of a root that was not mounted (a ../shared folder absent) are not
// compared.
func checkWarnings(t *testing.T, got []string, mounted map[string]bool) {
	b, err := os.ReadFile(warningsFile)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var comments, want []string
	missing := false
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
			comments = append(comments, sc.Text())
		case !mounted[strings.SplitN(line, "/", 2)[0]]:
			missing = true
		default:
			want = append(want, line)
		}
	}
	if *updateWarnings {
		if missing {
			t.Fatal("-update-warnings needs every root of the list mounted (../shared), or their lines would be lost")
		}
		var out bytes.Buffer
		for _, c := range comments {
			out.WriteString(c + "\n")
		}
		for _, g := range got {
			out.WriteString(g + "\n")
		}
		if err := os.WriteFile(warningsFile, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	sort.Strings(want)
	wantSet := map[string]bool{}
	for _, w := range want {
		wantSet[w] = true
	}
	gotSet := map[string]bool{}
	for _, g := range got {
		gotSet[g] = true
		if !wantSet[g] {
			t.Errorf("new validator warning (fix it, or review it into %s with -update-warnings): %s", warningsFile, g)
		}
	}
	for _, w := range want {
		if !gotSet[w] {
			t.Errorf("listed validator warning no longer occurs (remove it from %s): %s", warningsFile, w)
		}
	}
	// Every listed code must carry a review comment.
	for _, w := range want {
		code := strings.Fields(w)[1]
		reviewed := false
		for _, c := range comments {
			if strings.Contains(c, code) {
				reviewed = true
			}
		}
		if !reviewed {
			t.Errorf("%s: no comment reviews warning code %s", warningsFile, code)
		}
	}
}

var assimpFaces = regexp.MustCompile(`(?m)^Faces:\s+(\d+)\s*$`)

// checkAssimp reads every .obj from the mount with `assimp info` and
// compares its face count with the scene's triangles (assimp keeps
// degenerate and repeated triangles: its info command does not clean up).
func checkAssimp(t *testing.T, assimp string, folders []*meshFolder, exp map[*meshFolder]*fileExpect) {
	for _, mf := range folders {
		e := exp[mf]
		if mf.obj == "" || e == nil {
			continue
		}
		if e.triangles == 0 {
			// assimp refuses a scene without meshes (an .ani track's .obj
			// holds none); Blender still imports it.
			continue
		}
		out, err := exec.Command(assimp, "info", mf.obj).CombinedOutput()
		if err != nil {
			t.Errorf("%s: assimp info: %v\n%s", mf.label(), err, lastLines(out, 10))
			continue
		}
		m := assimpFaces.FindSubmatch(out)
		if m == nil {
			t.Errorf("%s: assimp info printed no face count:\n%s", mf.label(), lastLines(out, 10))
			continue
		}
		if n, _ := strconv.Atoi(string(m[1])); n != e.triangles {
			t.Errorf("%s: assimp reads %d faces from the .obj, the scene has %d triangles", mf.label(), n, e.triangles)
		}
	}
}

func lastLines(b []byte, n int) string {
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
