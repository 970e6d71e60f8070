package unigine

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/decodetest"
)

// realFiles lists the real files under ../shared/realdata/unigine
// (decodetest.NeedRealData: absent, the test fails under CI and skips
// elsewhere).
func realFiles(t testing.TB) []string {
	t.Helper()
	dir := decodetest.NeedRealData(t, "unigine")
	m, err := filepath.Glob(filepath.Join(dir, "*.mesh*"))
	if err != nil || len(m) == 0 {
		t.Fatalf("no real files in %s: %v", dir, err)
	}
	return m
}

func memSource(name string, b []byte) *decode.Source {
	return &decode.Source{Name: name, R: bytes.NewReader(b), Size: int64(len(b))}
}

// assetDir is ../shared/assets/unigine beside the repository, or "" where
// it is absent (decodetest.Shared: under CI its absence fails the test).
func assetDir(t testing.TB) string {
	t.Helper()
	dir, ok := decodetest.Shared(t, "assets/unigine")
	if !ok {
		return ""
	}
	return dir
}

// assetAnims are the .anim files in ../shared/assets/unigine, or none.
func assetAnims(t testing.TB) []string {
	dir := assetDir(t)
	if dir == "" {
		return nil
	}
	m, _ := filepath.Glob(filepath.Join(dir, "*.anim"))
	return m
}

// assetFiles are the UNIGINE meshes in ../shared/assets/unigine (ms13 down
// to ms10), or none where that folder is absent.
func assetFiles(t testing.TB) []string {
	dir := assetDir(t)
	if dir == "" {
		return nil
	}
	m, _ := filepath.Glob(filepath.Join(dir, "*.mesh"))
	return m
}

// assetFile is the file name in ../shared/assets/unigine
// (decodetest.NeedShared: absent, the test fails under CI and skips
// elsewhere).
func assetFile(t testing.TB, name string) string {
	t.Helper()
	return filepath.Join(decodetest.NeedShared(t, "assets/unigine"), name)
}
