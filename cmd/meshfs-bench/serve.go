package main

import "fmt"

// serve: serve's own benchmarks, the handler `meshfs serve` runs over the
// tree, each side by side with a server that knows no conversion
// (BenchmarkWarmGET: nginx sending a plain file of the .glb's size;
// BenchmarkPropfind1000: `rclone serve webdav` of a plain folder of the
// same shape), and BenchmarkCold32 (32 clients on cold outputs; it fails
// when an output is converted more than once or clients get other bytes).
func (b *bench) serve() error {
	r := &b.rep
	r.f("## Serving over HTTP and WebDAV\n\n`go test -bench 'WarmGET|Propfind1000|Cold32' ./serve`: the handler `meshfs serve` runs, over the tree, on loopback; each run of the test binary measures meshfs and then its plain reference, run after run. Load at the start: %s.\n\n", loadavg())
	var rows []row
	one := func(re string) ([2][]map[string]benchResult, bool) {
		res, skipped, err := b.goBench("./serve", re, b.o.reps)
		if err != nil {
			r.target(fmt.Sprintf("serve benchmark %s runs", re), false, firstLine(err.Error()))
			return res, false
		}
		if skipped[0] != "" && re == "^BenchmarkWarmGET$" {
			r.f("The baseline has no `meshfs serve` (%s): its column is empty.\n\n", skipped[0])
		}
		return res, true
	}
	if res, ok := one("^BenchmarkWarmGET$"); ok {
		m, ng := pairedMS(res[1], "BenchmarkWarmGET/meshfs-vs-nginx", "meshfs"), pairedMS(res[1], "BenchmarkWarmGET/meshfs-vs-nginx", "nginx")
		rows = append(rows, row{what: "warm GET of a 36 MiB `.glb`", base: series(res[0], "BenchmarkWarmGET/meshfs", "ms"), cur: m, ref: ng, refName: "nginx, plain file"})
		x := median(m) / median(ng)
		r.target("warm GET of a 36 MiB .glb ≤ 1.5 × nginx serving a plain file of that size", len(m) > 0 && x <= 1.5,
			fmt.Sprintf("%.2f × (%s against %s)", x, medFig(m, "ms"), medFig(ng, "ms")))
	}
	if res, ok := one("^BenchmarkPropfind1000$"); ok {
		for _, shape := range []struct{ name, what string }{{"meshes", "1 000 meshes (rclone: 1 000 folders)"}, {"files", "1 000 plain files"}} {
			n := "BenchmarkPropfind1000/" + shape.name + "/"
			m, rc := pairedMS(res[1], n+"meshfs-vs-rclone", "meshfs"), pairedMS(res[1], n+"meshfs-vs-rclone", "rclone")
			rows = append(rows, row{what: "PROPFIND depth 1 of " + shape.what, base: series(res[0], n+"meshfs", "ms"), cur: m, ref: rc, refName: "rclone serve webdav"})
			if shape.name == "meshes" {
				x := median(m) / median(rc)
				r.target("PROPFIND depth 1 of 1 000 entries ≤ 2 × `rclone serve webdav` of a plain folder of the same shape", len(m) > 0 && x <= 2,
					fmt.Sprintf("%.2f × (%s against %s)", x, medFig(m, "ms"), medFig(rc, "ms")))
			}
		}
	}
	if res, ok := one("^BenchmarkCold32$"); ok {
		c := series(res[1], "BenchmarkCold32", "ms")
		rows = append(rows, row{what: "32 clients GET 8 cold `.glb` each (one conversion per output)", base: series(res[0], "BenchmarkCold32", "ms"), cur: c})
		r.target("32 concurrent clients on cold outputs, each output converted once (same bytes to all)", len(c) > 0, fmt.Sprintf("%s a round of 32 × 8 GETs", medFig(c, "ms")))
	}
	if len(rows) > 0 {
		b.table(rows)
	}
	return nil
}

// pairedMS reads one side of a paired sub-benchmark (serve's "meshfs-vs-X",
// which times meshfs and X alternately in one loop and reports each as
// "<side>-µs/op") in milliseconds.
func pairedMS(runs []map[string]benchResult, name, side string) []float64 {
	v := series(runs, name, side+"-µs/op")
	for i := range v {
		v[i] /= 1000
	}
	return v
}
