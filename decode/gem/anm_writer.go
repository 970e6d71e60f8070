package gem

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// EncodeAnm writes a as an .anm file: EANM and the version, FRMS when
// HasFrameCount, the comments, BMAP, then the frames in order. Counts come
// from the slices; what a key stores follows its flags (FRM2) or its
// Matrix, Visible and Mesh (FRMN), so the bytes parse back to a. It fails
// on values a field cannot hold (more than 255 keys in a frame, an FRM2
// bone index over 255, a frame number over 65535 in FRM2, a name that is
// not Latin-1).
func EncodeAnm(a *Anm) ([]byte, error) {
	w := &writer{}
	w.b = append(w.b, "EANM"...)
	w.u32(a.Version)
	if a.HasFrameCount {
		w.b = append(w.b, "FRMS"...)
		w.u32(a.FrameCount)
	}
	for _, c := range a.Comments {
		b, err := toLatin1(c)
		if err != nil || len(b) > math.MaxUint16 {
			return nil, fmt.Errorf("gem: comment of %d bytes: %v", len(c), err)
		}
		w.b = append(w.b, "CMNT"...)
		w.u16(uint16(len(b)))
		w.b = append(w.b, b...)
	}
	if a.Bones != nil {
		w.b = append(w.b, "BMAP"...)
		w.u32(uint32(len(a.Bones)))
		for _, n := range a.Bones {
			b, err := toLatin1(n)
			if err != nil {
				return nil, fmt.Errorf("gem: bone %q: %v", n, err)
			}
			w.u32(uint32(len(b)))
			w.b = append(w.b, b...)
		}
	}
	for i, fr := range a.Frames {
		if err := w.anmFrame(fr); err != nil {
			return nil, fmt.Errorf("gem: frame %d (number %d): %w", i, fr.Number, err)
		}
	}
	return w.b, nil
}

func (w *writer) f3(v [3]float32) {
	for _, x := range v {
		w.f32(x)
	}
}

func (w *writer) anmFrame(fr AnmFrame) error {
	if fr.Legacy {
		w.b = append(w.b, "FRMN"...)
		w.u32(fr.Number)
		for _, k := range fr.Keys {
			w.b = append(w.b, "BONE"...)
			w.u32(uint32(k.Bone))
			if k.Matrix != nil {
				w.b = append(w.b, "MATR"...)
				for _, v := range k.Matrix {
					w.f32(v)
				}
			}
			if k.Visible != nil {
				w.b = append(w.b, "VISI"...)
				w.u32(*k.Visible)
			}
			if k.Mesh != nil {
				w.b = append(w.b, "MESH"...)
				w.u32(uint32(len(k.Mesh)))
				w.b = append(w.b, k.Mesh...)
			}
			if k.Matrix == nil && k.Visible == nil && k.Mesh == nil {
				return fmt.Errorf("bone %d key has no MATR, VISI or MESH", k.Bone)
			}
		}
		return nil
	}
	if fr.Number > math.MaxUint16 || len(fr.Keys) > math.MaxUint8 {
		return fmt.Errorf("an FRM2 frame holds frame numbers to 65535 and 255 keys, not %d and %d", fr.Number, len(fr.Keys))
	}
	w.b = append(w.b, "FRM2"...)
	w.u16(uint16(fr.Number))
	w.u8(uint8(len(fr.Keys)))
	for _, k := range fr.Keys {
		if k.Bone < 0 || k.Bone > math.MaxUint8 || k.Flags&^knownKeyFlags != 0 {
			return fmt.Errorf("bone %d, flags 0x%x do not fit FRM2", k.Bone, k.Flags)
		}
		w.u8(uint8(k.Bone))
		w.u16(k.Flags)
		if k.Flags&KeyPosition != 0 {
			w.f3(k.Position)
		}
		if k.Flags&KeyRotation != 0 {
			w.f3(k.Rotation)
		}
		if k.Flags&KeyScale != 0 {
			w.f3(k.Scale)
		}
		if k.Flags&KeyMesh != 0 {
			w.u32(uint32(len(k.Mesh)))
			w.b = append(w.b, k.Mesh...)
		}
	}
	return nil
}

func toLatin1(s string) ([]byte, error) {
	b := make([]byte, 0, len(s))
	for _, r := range s {
		if r > 0xff {
			return nil, fmt.Errorf("%q is not Latin-1", r)
		}
		b = append(b, byte(r))
	}
	return b, nil
}

// EncodeText writes GEM text groups as ParseText reads them: one group a
// line, nested groups indented by a tab, numbers bare and every other
// argument quoted; a group name is bare unless it cannot be. ParseText(EncodeText(nodes)) gives nodes back (lines aside)
// when the arguments come before the children, as GEM writes them.
func EncodeText(nodes []*Node) ([]byte, error) {
	var sb strings.Builder
	var walk func(n *Node, depth int) error
	walk = func(n *Node, depth int) error {
		if strings.Contains(n.Name, "\"") {
			return fmt.Errorf("gem: group name %q holds a quote", n.Name)
		}
		sb.WriteString(strings.Repeat("\t", depth))
		if n.Name == "" || strings.ContainsAny(n.Name, " \t\r\n\f\v{};") {
			sb.WriteString("{\"" + n.Name + "\"")
		} else {
			sb.WriteString("{" + n.Name)
		}
		for _, a := range n.Args {
			if strings.Contains(a, "\"") {
				return fmt.Errorf("gem: argument %q holds a quote", a)
			}
			if _, err := strconv.ParseFloat(a, 64); err == nil && !strings.ContainsAny(a, " \t\r\n\f\v{};") {
				sb.WriteString(" " + a)
			} else {
				sb.WriteString(" \"" + a + "\"")
			}
		}
		if len(n.Children) == 0 {
			sb.WriteString("}\n")
			return nil
		}
		sb.WriteString("\n")
		for _, c := range n.Children {
			if err := walk(c, depth+1); err != nil {
				return err
			}
		}
		sb.WriteString(strings.Repeat("\t", depth) + "}\n")
		return nil
	}
	for _, n := range nodes {
		if err := walk(n, 0); err != nil {
			return nil, err
		}
	}
	return []byte(sb.String()), nil
}
