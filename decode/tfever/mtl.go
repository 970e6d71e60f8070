package tfever

import (
	"context"
	"fmt"
	"path"
	"strings"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/tfever/luasandbox"
)

// Material is a Transport Fever .mtl file: a Lua script whose data()
// returns `{type = "PHYSICAL_NRML_MAP", params = {map_albedo = {fileName =
// "…", …}, alpha_test = {alphaThreshold = n}, two_sided = {twoSided = b},
// …}, order = n}`. Texture file names are relative to res/textures/.
type Material struct {
	Type string
	// Maps are the params whose table names a fileName (map_albedo,
	// map_normal, map_metal_gloss_ao, …), in key order.
	Maps []TextureMap
	// AlphaThreshold is alpha_test's threshold, 0–1; -1 without alpha_test.
	AlphaThreshold float64
	TwoSided       bool
	// Params is the whole params table, for header.json.
	Params *luasandbox.Table
}

// TextureMap is one texture a material names.
type TextureMap struct {
	Slot     string // "map_albedo", "map_normal", ...
	FileName string // relative to res/textures/
	// RedGreen marks a normal map that stores X and Y only (Z rebuilt).
	RedGreen bool
}

// Map returns the map of slot, or nil.
func (m *Material) Map(slot string) *TextureMap {
	for i := range m.Maps {
		if m.Maps[i].Slot == slot {
			return &m.Maps[i]
		}
	}
	return nil
}

// ScriptModule maps a module name that a Transport Fever script requires
// to its file under res/: "a/b" and "a.b" are res/scripts/a/b.lua. Names
// that would leave res/scripts/ are refused.
func ScriptModule(module string) (string, error) {
	m := strings.ReplaceAll(module, ".", "/")
	if m == "" || strings.HasPrefix(m, "/") || strings.Contains(m, "\\") || strings.Contains(m, "\x00") {
		return "", fmt.Errorf("module name %q is not a relative path", module)
	}
	for _, part := range strings.Split(m, "/") {
		if part == "" {
			return "", fmt.Errorf("module name %q has an empty part", module)
		}
	}
	return path.Join("scripts", m+".lua"), nil
}

// ParseMaterial runs the material script name (bytes script) in the
// sandbox, with load serving the modules it requires (nil: none may be).
func ParseMaterial(ctx context.Context, name string, script []byte, load luasandbox.Loader) (*Material, error) {
	v, err := luasandbox.RunRequire(ctx, name, script, luasandbox.Limits{}, load)
	if err != nil {
		return nil, &decode.FormatError{File: name, Section: "data()", Msg: "script failed", Err: err}
	}
	r := &reader{file: name}
	top, err := r.table(v, "data()")
	if err != nil {
		return nil, err
	}
	m := &Material{AlphaThreshold: -1}
	if t, ok := top.Get("type").(string); ok {
		m.Type = t
	}
	params, err := r.table(top.Get("params"), "params")
	if err != nil {
		return nil, err
	}
	m.Params = params
	for _, k := range params.Keys() {
		p, ok := params.Get(k).(*luasandbox.Table)
		if !ok {
			continue
		}
		switch k {
		case "alpha_test":
			m.AlphaThreshold = 0.5
			if f, ok := p.Get("alphaThreshold").(float64); ok {
				m.AlphaThreshold = min(max(f, 0), 1)
			}
			continue
		case "two_sided":
			m.TwoSided, _ = p.Get("twoSided").(bool)
			continue
		}
		fn, ok := p.Get("fileName").(string)
		if !ok || fn == "" {
			continue
		}
		rg, _ := p.Get("redGreen").(bool)
		m.Maps = append(m.Maps, TextureMap{Slot: k, FileName: fn, RedGreen: rg})
	}
	return m, nil
}
