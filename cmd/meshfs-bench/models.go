package main

import (
	"fmt"
	"path/filepath"
)

// models: an assembled model's first read through a new daemon on an empty
// cache folder (nothing of the tree decoded in it before; the source files
// in the page cache): `stat` + `open` + read of the model's .glb, every
// texture included, one side after the other, rep after rep.
func (b *bench) models() error {
	r := &b.rep
	r.f("## Models, cold\n\nEach run: a new daemon on an empty cache folder over the model's tree in `../shared/assets` (the source in the page cache), then the first `stat` + `open` + read of the model's `.glb` (assembly, textures and all). Load at the start: %s.\n\n", loadavg())
	assets, err := filepath.Abs(filepath.Join(b.sides[1].root, "..", "shared", "assets"))
	if err != nil {
		return err
	}
	var rows []row
	n := 0
	for _, m := range []struct {
		name, tree, rel, glb string
		target               float64
	}{
		{"Centurion", "gem-centurion", "resource/entity/-vehicle/tank_heavy/centurionmk1/centurion.mdl", "centurion.glb", 200},
		{"inova", "tf-inova", "res/models/model/vehicle/waggon/ws_inovab_wc.mdl", "ws_inovab_wc.glb", 400},
		{"flirt (every texture)", "tf-flirt", "res/models/model/vehicle/train/bls/flirt200_bls_wf.mdl", "flirt200_bls_wf.glb", 600},
	} {
		var peaks [2]float64
		side := func(i int) func() (float64, error) {
			return func() (float64, error) {
				n++
				mnt := filepath.Join(b.work, fmt.Sprintf("mnt-model-%d", i))
				d, err := b.mount(b.sides[i].bin, filepath.Join(assets, m.tree), mnt, nil, "--cache-dir", filepath.Join(b.work, fmt.Sprintf("cache-model-%d", n)))
				if err != nil {
					return 0, err
				}
				defer d.stop()
				d.resetPeak()
				t, err := msSince(func() error { return readFile(filepath.Join(mnt, m.rel, m.glb)) })
				peaks[i] = max(peaks[i], d.peakMiB())
				return t, err
			}
		}
		runs, err := interleave(b.o.reps, side(0), side(1))
		if err != nil {
			return err
		}
		x := row{what: fmt.Sprintf("%s, `%s`", m.name, m.glb), base: runs[0], cur: runs[1]}
		rows = append(rows, x)
		b.peak("model "+m.name, peaks[0], peaks[1])
		med := median(x.cur)
		r.target(fmt.Sprintf("model %s cold ≤ %.0f ms", m.name, m.target), med <= m.target, fmt.Sprintf("%s (baseline %s)", fig(med, "ms"), medFig(x.base, "ms")))
	}
	// The same assemblies in memory (export/outputs' own benchmarks: the
	// model's ModelGLBs in the test process, no mount), to tell the
	// assembly's cost from the mount's.
	res, _, err := b.goBench("./export/outputs", "^BenchmarkAssemble(Centurion|Inova|Flirt)$", min(b.o.reps, 3))
	if err != nil {
		r.f("The in-memory assembly benchmarks failed: %s\n\n", firstLine(err.Error()))
	}
	for _, name := range []string{"Centurion", "Inova", "Flirt"} {
		n := "BenchmarkAssemble" + name
		rows = append(rows, row{what: fmt.Sprintf("%s in memory, `%s` (export/outputs, no mount)", name, n), base: series(res[0], n, "ms"), cur: series(res[1], n, "ms")})
	}
	b.table(rows)
	return nil
}
