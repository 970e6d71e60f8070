package guid

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/meshfs/meshfs/decode/decodetest"
)

// FuzzMeta feeds any bytes to the three readers of a scan (an XML .meta, a
// runtime's JSON .meta, a .mat's head): none panics, and each either makes
// its claim of a well-formed GUID or records an error, never both nor
// neither.
func FuzzMeta(f *testing.F) {
	f.Add([]byte(`<asset><guid>0123456789abcdef0123456789abcdef01234567</guid><parameters><1></1></parameters></asset>`))
	f.Add([]byte(`<asset><guid>not-a-guid</guid></asset>`))
	f.Add([]byte(`{"asset": "0123456789abcdef0123456789abcdef01234567", "alias": "a", "primary": 1}`))
	f.Add([]byte(`{"asset": "not-a-guid"}`))
	f.Add([]byte(`<material guid="0123456789abcdef0123456789abcdef01234567"/>`))
	if dir, ok := decodetest.Shared(f, "assets/unigine-skyrunner/data"); ok {
		filepath.WalkDir(dir, func(p string, de os.DirEntry, err error) error {
			if err == nil && (strings.HasSuffix(p, ".meta") || strings.HasSuffix(p, ".mat")) {
				if b, err := os.ReadFile(p); err == nil && len(b) < MaxMetaBytes {
					f.Add(b)
				}
			}
			return err
		})
	}
	const rt = "0123456789abcdef0123456789abcdef01234567"
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, c := range []struct {
			rel  string
			read func(*scanner, string, []byte)
		}{
			{"src.png.meta", (*scanner).sourceMeta},
			{".runtimes/01/" + rt + ".dds.meta", (*scanner).runtimeMeta},
			{"m.mat", (*scanner).matHead},
		} {
			s := newScanner("/p", nil)
			c.read(s, c.rel, b)
			claims := len(s.metaClaims) + len(s.claims) + len(s.ix.assets)
			if c.rel == "m.mat" && len(s.ix.Errors) == 0 && claims == 0 {
				continue // a <material> with no guid attribute: nothing to say
			}
			if strings.HasPrefix(c.rel, ".runtimes/") && len(s.ix.Errors) == 0 && claims == 0 {
				continue // a runtime made from itself
			}
			if (claims == 0) == (len(s.ix.Errors) == 0) {
				t.Fatalf("%s: %d claims and errors %v", c.rel, claims, s.ix.Errors)
			}
			for g := range s.claims {
				if p, ok := Parse(g); !ok || p != g {
					t.Fatalf("%s: claim of %q, not a GUID", c.rel, g)
				}
			}
			for _, m := range s.metaClaims {
				if p, ok := Parse(m.guid); !ok || p != m.guid {
					t.Fatalf("%s: claim of %q, not a GUID", c.rel, m.guid)
				}
			}
		}
	})
}
