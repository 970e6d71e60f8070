package gem

import (
	"fmt"
	"math"
	"strings"
)

// MTL is a GEM material file: `{material KIND {diffuse "…"} {bump "…"}
// {specular "…"} {blend none|test|blend} {alpharef n} {color "r g b a"}
// …}`. Texture names are kept as written (`$/model/x` or a plain name);
// resolving them to files is the caller's (see TexturePaths).
type MTL struct {
	Kind     string            // "simple", "bump", ...
	Textures map[string]string // slot ("diffuse", "bump", "specular", ...) → name
	// Slots lists the texture slots in file order.
	Slots []string
	Blend string // "none", "test", "blend" or "" when not given
	// AlphaRef is the alpha-test threshold, 0–255; -1 when not given.
	AlphaRef int
	// Color is the RGBA colour given by {color}, each 0–255; nil when not given.
	Color []float64
	// Fields holds every other group's arguments by name, for header.json.
	Fields map[string][]string
}

// mtlTextureSlots are the groups of a material that name a texture.
var mtlTextureSlots = map[string]bool{"diffuse": true, "bump": true, "specular": true, "diffuse1": true, "mask": true, "envmap": true, "lightmap": true, "height": true}

// ParseMTL reads a GEM .mtl file.
func ParseMTL(file string, b []byte) (*MTL, error) {
	nodes, err := ParseText(file, b)
	if err != nil {
		return nil, err
	}
	var top *Node
	for _, n := range nodes {
		if strings.EqualFold(n.Name, "material") {
			top = n
			break
		}
	}
	if top == nil {
		return nil, &TextError{file, 1, "no {material …} group"}
	}
	m := &MTL{Kind: top.Arg(0), Textures: map[string]string{}, AlphaRef: -1, Fields: map[string][]string{}}
	for _, c := range top.Children {
		name := strings.ToLower(c.Name)
		switch {
		case mtlTextureSlots[name]:
			if len(c.Args) != 1 {
				return nil, &TextError{file, c.Line, fmt.Sprintf("{%s} names %d textures, want 1", c.Name, len(c.Args))}
			}
			if _, dup := m.Textures[name]; !dup {
				m.Slots = append(m.Slots, name)
			}
			m.Textures[name] = c.Args[0]
		case name == "blend":
			m.Blend = strings.ToLower(c.Arg(0))
		case name == "alpharef":
			v, err := c.Floats(file, 1)
			if err != nil {
				return nil, err
			}
			m.AlphaRef = int(math.Max(0, math.Min(255, v[0])))
		case name == "color":
			v, err := c.Floats(file, 0)
			if err != nil {
				return nil, err
			}
			if len(v) != 3 && len(v) != 4 {
				return nil, &TextError{file, c.Line, fmt.Sprintf("{color} has %d numbers, want 3 or 4", len(v))}
			}
			m.Color = v
		default:
			m.Fields[c.Name] = c.Args
		}
	}
	return m, nil
}

// TexturePaths lists where a texture name of a material file resolves, in
// the order the game searches, as paths relative to the asset root (the
// folder holding texture/) for `$/` names, or to the material's folder
// for plain names; the caller tries each, then the mesh's folder for a
// plain name. A name without an extension gets ".dds".
func TexturePaths(name string) (rootRelative []string, local string) {
	name = strings.ReplaceAll(name, "\\", "/")
	withExt := name
	if i := strings.LastIndexByte(name, '.'); i < 0 || strings.Contains(name[i:], "/") {
		withExt += ".dds"
	}
	if rest, ok := strings.CutPrefix(withExt, "$/"); ok {
		return []string{"texture/common/" + rest, "texture/" + rest}, ""
	}
	return nil, withExt
}
