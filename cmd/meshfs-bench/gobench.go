package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// A package's Go benchmarks at both revisions: each side's test binary is
// compiled once (go test -c in the side's tree) and run in the package's
// folder, as go test runs it, one side after the other, rep after rep.

var benchLine = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+(\d+)\s+(.*)$`)

// benchResult is one line of benchmark output: its values by unit.
type benchResult map[string]float64

// testBinary compiles pkg's tests in s's tree; "" when the package has no
// such test at that revision (err says why).
func (b *bench) testBinary(s side, pkg string) (string, error) {
	out := filepath.Join(b.work, "tests", strings.ReplaceAll(s.name, " ", "-"), strings.ReplaceAll(strings.Trim(pkg, "./"), "/", "_")+".test")
	if _, err := os.Stat(out); err == nil {
		return out, nil
	}
	if _, err := os.Stat(filepath.Join(s.root, pkg)); err != nil {
		return "", fmt.Errorf("no package %s at %s", pkg, s.name)
	}
	cmd := exec.Command("go", "test", "-c", "-o", out, pkg)
	cmd.Dir = s.root
	if msg, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go test -c %s at %s: %v: %s", pkg, s.name, err, firstLine(string(msg)))
	}
	return out, nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// goBench runs benchmarks re of pkg reps times on each side that has
// them, interleaved, and returns each side's results per run (nil for a
// side that cannot run them, with the reason in skipped).
func (b *bench) goBench(pkg, re string, reps int, args ...string) (res [2][]map[string]benchResult, skipped [2]string, err error) {
	var bins [2]string
	for i, s := range b.sides {
		if bins[i], err = b.testBinary(s, pkg); err != nil {
			skipped[i] = err.Error()
			err = nil
		}
	}
	if bins[1] == "" {
		return res, skipped, fmt.Errorf("%s", skipped[1])
	}
	for range reps {
		for i, s := range b.sides {
			if bins[i] == "" {
				continue
			}
			a := append([]string{"-test.run", "^$", "-test.bench", re, "-test.benchmem", "-test.count", "1"}, args...)
			cmd := exec.Command(bins[i], a...)
			cmd.Dir = filepath.Join(s.root, pkg)
			out, err := cmd.CombinedOutput()
			if err != nil {
				return res, skipped, fmt.Errorf("%s %s at %s: %v\n%s", pkg, re, s.name, err, tail(string(out), 20))
			}
			res[i] = append(res[i], parseBench(string(out)))
		}
	}
	return res, skipped, nil
}

func tail(s string, n int) string {
	l := strings.Split(strings.TrimSpace(s), "\n")
	if len(l) > n {
		l = l[len(l)-n:]
	}
	return strings.Join(l, "\n")
}

func parseBench(out string) map[string]benchResult {
	res := map[string]benchResult{}
	for _, ln := range strings.Split(out, "\n") {
		m := benchLine.FindStringSubmatch(ln)
		if m == nil {
			continue
		}
		v := benchResult{}
		f := strings.Fields(m[3])
		for i := 0; i+1 < len(f); i += 2 {
			x, _ := strconv.ParseFloat(f[i], 64)
			v[f[i+1]] = x
		}
		res[m[1]] = v
	}
	return res
}

// series picks one benchmark's value in unit from every run ("ms" reads
// ns/op).
func series(runs []map[string]benchResult, name, unit string) []float64 {
	var v []float64
	for _, r := range runs {
		x, ok := r[name]
		if !ok {
			continue
		}
		if unit == "ms" {
			v = append(v, x["ns/op"]/1e6)
		} else {
			v = append(v, x[unit])
		}
	}
	return v
}
