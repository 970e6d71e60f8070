package outputs_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	qgltf "github.com/qmuntal/gltf"

	"github.com/meshfs/meshfs/decode/decodetest"
	"github.com/meshfs/meshfs/decode/texture"
	"github.com/meshfs/meshfs/export/gltf/validator"
)

// sourceRef is one line of a SOURCE.txt's MATERIAL TEXTURE REFERENCES:
// material file, slot, name → resolved file, or the files tried.
var sourceRef = regexp.MustCompile(`^  (\S+) \{(\w+) "([^"]*)"\} -> (?:UNRESOLVED \[(.*)\]|(\S+))`)

// expectedRefs reads dataset's SOURCE.txt: "mtl slot name" → "=path" or
// "?tried1,tried2", paths relative to the dataset.
func expectedRefs(t *testing.T, dataset string) map[string]string {
	f, err := os.Open(filepath.Join(dataset, "SOURCE.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	want := map[string]string{}
	sc := bufio.NewScanner(f)
	in := false
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "MATERIAL TEXTURE REFERENCES") {
			in = true
			continue
		}
		if in && line == "" {
			break
		}
		if m := sourceRef.FindStringSubmatch(line); in && m != nil {
			v := "=" + m[5]
			if m[5] == "" {
				tried := strings.Split(strings.NewReplacer("'", "", " ", "").Replace(m[4]), ",")
				v = "?" + strings.Join(tried, ",")
			}
			want[m[1]+" "+m[2]+" "+m[3]] = v
		}
	}
	if len(want) == 0 {
		t.Fatalf("%s/SOURCE.txt lists no material texture references", dataset)
	}
	return want
}

type headerMaterial struct {
	Name     string `json:"name"`
	Source   string `json:"source"`
	Textures []struct {
		Slot       string   `json:"slot"`
		Name       string   `json:"name"`
		Path       string   `json:"path"`
		Unresolved []string `json:"unresolved"`
	} `json:"textures"`
	AlphaMode   string   `json:"alpha_mode"`
	AlphaCutoff *float64 `json:"alpha_cutoff"`
	Unresolved  []string `json:"unresolved"`
	Skins       []string `json:"skins"`
}

// TestGEMMaterialsReal converts every mesh of the GEM asset trees: the
// texture references header.json resolves, and those it leaves
// unresolved with the paths tried, are exactly SOURCE.txt's; every .glb
// passes the validator without errors and embeds each resolved diffuse
// texture at its size; the #variant skin beside a texture is listed.
func TestGEMMaterialsReal(t *testing.T) {
	for _, name := range []string{"gem-centurion", "gem-pilot"} {
		t.Run(name, func(t *testing.T) {
			dataset := decodetest.NeedShared(t, "assets/"+name)
			// Meshes are named by their real paths (outputs.Open), so is the
			// tree: ../shared may be reached through a link.
			if real, err := filepath.EvalSymlinks(dataset); err == nil {
				dataset = real
			}
			want := expectedRefs(t, dataset)
			// SOURCE.txt: head1..8.mtl are picked by the engine's
			// "random_face", named by no mesh.
			if name == "gem-pilot" {
				for k := range want {
					if regexp.MustCompile(`/head[1-8]\.mtl `).MatchString(k) {
						delete(want, k)
					}
				}
				if len(want) != 1 {
					t.Fatalf("gem-pilot: %d references besides the heads, want 1", len(want))
				}
			}
			got := map[string]string{}
			var glbs []string
			skins := 0
			for _, m := range meshFiles(t, dataset) {
				m.Tree = dataset
				rel := func(p string) string {
					r, err := filepath.Rel(dataset, filepath.Join(filepath.Dir(m.Path), filepath.FromSlash(p)))
					if err != nil {
						t.Fatal(err)
					}
					return filepath.ToSlash(r)
				}
				st, err := m.Scan(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				hdr, err := m.Header(st, nil)
				if err != nil {
					t.Fatal(err)
				}
				var h struct{ Materials []headerMaterial }
				if err := json.Unmarshal(hdr, &h); err != nil {
					t.Fatal(err)
				}
				glb, err := m.GLBFile(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				p := filepath.Join(t.TempDir(), m.GLBName())
				if err := os.WriteFile(p, glb, 0o644); err != nil {
					t.Fatal(err)
				}
				glbs = append(glbs, p)
				doc := new(qgltf.Document)
				if err := qgltf.NewDecoder(bytes.NewReader(glb)).Decode(doc); err != nil {
					t.Fatal(err)
				}
				for _, hm := range h.Materials {
					if hm.Source == "" {
						continue
					}
					for _, tx := range hm.Textures {
						key := rel(hm.Source) + " " + tx.Slot + " " + tx.Name
						if tx.Path != "" {
							got[key] = "=" + rel(tx.Path)
						} else {
							var tried []string
							for _, p := range tx.Unresolved {
								tried = append(tried, rel(p))
							}
							got[key] = "?" + strings.Join(tried, ",")
						}
						if tx.Slot == "diffuse" && tx.Path != "" {
							checkEmbedded(t, doc, glb, hm.Name, filepath.Join(filepath.Dir(m.Path), filepath.FromSlash(tx.Path)))
						}
					}
					for _, s := range hm.Skins {
						if strings.Contains(s, "#") {
							skins++
						}
					}
				}
			}
			// SOURCE.txt lists the references of the meshes it describes; one
			// it does not list (the Centurion's whole game folder holds more
			// meshes) must be unresolved with every path tried absent.
			for k, v := range got {
				if _, listed := want[k]; listed || !strings.HasPrefix(v, "?") {
					continue
				}
				for _, p := range strings.Split(v[1:], ",") {
					if _, err := os.Stat(filepath.Join(dataset, filepath.FromSlash(p))); err == nil {
						t.Errorf("%s: %s is there and was not resolved", k, p)
					}
				}
				want[k] = v
			}
			if !equalMaps(got, want) {
				t.Errorf("resolved references\n got %v\nwant %v", sorted(got), sorted(want))
			}
			if name == "gem-centurion" && skins == 0 {
				t.Errorf("centurion#d.dds is listed as no material's skin")
			}
			if err := validator.Available(); err != nil {
				if os.Getenv("CI") != "" {
					t.Fatalf("glTF validator: %v", err)
				}
				t.Skipf("validator: %v", err)
			}
			reps, err := validator.ValidateFiles(glbs...)
			if err != nil {
				t.Fatal(err)
			}
			for i, rep := range reps {
				if rep.Issues.NumErrors > 0 {
					t.Errorf("%s: validator errors %v", glbs[i], rep.Codes(validator.SeverityError))
				}
			}
		})
	}
}

// checkEmbedded: the glTF material called mat has a base colour texture
// whose embedded PNG has the size of the texture file tex.
func checkEmbedded(t *testing.T, doc *qgltf.Document, glb []byte, mat, tex string) {
	t.Helper()
	for _, gm := range doc.Materials {
		if gm.Name != mat {
			continue
		}
		bt := gm.PBRMetallicRoughness.BaseColorTexture
		if bt == nil {
			t.Errorf("material %q has no base colour texture (%s)", mat, tex)
			return
		}
		im := doc.Images[*doc.Textures[bt.Index].Source]
		bv := doc.BufferViews[*im.BufferView]
		js := int(uint32(glb[12]) | uint32(glb[13])<<8 | uint32(glb[14])<<16 | uint32(glb[15])<<24)
		bin := glb[20+js+8:]
		cfg, err := png.DecodeConfig(bytes.NewReader(bin[bv.ByteOffset : bv.ByteOffset+bv.ByteLength]))
		if err != nil {
			t.Fatalf("%s: %v", mat, err)
		}
		b, err := os.ReadFile(tex)
		if err != nil {
			t.Fatal(err)
		}
		src, err := texture.Decode(tex, bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Width != src.Rect.Dx() || cfg.Height != src.Rect.Dy() {
			t.Errorf("%s: embedded %d×%d, texture %d×%d", mat, cfg.Width, cfg.Height, src.Rect.Dx(), src.Rect.Dy())
		}
		return
	}
	t.Errorf("no glTF material %q", mat)
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

func sorted(m map[string]string) []string {
	var out []string
	for k, v := range m {
		out = append(out, k+" "+v)
	}
	sort.Strings(out)
	return out
}
