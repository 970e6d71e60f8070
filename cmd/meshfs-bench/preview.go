package main

import "fmt"

// preview: export/outputs' BenchmarkPreview, a 256² NAME.preview.png of a
// 100 k-triangle textured GEM mesh and of a 1 M-triangle one, beside the
// .glb of the same mesh; judged from the source (preview-file: decoding
// included, as a mount's first stat of the picture pays), the drawing
// alone (draw) listed too.
func (b *bench) preview() error {
	r := &b.rep
	r.f("## Previews\n\n`go test -bench BenchmarkPreview ./export/outputs` (`-benchtime 10x`): *draw* and *glb* from the same decoded scene (the rasterizer's and the exporter's own work), *preview-file* and *glb-file* from the source file (decoding and the texture included). Load at the start: %s.\n\n", loadavg())
	res, skipped, err := b.goBench("./export/outputs", "^BenchmarkPreview$", b.o.reps, "-test.benchtime", "10x")
	if err != nil {
		r.target("preview benchmark runs", false, err.Error())
		return nil
	}
	if skipped[0] != "" {
		r.f("The baseline has no such benchmark (%s).\n\n", skipped[0])
	}
	var rows []row
	for _, c := range []struct {
		name, label string
		target      float64
	}{{"100k-textured", "100 k-triangle textured", 20}, {"1M", "1 M-triangle", 120}} {
		get := func(what string) row {
			n := "BenchmarkPreview/" + c.name + "/" + what
			return row{what: fmt.Sprintf("%s mesh, %s", c.label, what), base: series(res[0], n, "ms"), cur: series(res[1], n, "ms")}
		}
		pf, gf := get("preview-file"), get("glb-file")
		rows = append(rows, get("draw"), get("glb"), pf, gf)
		if len(pf.cur) == 0 {
			r.target(fmt.Sprintf("256² preview of a %s mesh ≤ %.0f ms", c.label, c.target), false, "did not run")
			continue
		}
		m := median(pf.cur)
		r.target(fmt.Sprintf("256² preview of a %s mesh ≤ %.0f ms (from the source)", c.label, c.target), m <= c.target,
			fmt.Sprintf("%s, %s the .glb conversion of the same mesh (%s); drawing alone %s", fig(m, "ms"), ratio(pf.cur, gf.cur), fig(median(gf.cur), "ms"), medFig(get("draw").cur, "ms")))
	}
	b.table(rows)
	return nil
}
