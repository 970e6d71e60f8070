package gem

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/decodetest"
)

// TestRealRepairsInHeader: for every GEM file of ../shared (realdata and
// the asset trees), header.json's "repairs" from Scan are the decoded
// scene's repairs. Some real files hold non-finite tangents (the
// Centurion's antennas, body, cover and turret): at least one file must
// list a repair, or the scan stopped reporting them.
func TestRealRepairsInHeader(t *testing.T) {
	shared := decodetest.NeedShared(t, ".")
	var files []string
	for _, sub := range []string{"realdata/gem", "assets"} {
		filepath.WalkDir(filepath.Join(shared, sub), func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.EqualFold(filepath.Ext(p), ".ply") {
				files = append(files, p)
			}
			return nil
		})
	}
	if len(files) == 0 {
		t.Fatal("no .ply files under " + shared)
	}
	repaired := 0
	for _, p := range files {
		src := source(t, p)
		st, err := Format{}.Scan(context.Background(), src)
		if err != nil {
			continue // a file Scan refuses has no "repairs"
		}
		sc, err := Format{}.Decode(context.Background(), src)
		if err != nil {
			if st.Header.Get("repairs") != nil {
				t.Errorf("%s: repairs listed for a file Decode refuses (%v)", p, err)
			}
			continue
		}
		if got := st.Header.Get("repairs"); !reflect.DeepEqual(got, decode.RepairFields(sc.Repairs)) {
			t.Errorf("%s: header.json repairs %v, the scene's %+v", p, got, sc.Repairs)
		}
		if len(sc.Repairs) > 0 {
			repaired++
		}
	}
	if repaired == 0 {
		t.Errorf("none of %d real files lists a repair", len(files))
	}
	t.Logf("%d of %d real files list repairs", repaired, len(files))
}
