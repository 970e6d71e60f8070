package store

import (
	"fmt"
	"testing"
)

// BenchmarkRemountLookups is the disk cache's side of a remount's walk of
// a big tree: each mesh folder in turn asks about five outputs of its
// source version (the scan, the .glb, .obj and preview sizes and
// failures), more folders than the memos hold. An op is one folder.
func BenchmarkRemountLookups(b *testing.B) {
	c, err := OpenDiskCache(b.TempDir(), 1<<30, "v1")
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	outputs := []string{"gem-ply/scan", "glb", "obj", "preview", "anims"}
	const folders = 3 * maxNames
	keys := make([][]diskKey, folders)
	for i := range keys {
		for _, o := range outputs {
			k := diskKey{Path: fmt.Sprintf("/assets/d%03d/m%05d.ply", i/100, i), Version: ver(2049, uint64(1000+i), 4096, 1e18, 0), Output: o}
			keys[i] = append(keys[i], k)
		}
		c.putParts(keys[i][1], [][]byte{[]byte("x")})
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		for _, k := range keys[i%folders] {
			c.sizes(k)
		}
	}
}
