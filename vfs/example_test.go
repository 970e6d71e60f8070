package vfs_test

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/meshfs/meshfs/internal/store"
	"github.com/meshfs/meshfs/vfs"
)

// A door over a tree: make it from one Config, list a mesh's folder, read
// an output whole.
func ExampleNew() {
	tree, err := vfs.New(vfs.Config{
		Source: filepath.Join("..", "testdata", "orientation"),
		Store:  store.Config{CacheSize: 64 << 20}, // memory only: no DiskCache
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer tree.Close()
	ctx := context.Background()
	list, err := tree.ReadDir(ctx, "gem/orient.ply")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range list {
		fmt.Println(e.Name, e.IsDir())
	}
	f, err := tree.Open(ctx, "gem/orient.ply/orient.glb")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer f.Close()
	b, err := io.ReadAll(io.NewSectionReader(f, 0, f.Info().Size))
	fmt.Println(string(b[:4]), int64(len(b)) == f.Info().Size, err)
	// Output:
	// chunks true
	// header.json false
	// orient.glb false
	// orient.mtl false
	// orient.obj false
	// orient.preview.png false
	// glTF true <nil>
}
