package unigine

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"strconv"
	"strings"

	"github.com/meshfs/meshfs/decode"
)

// Mat is a UNIGINE material file (.mat): XML with a <material> element
// whose <parameter name="…"> children hold numbers (albedo_color,
// metalness, roughness, …) and whose <texture name="…"> children name
// textures (a path, or guid://… for an asset known only to the editor).
type Mat struct {
	Name         string
	Version      string
	GUID         string
	BaseMaterial string
	// Params are the parameters in file order; a value that is not a
	// list of numbers keeps its text in Text.
	Params []MatParam
	// Textures are the texture slots in file order.
	Textures []MatTexture
}

// MatParam is one <parameter>.
type MatParam struct {
	Name   string
	Values []float64
	Text   string
}

// MatTexture is one <texture>.
type MatTexture struct {
	Slot string // "albedo", "normal", ...
	Path string // as written; "guid://…" names an editor asset
}

// Param returns the values of parameter name, or nil.
func (m *Mat) Param(name string) []float64 {
	for _, p := range m.Params {
		if p.Name == name {
			return p.Values
		}
	}
	return nil
}

// Texture returns the path of texture slot, or "".
func (m *Mat) Texture(slot string) string {
	for _, t := range m.Textures {
		if t.Slot == slot {
			return t.Path
		}
	}
	return ""
}

// maxMatBytes bounds a .mat file: real ones are under a kilobyte or two.
const maxMatBytes = 4 << 20

// ParseMat reads a UNIGINE .mat file.
func ParseMat(name string, b []byte) (*Mat, error) {
	if len(b) > maxMatBytes {
		return nil, &decode.FormatError{File: name, Msg: fmt.Sprintf("%d bytes, more than a material file's %d", len(b), maxMatBytes), Err: decode.ErrLimit}
	}
	var doc struct {
		XMLName      xml.Name `xml:"material"`
		Name         string   `xml:"name,attr"`
		Version      string   `xml:"version,attr"`
		GUID         string   `xml:"guid,attr"`
		BaseMaterial string   `xml:"base_material,attr"`
		Params       []struct {
			Name string `xml:"name,attr"`
			Text string `xml:",chardata"`
		} `xml:"parameter"`
		Textures []struct {
			Name string `xml:"name,attr"`
			Text string `xml:",chardata"`
		} `xml:"texture"`
	}
	d := xml.NewDecoder(bytes.NewReader(b))
	if err := d.Decode(&doc); err != nil {
		return nil, &decode.FormatError{File: name, Section: "xml", Offset: d.InputOffset(), Msg: "not a material file", Err: err}
	}
	m := &Mat{Name: doc.Name, Version: doc.Version, GUID: doc.GUID, BaseMaterial: doc.BaseMaterial}
	for _, p := range doc.Params {
		mp := MatParam{Name: p.Name, Text: strings.TrimSpace(p.Text)}
		for _, f := range strings.Fields(mp.Text) {
			v, err := strconv.ParseFloat(f, 64)
			if err != nil {
				mp.Values = nil
				break
			}
			mp.Values = append(mp.Values, v)
		}
		if mp.Values != nil {
			mp.Text = ""
		}
		m.Params = append(m.Params, mp)
	}
	for _, t := range doc.Textures {
		m.Textures = append(m.Textures, MatTexture{Slot: t.Name, Path: strings.TrimSpace(t.Text)})
	}
	return m, nil
}
