package gem

import (
	"context"
	"errors"
	"os"
	"testing"

	"github.com/meshfs/meshfs/decode"
)

// fuzzFormat feeds arbitrary bytes to f's Scan and Decode (and
// DecodeModel for a model format): none may panic or return an error that
// is not a FormatError, and a header must render.
func fuzzFormat(f *testing.F, format decode.Format, name string, seeds [][]byte) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		src := anmSource(name, b)
		var fe *decode.FormatError
		st, err := format.Scan(context.Background(), src)
		if err != nil && !errors.As(err, &fe) {
			t.Fatalf("Scan: %v is not a FormatError", err)
		}
		if st != nil {
			if _, jerr := decode.HeaderJSON(st.Header); jerr != nil {
				t.Fatalf("header.json: %v", jerr)
			}
			for _, c := range st.Chunks {
				if c.Offset < 0 || c.Length < 0 || c.Offset+c.Length > int64(len(b)) {
					t.Fatalf("chunk %+v outside the file", c)
				}
			}
		}
		sc, derr := format.Decode(context.Background(), src)
		if derr != nil && !errors.As(derr, &fe) {
			t.Fatalf("Decode: %v is not a FormatError", derr)
		}
		if derr == nil && err != nil {
			t.Fatalf("Decode succeeded where Scan failed: %v", err)
		}
		if derr == nil {
			for _, a := range sc.Animations {
				for _, c := range a.Channels {
					if c.Index < 0 || sc.Skeleton == nil || c.Index >= len(sc.Skeleton.Joints) || !increasing(c.Times) {
						t.Fatalf("channel %+v", c)
					}
				}
			}
		}
		if md, ok := format.(decode.ModelDecoder); ok {
			m, merr := md.DecodeModel(context.Background(), src)
			if (merr == nil) != (derr == nil) {
				t.Fatalf("DecodeModel: %v, Decode: %v", merr, derr)
			}
			if merr == nil {
				for _, lod := range m.LODs {
					for i, n := range lod.Nodes {
						if n.Parent >= i || n.Parent < -1 {
							t.Fatalf("node %d's parent %d", i, n.Parent)
						}
					}
				}
			}
		}
	})
}

func increasing(t []float32) bool {
	for i := range t {
		if !(t[i] >= 0) || i > 0 && !(t[i] > t[i-1]) {
			return false
		}
	}
	return true
}

// realSeeds are the real files with extension ext of at most limit
// bytes: the fuzzer minimises each new input it finds, which for a big
// text seed takes longer than a short run.
func realSeeds(f *testing.F, ext string, limit int) [][]byte {
	var out [][]byte
	if _, ok := realDataOK(nil); ok {
		for _, p := range assetFiles(f, ext) {
			if b, err := os.ReadFile(p); err == nil && len(b) <= limit {
				out = append(out, b)
			}
		}
	}
	return out
}

func FuzzMdl(f *testing.F) {
	fx := modelFixtures(f)
	seeds := append(realSeeds(f, ".mdl", 4<<10), fx["tank_small.mdl"], fx["crewman.mdl"], []byte("{Skeleton {bone \"a\"}}"))
	fuzzFormat(f, Mdl{}, "fuzz.mdl", seeds)
}

func FuzzAnm(f *testing.F) {
	fx := modelFixtures(f)
	seeds := append(realSeeds(f, ".anm", 16<<10), fx["gun_fire.anm"], fx["turret_frmn.anm"], []byte("EANM"))
	fuzzFormat(f, AnmFormat{}, "fuzz.anm", seeds)
}

func FuzzVol(f *testing.F) {
	seeds := append(realSeeds(f, ".vol", 16<<10), EncodeVol(fixtureVol()), []byte("EVLMVERT"))
	fuzzFormat(f, VolFormat{}, "fuzz.vol", seeds)
}
