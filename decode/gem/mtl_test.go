package gem

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/meshfs/meshfs/decode/decodetest"
)

func TestParseMTL(t *testing.T) {
	src := `; a comment
{material bump
	{diffuse "$/model/centurions/centurion"}
	{bump "$/model/centurions/centurion_nm"} ; trailing comment
	{specular "$/model/centurions/centurion_sm"}
	{color "229 229 229 128"}
	{alpharef 128}
	{blend test}
	{gloss 0.5}
}`
	m, err := ParseMTL("body.mtl", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	want := &MTL{
		Kind: "bump",
		Textures: map[string]string{"diffuse": "$/model/centurions/centurion", "bump": "$/model/centurions/centurion_nm",
			"specular": "$/model/centurions/centurion_sm"},
		Slots:    []string{"diffuse", "bump", "specular"},
		Blend:    "test",
		AlphaRef: 128,
		Color:    []float64{229, 229, 229, 128},
		Fields:   map[string][]string{"gloss": {"0.5"}},
	}
	if !reflect.DeepEqual(m, want) {
		t.Errorf("got %+v\nwant %+v", m, want)
	}
}

func TestParseMTLErrors(t *testing.T) {
	for _, tc := range []struct{ src, want string }{
		{`{material simple {diffuse "a"}`, "x.mtl:1: group {material opened here is never closed"},
		{"{material simple}\n}", "x.mtl:2: } without {"},
		{`{material simple {diffuse "a}`, "x.mtl:1: string never closed"},
		{`{simple}`, "x.mtl:1: no {material …} group"},
		{"{material simple\n{color \"1 2\"}}", "x.mtl:2: {color} has 2 numbers, want 3 or 4"},
		{`{material simple {alpharef x}}`, `x.mtl:1: {alpharef}: "x" is not a number`},
		{`{material simple {diffuse "a" "b"}}`, "x.mtl:1: {diffuse} names 2 textures, want 1"},
		{`{ {material}}`, "x.mtl:1: a group must start with a name"},
		{strings.Repeat("{a ", 300), "nest more than 256 deep"},
	} {
		_, err := ParseMTL("x.mtl", []byte(tc.src))
		var te *TextError
		if !errors.As(err, &te) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.src, err, tc.want)
		}
	}
}

func TestTexturePaths(t *testing.T) {
	root, local := TexturePaths("$/model/centurions/centurion")
	if !reflect.DeepEqual(root, []string{"texture/common/model/centurions/centurion.dds", "texture/model/centurions/centurion.dds"}) || local != "" {
		t.Errorf("$/ name: %q %q", root, local)
	}
	root, local = TexturePaths(`centurion`)
	if root != nil || local != "centurion.dds" {
		t.Errorf("plain name: %q %q", root, local)
	}
	if _, local = TexturePaths("sub\\hat.tga"); local != "sub/hat.tga" {
		t.Errorf("name with extension: %q", local)
	}
}

// TestRealMTL parses every GEM material of ../shared/assets and checks
// that each texture it names with `$/` resolves to a file in its tree, or
// is one of the base-game textures the tree's SOURCE.txt lists as absent.
func TestRealMTL(t *testing.T) {
	root := decodetest.NeedShared(t, "assets")
	var files []string
	for _, tree := range []string{"gem-centurion", "gem-pilot"} {
		filepath.WalkDir(filepath.Join(root, tree), func(p string, d os.DirEntry, err error) error {
			if err == nil && strings.HasSuffix(p, ".mtl") {
				files = append(files, p)
			}
			return nil
		})
	}
	if len(files) == 0 {
		t.Fatal("no GEM .mtl under ../shared/assets")
	}
	found := 0
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		m, err := ParseMTL(p, b)
		if err != nil {
			t.Errorf("%v", err)
			continue
		}
		if m.Textures["diffuse"] == "" || m.Blend == "" {
			t.Errorf("%s: no diffuse or blend: %+v", p, m)
		}
		asset := p[:strings.Index(p, "/resource/")+len("/resource/")]
		for _, name := range m.Textures {
			rel, local := TexturePaths(name)
			cands := []string{filepath.Join(filepath.Dir(p), local)}
			if local == "" {
				cands = nil
				for _, r := range rel {
					cands = append(cands, filepath.Join(asset, r))
				}
			}
			for _, c := range cands {
				if _, err := os.Stat(c); err == nil {
					found++
					break
				}
			}
		}
	}
	// Of the 21 texture names in these trees, 9 name files that the trees
	// ship (8 under texture/common/, one beside its .mtl); the other 12 are
	// base-game files, as each tree's SOURCE.txt lists.
	if found != 9 {
		t.Errorf("%d texture names resolved to files, want 9", found)
	}
}

func FuzzParseMTL(f *testing.F) {
	f.Add([]byte("{material bump {diffuse \"$/a\"} {color \"1 2 3 4\"} {alpharef 9} {blend test}}"))
	f.Add([]byte("{Skeleton {bone \"basis\" {Orientation 1 0 0 0 -1 0 0 0 1} {VolumeView \"a.ply\"}}} ; c"))
	f.Fuzz(func(t *testing.T, b []byte) {
		ParseMTL("f.mtl", b)
	})
}
