package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

var (
	skipModels = flag.Bool("skip-models", false, "skip the assembled models' first reads (fs BenchmarkFirstReadModel*)")
	modelRuns  = flag.Int("model-runs", 3, "iterations of each model benchmark (go test -benchtime Nx)")
)

const modelsTitle = "## 5. First read of an assembled model through the mount"

// modelBench runs fs's BenchmarkFirstReadModel{Centurion,Inova}: a
// model's NAME.glb read through a new mount of a new copy of its asset
// tree, assembly included, cold (nothing decoded before) and with every
// part's own .glb read first (the model then places the scenes its
// parts' folders decoded). It reports the benchmarks' figures as they
// print them; no acceptance figure is set for them.
func modelBench(r *report) error {
	r.f("%s\n\n", modelsTitle)
	r.f("`go test -run '^$' -bench FirstReadModel -benchtime %dx -benchmem ./fs` (`fs/model_bench_test.go`): the first read of the model's `.glb` through a new mount of a new copy of its tree in `../shared/assets`, its assembly included; *cold*: nothing of the tree decoded before; *parts-cached*: every other file's `.glb` read first, so the model places the scenes its parts' folders decoded. Time and allocations are the test process's (the mount runs in it).\n\n", *modelRuns)
	r.f("| model | case | ms/op | allocs/op | MB allocated/op |\n|---|---|---:|---:|---:|\n")
	cmd := exec.Command("go", "test", "-run", "^$", "-bench", "^BenchmarkFirstReadModel", "-benchtime", fmt.Sprintf("%dx", *modelRuns), "-benchmem", "-count", "1", "./fs")
	out, err := cmd.CombinedOutput()
	if err != nil {
		r.f("| failed: %v | | | | |\n\n", err)
		fmt.Fprintf(os.Stderr, "%s\n", out)
		r.target("model first-read benchmarks run", false, err.Error())
		return nil
	}
	rows := 0
	for _, ln := range strings.Split(string(out), "\n") {
		m := benchLine.FindStringSubmatch(ln)
		if m == nil {
			continue
		}
		model, kase, _ := strings.Cut(strings.TrimPrefix(m[1], "BenchmarkFirstReadModel"), "/")
		vals := map[string]float64{}
		f := strings.Fields(m[3])
		for i := 0; i+1 < len(f); i += 2 {
			v, _ := strconv.ParseFloat(f[i], 64)
			vals[f[i+1]] = v
		}
		r.f("| %s | %s | %.1f | %.0f | %.1f |\n", model, kase, vals["ns/op"]/1e6, vals["allocs/op"], vals["B/op"]/1e6)
		rows++
	}
	if rows == 0 {
		r.f("| none ran (no ../shared/assets?) | | | | |\n")
	}
	r.f("\n")
	return nil
}
