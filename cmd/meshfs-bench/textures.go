package main

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
)

var skipTextures = flag.Bool("skip-textures", false, "skip the texture benchmarks (go test -bench)")

// textureBench runs the texture benchmarks: decoding and PNG-encoding a
// 2048² BC1 and BC7 texture against reading its file from the disk
// (decode/texture), and a textured .glb's first and warm reads through
// the mount (fs), with issue 15's targets.
func textureBench(r *report) error {
	r.f("## 6. Textures\n\n")
	r.f("`go test -bench BenchmarkTexture ./decode/texture` (a 2048² painted-looking picture with mips, made by bcn's encoder, decoded and PNG-encoded as on a texture's first use; -serial decodes the blocks on one goroutine, for comparison) and `go test -bench BenchmarkTexturedGLB ./fs` (a GEM mesh naming a 2048² BC1 texture, through a mount in the test process).\n\n")
	run := func(pkg, re string) ([]benchResult, error) {
		out, err := exec.Command("go", "test", "-run", "^$", "-bench", re, "-benchtime", "10x", "-count", "1", pkg).CombinedOutput()
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s\n", out)
			return nil, err
		}
		return parseBench(string(out)), nil
	}
	r.f("| benchmark | ms per texture | DDS MB/s | read from disk, ms | × disk read |\n|---|---:|---:|---:|---:|\n")
	tex, err := run("./decode/texture", "^BenchmarkTexture$")
	if err != nil {
		r.target("texture benchmark runs", false, err.Error())
	}
	for _, b := range tex {
		r.f("| %s | %.1f | %.0f | %.1f | %.1f |\n", b.name, b.vals["ms/texture"], b.vals["MB/s"], b.vals["disk-ms"], b.vals["x-disk"])
		if !strings.HasSuffix(b.name, "-serial") {
			r.target(fmt.Sprintf("texture work ≤ 20 × reading the file from disk (%s)", strings.TrimPrefix(b.name, "BenchmarkTexture/")),
				b.vals["x-disk"] <= 20, fmt.Sprintf("%.1f ×", b.vals["x-disk"]))
		}
	}
	r.f("\n| benchmark | ms/op | .glb bytes | × plain file |\n|---|---:|---:|---:|\n")
	glb, err := run("./fs", "^BenchmarkTexturedGLB$")
	if err != nil {
		r.target("textured .glb benchmark runs", false, err.Error())
	}
	for _, b := range glb {
		r.f("| %s | %.3f | %.0f | %.2f |\n", b.name, b.vals["ns/op"]/1e6, b.vals["glb-bytes"], b.vals["x-plain"])
		if strings.HasSuffix(b.name, "warm/mount") {
			r.target("warm read of a textured .glb ≤ 1.25 × plain file", b.vals["x-plain"] <= 1.25, fmt.Sprintf("%.2f ×", b.vals["x-plain"]))
		}
	}
	r.f("\n")
	return nil
}

// benchResult is one line of `go test -bench` output: its name and its
// values by unit.
type benchResult struct {
	name string
	vals map[string]float64
}

func parseBench(out string) []benchResult {
	var res []benchResult
	for _, ln := range strings.Split(out, "\n") {
		m := benchLine.FindStringSubmatch(ln)
		if m == nil {
			continue
		}
		b := benchResult{name: m[1], vals: map[string]float64{}}
		f := strings.Fields(m[3])
		for i := 0; i+1 < len(f); i += 2 {
			v, _ := strconv.ParseFloat(f[i], 64)
			b.vals[f[i+1]] = v
		}
		res = append(res, b)
	}
	return res
}
