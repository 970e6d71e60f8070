package record

import (
	"bytes"
	"errors"
	"runtime"
	"testing"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/internal/source"
)

// The record codec: a fresh scan's record decodes to the same chunk table
// and errors; every truncation and every single-byte change of a record
// either fails to decode or decodes to a consistent record, never panics
// or allocates beyond the blob.
func TestScanRecordCodec(t *testing.T) {
	st := &decode.Structure{Format: "fake", Chunks: []decode.Chunk{
		{Name: "HEAD", Offset: 0, Length: 8, Size: 8},
		{Name: "POS.x2", Offset: 8, Length: 100, Size: 200, Load: func() ([]byte, error) { return nil, nil }},
		{Name: "../../escape", Offset: 1 << 40, Length: 4, Size: 4},
	}}
	scanErr := errors.New("m.fmesh: offset 4: broken\nsecond line")
	deps := source.Set{{Path: "/src/texture/wood.dds", Ident: source.Ident{File: source.File{Dev: 3, Ino: 1 << 40}, Size: 77, MtimeNs: -5}}}
	blob := EncodeScan(st, scanErr, nil, deps)
	rec, err := DecodeScan(blob, []int64{3})
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.Deps) != 1 || rec.Deps[0] != deps[0] {
		t.Fatalf("dependencies %+v, want %+v", rec.Deps, deps)
	}
	if !rec.Structure || rec.Format != "fake" || !rec.HasScanErr || rec.ScanErr != scanErr.Error() || rec.HasHdrErr || len(rec.Chunks) != 3 {
		t.Fatalf("decoded %+v", rec)
	}
	for i, c := range rec.Chunks {
		w := st.Chunks[i]
		if c.Name != w.Name || c.Offset != w.Offset || c.Length != w.Length || c.Size != w.Size || c.Loaded != (w.Load != nil) {
			t.Errorf("chunk %d: %+v, want %+v", i, c, w)
		}
	}
	// A record without a structure, with a header error.
	r2 := EncodeScan(nil, errors.New("gone"), errors.New("json: unsupported value"), nil)
	rec, err = DecodeScan(r2, []int64{0})
	if err != nil || rec.Structure || !rec.HasHdrErr || rec.HdrErr != "json: unsupported value" || len(rec.Chunks) != 0 {
		t.Fatalf("no structure: %+v, %v", rec, err)
	}
	if _, err := DecodeScan(r2, []int64{5}); err == nil {
		t.Error("a header error with header bytes decoded")
	}
	if _, err := DecodeScan(blob, []int64{3, 4}); err == nil {
		t.Error("two parts decoded")
	}
	for n := range len(blob) {
		if _, err := DecodeScan(blob[:n], []int64{3}); err == nil {
			t.Errorf("a record cut at %d bytes of %d decoded", n, len(blob))
		}
	}
	if _, err := DecodeScan(append(blob, 0), []int64{3}); err == nil {
		t.Error("trailing bytes decoded")
	}
	for i := range blob {
		for _, x := range []byte{1, 0x80, 0xff} {
			b := bytes.Clone(blob)
			b[i] ^= x
			rec, err := DecodeScan(b, []int64{3})
			if err == nil && len(rec.Chunks) > len(b)/MinChunk {
				t.Errorf("byte %d ^ %#x: %d chunks from %d bytes", i, x, len(rec.Chunks), len(b))
			}
		}
	}
	// A count that claims more chunks than the bytes can hold is refused
	// before allocating for them (4 Gi chunks; the bound leaves room for
	// the error and the race detector's own allocations).
	hostile := []byte{ScanVersion, FlagStructure, 0, 0xff, 0xff, 0xff, 0xff, 0x0f}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err = DecodeScan(hostile, []int64{0})
	runtime.ReadMemStats(&after)
	if err == nil || after.TotalAlloc-before.TotalAlloc > 1<<16 {
		t.Errorf("hostile chunk count: %v, %d bytes allocated", err, after.TotalAlloc-before.TotalAlloc)
	}
}

func FuzzScanRecord(f *testing.F) {
	f.Add(EncodeScan(&decode.Structure{Format: "x", Chunks: []decode.Chunk{{Name: "A", Length: 3, Size: 3}}}, nil, nil, source.Set{{Path: "/t/a.dds", Ident: source.Ident{Size: 4}}}), int64(2))
	f.Add(EncodeScan(nil, errors.New("e"), nil, nil), int64(0))
	f.Fuzz(func(t *testing.T, b []byte, size int64) {
		rec, err := DecodeScan(b, []int64{size})
		if err != nil {
			return
		}
		if len(rec.Chunks) > len(b)/MinChunk {
			t.Fatalf("%d chunks from %d bytes", len(rec.Chunks), len(b))
		}
		for _, c := range rec.Chunks {
			if c.Size < 0 || !c.Loaded && c.Size != c.Length {
				t.Fatalf("inconsistent chunk %+v", c)
			}
		}
	})
}
