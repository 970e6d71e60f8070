package gem

import (
	"context"

	"github.com/meshfs/meshfs/decode"
)

// ScanDecode is Scan and Decode in one pass over VERT: header.json's
// "repairs" come from the scene Decode repaired, so Scan's own pass over
// VERT's records (scanRepairs) is not made. Scan lists no repair exactly
// when Decode makes none (a file whose tested fields are all finite is
// decoded by Scan, and its repairs listed, only when it holds a non-finite
// value), so a scene without repairs gives Scan's empty list; one with
// repairs takes scanRepairs's own answer, which tests only the fields it
// tests (a rare file: it costs the pass over VERT, not a second decode).
// The chunk walk (scanFile, which reads no arrays) gives the chunks and
// the other fields.
//
// It returns Scan's structure and Decode's scene, the same as the two
// calls give for a file both accept; a file either refuses gives the
// error (with a nil structure and scene) and the caller runs Scan and
// Decode as usual.
func (Format) ScanDecode(ctx context.Context, src *decode.Source) (*decode.Structure, *decode.Scene, error) {
	f, err := scanFile(ctx, src.Name, src.R, src.Size)
	if err != nil {
		return nil, nil, err
	}
	sc, err := Format{}.Decode(ctx, src)
	if err != nil {
		return nil, nil, err
	}
	st := structure(f)
	var rs []decode.Fields
	ok := false
	if _, _, structural := repairFields(f); structural && len(sc.Repairs) == 0 {
		rs, ok = decode.RepairFields(nil), true
	} else {
		rs, ok = scanRepairsOf(ctx, src, f, sc)
	}
	if ok {
		st.Header.Add("repairs", rs)
	}
	return st, sc, ctx.Err()
}
