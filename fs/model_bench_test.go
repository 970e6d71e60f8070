package fs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/meshfs/meshfs/decode/decodetest"
	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/vfs/vfstest"
)

// BenchmarkFirstReadModel{Centurion,Inova}: a model's NAME.glb read
// through a new mount of a new copy of its tree (nothing of it decoded
// before, in the mount or the process), assembly included: cold, and
// parts-cached (every other file's .glb of the tree read first, so the
// model places the parts its folders decoded).
//
//	go test ./fs -run '^$' -bench FirstReadModel -benchtime 3x
func benchModel(b *testing.B, tree, rel string) {
	shared := decodetest.NeedShared(b, filepath.Join("assets", tree))
	m, err := outputs.Open(filepath.Join(shared, rel))
	if err != nil || m == nil || !m.IsModel() {
		b.Fatalf("%s: not a model (%v)", rel, err)
	}
	var others []string
	for _, r := range vfstest.Meshes(b, vfstest.Tree(b, shared, nil), "") {
		r = filepath.FromSlash(r)
		if o, err := outputs.Open(filepath.Join(shared, r)); err == nil && o != nil && !o.IsModel() {
			others = append(others, filepath.Join(r, o.GLBName()))
		}
	}
	for _, partsFirst := range []bool{false, true} {
		name := "cold"
		if partsFirst {
			name = "parts-cached"
		}
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				src := b.TempDir()
				copyFiles(b, shared, src)
				_, mnt := mountT(b, src, Config{})
				if partsFirst {
					for _, g := range others {
						os.ReadFile(filepath.Join(mnt, g)) // a broken one has none
					}
				}
				b.StartTimer()
				readAll(b, filepath.Join(mnt, rel, m.GLBName()))
			}
		})
	}
}

func BenchmarkFirstReadModelCenturion(b *testing.B) {
	benchModel(b, "gem-centurion", "resource/entity/-vehicle/tank_heavy/centurionmk1/centurion.mdl")
}

func BenchmarkFirstReadModelInova(b *testing.B) {
	benchModel(b, "tf-inova", "res/models/model/vehicle/waggon/ws_inovab_wc.mdl")
}

// copyFiles copies the regular files of the tree from into to.
func copyFiles(b *testing.B, from, to string) { decodetest.CopyTree(b, from, to) }
