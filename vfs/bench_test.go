package vfs_test

import (
	"context"
	"io"
	"path/filepath"
	"testing"

	"github.com/meshfs/meshfs/vfs"
)

// BenchmarkWarmOpen opens an output whose bytes memory holds and reads it
// whole, through the vfs API and through a mount of the same source (the
// kernel's page cache then serves the mount).
func BenchmarkWarmOpen(b *testing.B) {
	src := filepath.Join("..", "testdata", "orientation")
	const glb = "tfever/orient.msh/orient.glb"
	for _, d := range []struct {
		name string
		open func(testing.TB, string) vfs.Tree
	}{{"vfs", func(t testing.TB, src string) vfs.Tree { return newTree(t, src) }}, {"mount", mountAt}} {
		b.Run(d.name, func(b *testing.B) {
			tr := d.open(b, src)
			size := int64(len(readAllB(b, tr, glb))) // converts
			b.SetBytes(size)
			for b.Loop() {
				readAllB(b, tr, glb)
			}
		})
	}
}

// BenchmarkColdTree makes a tree of testdata/ and walks it whole, every
// file read (every output converted), through the vfs API.
func BenchmarkColdTree(b *testing.B) {
	src := filepath.Join("..", "testdata")
	for b.Loop() {
		tr, err := vfs.New(vfs.Config{Source: src, NoWatch: true})
		if err != nil {
			b.Fatal(err)
		}
		var walk func(dir string)
		walk = func(dir string) {
			list, err := tr.ReadDir(context.Background(), dir)
			if err != nil {
				b.Fatal(err)
			}
			for _, e := range list {
				if p := join(dir, e.Name); e.IsDir() {
					walk(p)
				} else if e.Mode.IsRegular() {
					readAllB(b, tr, p)
				}
			}
		}
		walk("")
		tr.Close()
	}
}

func readAllB(b testing.TB, tr vfs.Tree, name string) []byte {
	f, err := tr.Open(context.Background(), name)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.NewSectionReader(f, 0, f.Info().Size))
	if err != nil {
		b.Fatal(err)
	}
	return data
}
