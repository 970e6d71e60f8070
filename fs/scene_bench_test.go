package fs

import (
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/meshfs/meshfs/decode/decodetest"
	"github.com/meshfs/meshfs/internal/meshgen"
)

// BenchmarkListUnigineProject: `ls -lR` (every entry listed and stat'ed,
// header.json sizes included) of a generated UNIGINE project of 500
// props (1 500 .meta files: each prop's source .meta, its runtime mesh's
// and its .mat's) and a world placing them, through a new mount each
// time.
//
//	go test ./fs -run '^$' -bench ListUnigineProject -benchtime 5x
func BenchmarkListUnigineProject(b *testing.B) {
	src := b.TempDir()
	if _, err := meshgen.UnigineProject(filepath.Join(src, "data"), 500, 12); err != nil {
		b.Fatal(err)
	}
	entries := 0
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		_, mnt := mountT(b, src, Config{})
		b.StartTimer()
		entries = 0
		err := filepath.WalkDir(mnt, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if filepath.Base(p) == ".meshfs" {
				return filepath.SkipDir
			}
			if _, err := d.Info(); err != nil {
				return err
			}
			entries++
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(entries), "entries")
}

// BenchmarkFirstReadWorld: JumpRunTest.world's NAME.glb (125 nodes, 108
// placed meshes) read through a new mount of a new copy of the skyrunner
// project, nothing of it decoded before: as the snapshot is (every mesh
// unresolved) and completed with the 5 meshes it lacks (generated, 2 000
// triangles each).
//
//	go test ./fs -run '^$' -bench FirstReadWorld -benchtime 5x
func BenchmarkFirstReadWorld(b *testing.B) {
	shared := filepath.Join(decodetest.NeedShared(b, "assets/unigine-skyrunner"), "data")
	for _, complete := range []bool{false, true} {
		name := "snapshot"
		if complete {
			name = "completed"
		}
		b.Run(name, func(b *testing.B) {
			var size int
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				src := b.TempDir()
				decodetest.CopyTree(b, shared, filepath.Join(src, "data"))
				if complete {
					if _, err := meshgen.UnigineMissingMeshes(filepath.Join(src, "data"), 2000); err != nil {
						b.Fatal(err)
					}
				}
				_, mnt := mountT(b, src, Config{})
				b.StartTimer()
				glb, err := os.ReadFile(filepath.Join(mnt, "data", "JumpRunTest.world", "JumpRunTest.glb"))
				if err != nil {
					b.Fatal(err)
				}
				size = len(glb)
			}
			b.ReportMetric(float64(size), "glb-bytes")
		})
	}
}
