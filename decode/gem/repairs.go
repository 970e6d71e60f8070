package gem

import (
	"context"
	"encoding/binary"

	"github.com/meshfs/meshfs/decode"
)

// scanRepairs returns header.json's "repairs": what Decode's
// decode.Scene.Repair changes, as decode.RepairFields lists them. Scan
// reads no arrays but this one: VERT's records, a block at a time, of
// which only the float and half-float positions, normals, tangents and UVs
// of each submesh's layout are tested for NaN and ±Inf (an OR over their
// bits). A file where all are finite lists no repair without a decode; one
// with some (real files also pad VERT with 0xFF records no face uses) is
// decoded for the exact list. ok is false when the file cannot be decoded:
// Decode reports that error, and header.json leaves the key out.
func scanRepairs(ctx context.Context, src *decode.Source, f *File) (rs []decode.Fields, ok bool) {
	return scanRepairsOf(ctx, src, f, nil)
}

// scanRepairsOf is scanRepairs; decoded, when not nil, is Decode's scene
// of the same file, whose repairs it lists instead of decoding again.
func scanRepairsOf(ctx context.Context, src *decode.Source, f *File, decoded *decode.Scene) (rs []decode.Fields, ok bool) {
	vert, fields, ok := repairFields(f)
	if !ok {
		return nil, false
	}
	if len(fields) == 0 {
		return decode.RepairFields(nil), true
	}
	size := int(vert.Size)
	bad := false
	per := max(1, (1<<20)/size) // records per read
	buf := make([]byte, min(int64(per), int64(vert.Count))*int64(size))
	for at := int64(0); at < int64(vert.Count) && !bad; at += int64(per) {
		if ctx.Err() != nil {
			return nil, false
		}
		n := min(int64(per), int64(vert.Count)-at)
		b := buf[:n*int64(size)]
		if _, err := src.R.ReadAt(b, vert.Offset+12+at*int64(size)); err != nil {
			return nil, false
		}
		for r := 0; r+size <= len(b) && !bad; r += size {
			for _, fd := range fields {
				e := b[r+fd.off : r+fd.off+fd.size]
				if fd.half {
					for i := 0; i+2 <= len(e); i += 2 {
						bad = bad || binary.LittleEndian.Uint16(e[i:])&0x7c00 == 0x7c00
					}
				} else {
					bad = bad || decode.NonFiniteFloats(e)
				}
			}
		}
	}
	if !bad {
		return decode.RepairFields(nil), true
	}
	if decoded == nil {
		var err error
		if decoded, err = (Format{}).Decode(ctx, src); err != nil {
			return nil, false
		}
	}
	return decode.RepairFields(decoded.Repairs), true
}

// repairField is one float attribute of VERT's records that scanRepairs
// tests: its offset and size in a record, and whether it is half-float.
type repairField struct {
	off, size int
	half      bool
}

// repairFields is what scanRepairs reads of f without reading VERT: the
// VERT chunk and the fields of its records to test (none: nothing to
// repair). ok is false when Decode refuses the file's chunks (a second
// VERT, a submesh whose layout does not fit).
func repairFields(f *File) (vert *Vert, fields []repairField, ok bool) {
	var subs []*Submesh
	for _, c := range f.Chunks {
		switch c := c.(type) {
		case *Vert:
			if vert != nil {
				return nil, nil, false // a second VERT: Decode refuses the file
			}
			vert = c
		case *Submesh:
			subs = append(subs, c)
		}
	}
	if vert == nil || vert.Size == 0 || vert.Count == 0 {
		return vert, nil, true
	}
	size := int(vert.Size)
	seen := map[repairField]bool{}
	for _, s := range subs {
		l, err := layoutOf(s, size)
		if err != nil {
			return nil, nil, false
		}
		for _, a := range l.Attrs {
			switch a.Usage {
			case UsagePosition, UsageNormal, UsageTangent, UsageTexcoord:
			default:
				continue
			}
			fd := repairField{off: a.Offset, size: typeSize(a.Type), half: a.Type == TypeHalf4}
			switch a.Type {
			case TypeFloat1, TypeFloat2, TypeFloat3, TypeFloat4, TypeHalf4:
			default:
				continue // integers and bytes are always finite
			}
			if fd.off+fd.size <= size && !seen[fd] {
				seen[fd] = true
				fields = append(fields, fd)
			}
		}
	}
	return vert, fields, true
}
