package fs

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/meshfs/meshfs/decode/decodetest"
	"github.com/meshfs/meshfs/export/outputs"
)

// BenchmarkFirstReadModel{Centurion,Inova}: a model's NAME.glb read
// through a new mount of its tree, assembly included: cold (nothing of the
// tree read before) and parts-cached (every other file's .glb of the tree
// read first). Decoded textures are shared process-wide (the daemon's
// image cache), so iterations after the first find them decoded.
//
//	go test ./fs -run '^$' -bench FirstReadModel -benchtime 3x
func benchModel(b *testing.B, tree, rel string) {
	src := decodetest.NeedShared(b, filepath.Join("assets", tree))
	m, err := outputs.Open(filepath.Join(src, rel))
	if err != nil || m == nil || !m.IsModel() {
		b.Fatalf("%s: not a model (%v)", rel, err)
	}
	var others []string
	outputs.Walk(src, func(r string, o *outputs.Mesh, err error) error {
		if err == nil && !o.IsModel() {
			others = append(others, filepath.Join(r, o.GLBName()))
		}
		return nil
	})
	for _, partsFirst := range []bool{false, true} {
		name := "cold"
		if partsFirst {
			name = "parts-cached"
		}
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				b.StopTimer()
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
