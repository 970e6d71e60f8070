package main

import "fmt"

// convert: the decoders' own in-memory benchmarks (decode + repair + join
// + .glb export of a ≈1 M-triangle generated mesh), MB/s of source, with
// issue 32's targets.
func (b *bench) convert() error {
	r := &b.rep
	r.f("## In-memory conversion\n\n")
	r.f("Each package's own benchmark (`go test -bench`, its test binary built at each revision), a ≈1 M-triangle generated mesh decoded, repaired, joined and exported to `.glb` in memory; MB/s of source. Load at the start: %s.\n\n", loadavg())
	var rows []row
	for _, c := range []struct {
		format, pkg, name string
		target            float64
	}{
		{"GEM", "./decode/gem", "BenchmarkConvertGEM", 900},
		{"UNIGINE", "./decode/unigine", "BenchmarkConvertUnigine", 450},
		{"Transport Fever", "./decode/tfever", "BenchmarkConvertBig", 450},
	} {
		res, _, err := b.goBench(c.pkg, "^"+c.name+"$", b.o.reps)
		if err != nil {
			r.target(c.format+" conversion benchmark runs", false, err.Error())
			continue
		}
		x := row{what: fmt.Sprintf("%s, `%s` (%s)", c.format, c.name, c.pkg), unit: "MB/s",
			base: series(res[0], c.name, "MB/s"), cur: series(res[1], c.name, "MB/s")}
		rows = append(rows, x)
		m := median(x.cur)
		r.target(fmt.Sprintf("in-memory %s conversion ≥ %.0f MB/s of source", c.format, c.target), m >= c.target,
			fmt.Sprintf("%.0f MB/s (baseline %s)", m, medFig(x.base, "MB/s")))
	}
	b.table(rows)
	return nil
}
