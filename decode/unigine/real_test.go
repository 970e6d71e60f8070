package unigine

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/meshfs/meshfs/decode"
)

// realDir is ../shared/realdata/unigine beside the repository.
func realDir(t testing.TB) string {
	_, here, _, _ := runtime.Caller(0)
	dir := filepath.Join(filepath.Dir(here), "..", "..", "..", "shared", "realdata", "unigine")
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("real files absent: %v", err)
	}
	return dir
}

func realFiles(t testing.TB) []string {
	dir := realDir(t)
	m, err := filepath.Glob(filepath.Join(dir, "*.mesh*"))
	if err != nil || len(m) == 0 {
		t.Fatalf("no real files in %s: %v", dir, err)
	}
	return m
}

func memSource(name string, b []byte) *decode.Source {
	return &decode.Source{Name: name, R: bytes.NewReader(b), Size: int64(len(b))}
}

func TestRealFilesDump(t *testing.T) {
	for _, p := range realFiles(t) {
		b, _ := os.ReadFile(p)
		src := memSource(p, b)
		st, err := Format{}.Scan(context.Background(), src)
		if err != nil {
			t.Errorf("scan %s: %v", p, err)
			continue
		}
		j, _ := decode.HeaderJSON(st.Header)
		t.Logf("%s\n%s", p, j)
		for _, c := range st.Chunks {
			t.Logf("chunk %s off %d len %d size %d", c.Name, c.Offset, c.Length, c.Size)
		}
		f, err := Read(context.Background(), src)
		if err != nil {
			t.Errorf("read %s: %v", p, err)
			continue
		}
		for _, s := range f.Surfaces {
			t.Logf("surface %q targets %d pos %d tan %d w %d uv0 %d uv1 %d col %d ci %d ti %d coll %d", s.Name, len(s.Targets), len(s.Targets[0].Positions), len(s.Targets[0].Tangents), len(s.Weights), len(s.UV0), len(s.UV1), len(s.Colors), len(s.CIndices), len(s.TIndices), len(s.Collision))
		}
		sc, err := Format{}.Decode(context.Background(), src)
		if err != nil {
			t.Errorf("decode %s: %v", p, err)
			continue
		}
		t.Logf("%+v", sc.Count())
	}
}
