// Command meshfs-bench measures meshfs against the targets of issues 30,
// 31 and 32, side by side with a baseline revision, and writes
// BENCHMARKS.md. It is what `make bench` runs:
//
//	go run ./cmd/meshfs-bench -meshfs build/meshfs -baseline aeabf7d -o BENCHMARKS.md
//
// The baseline is built from its revision in a git worktree under
// build/bench-base/ (baseline.go). Every measurement runs on both sides in
// turn, baseline then current (and then the plain reference, when there is
// one), rep after rep, so that a burst of load on a shared machine falls on
// all alike; the report gives each side's median and lists every run.
// Targets are judged on the current side's medians.
//
// Daemons are the real binaries (`meshfs mount`, foreground): peak RSS is
// read from /proc (VmHWM, reset through /proc/PID/clear_refs), conversions
// from .meshfs/stats.json. In-memory figures come from the packages' own Go
// benchmarks, compiled at each revision (gobench.go).
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// options are the command line's settings; every section reads them.
type options struct {
	bin, baseline, baselineBin, out, profiles string
	quick, keep                               bool
	reps, treeN, triangles                    int
	cacheMB                                   int64
	sections                                  map[string]bool
}

const allSections = "convert,big,models,tree,preview,serve,assimp"

func main() {
	var o options
	var sections string
	flag.StringVar(&o.bin, "meshfs", "build/meshfs", "the current meshfs binary")
	flag.StringVar(&o.baseline, "baseline", "aeabf7d", "baseline git revision, built in a worktree under build/bench-base/")
	flag.StringVar(&o.baselineBin, "baseline-bin", "", "a baseline meshfs binary already built from -baseline (skips building it)")
	flag.StringVar(&o.out, "o", "BENCHMARKS.md", "report to write")
	flag.StringVar(&o.profiles, "profiles", "build/bench-profiles.md", "where the current daemon's CPU profiles go (not committed)")
	flag.BoolVar(&o.quick, "quick", false, "fewer runs (3) and a smaller tree (2 000 meshes)")
	flag.BoolVar(&o.keep, "keep", false, "keep the work folder")
	flag.IntVar(&o.reps, "reps", 0, "runs per side of each measurement (default 5, 3 with -quick)")
	flag.IntVar(&o.treeN, "tree", 0, "meshes in the many-file tree (default 10 000, 2 000 with -quick)")
	flag.IntVar(&o.triangles, "triangles", 1_000_000, "triangles of the big meshes")
	flag.Int64Var(&o.cacheMB, "cache-mb", 512, "memory budget of every daemon (MiB)")
	flag.StringVar(&sections, "sections", allSections, "sections to run, comma-separated")
	flag.Parse()
	if o.reps == 0 {
		o.reps = map[bool]int{false: 5, true: 3}[o.quick]
	}
	if o.treeN == 0 {
		o.treeN = map[bool]int{false: 10_000, true: 2_000}[o.quick]
	}
	o.sections = map[string]bool{}
	for _, s := range strings.Split(sections, ",") {
		o.sections[strings.TrimSpace(s)] = true
	}
	if err := run(&o); err != nil {
		fmt.Fprintln(os.Stderr, "meshfs-bench:", err)
		os.Exit(1)
	}
}

// side is one revision under comparison: its source tree (for its Go
// benchmarks) and its meshfs binary.
type side struct {
	name, root, bin string
}

// bench is one run of the tool: both sides, the work folder, the report.
type bench struct {
	o     *options
	sides [2]side // baseline, current
	work  string
	rep   report
	peaks []peakRow
	// bigFirst is the current side's median first read of the GEM big
	// mesh (the assimp section's reference), bigSrc its source file.
	bigFirst time.Duration
	bigSrc   string
}

func run(o *options) error {
	root, err := gitOut("", "rev-parse", "--show-toplevel")
	if err != nil {
		return err
	}
	cur, err := filepath.Abs(o.bin)
	if err != nil {
		return err
	}
	base, err := baselineSide(o, root)
	if err != nil {
		return fmt.Errorf("baseline %s: %w", o.baseline, err)
	}
	rev, _ := gitOut(root, "rev-parse", "--short", "HEAD")
	if st, _ := gitOut(root, "status", "--porcelain", "--untracked-files=no"); st != "" {
		rev += "+changes"
	}
	work, err := os.MkdirTemp("", "meshfs-bench-")
	if err != nil {
		return err
	}
	if !o.keep {
		defer os.RemoveAll(work)
	}
	b := &bench{o: o, sides: [2]side{base, {"current " + rev, root, cur}}, work: work}
	load0 := loadavg()
	t0 := time.Now()
	steps := []struct {
		name string
		f    func() error
	}{
		{"convert", b.convert}, {"big", b.big}, {"assimp", b.assimp}, {"models", b.models},
		{"tree", b.tree}, {"preview", b.preview}, {"serve", b.serve},
	}
	for _, s := range steps {
		if !o.sections[s.name] {
			continue
		}
		fmt.Fprintf(os.Stderr, "meshfs-bench: %s (load %s)\n", s.name, loadavg())
		if err := s.f(); err != nil {
			return fmt.Errorf("%s: %w", s.name, err)
		}
	}
	b.memory()
	return b.write(load0, time.Since(t0))
}

// --- the report ------------------------------------------------------------

type report struct {
	bytes.Buffer
	pass, miss []string
	profiles   []string
}

func (r *report) f(format string, a ...any) { fmt.Fprintf(&r.Buffer, format, a...) }

// target records a target as met or missed; detail holds the figures, the
// baseline's among them.
func (r *report) target(name string, ok bool, detail string) {
	s := fmt.Sprintf("%s: %s", name, detail)
	if ok {
		r.pass = append(r.pass, s)
	} else {
		r.miss = append(r.miss, s)
	}
}

func (b *bench) write(load0 string, took time.Duration) error {
	o := b.o
	var body bytes.Buffer
	w := func(format string, a ...any) { fmt.Fprintf(&body, format, a...) }
	w("# meshfs benchmarks\n\n")
	w("Generated by `%s` (`make bench`) on %s, in %s.\n\n", strings.Join(append([]string{"go run ./cmd/meshfs-bench"}, os.Args[1:]...), " "),
		time.Now().UTC().Format("2006-01-02 15:04 MST"), took.Round(time.Second))
	w("- Machine: %s, %d CPUs, %s RAM, Linux %s; Go %s\n", cpuModel(), runtime.NumCPU(), memTotal(), kernel(), runtime.Version())
	w("- Sides: **%s** (built from its revision in a git worktree) and **%s**; every measurement runs baseline, current (then the plain reference, when there is one) in turn, runs: %d each unless said otherwise; medians, every run listed\n", b.sides[0].name, b.sides[1].name, o.reps)
	w("- Daemons: `meshfs mount --cache-size %dMiB` (foreground, a new cache folder unless said otherwise); the work folder is on the same disk as the source\n", o.cacheMB)
	w("- Load average (1, 5, 15 min) at the start: %s; at the end: %s (other work shared the 2 cores: only the side-by-side ratios mean much)\n", load0, loadavg())
	if o.quick {
		w("- Quick mode (`-quick`): %d runs per side, a tree of %d meshes\n", o.reps, o.treeN)
	}
	w("\n## Targets\n\n")
	summary := fmt.Sprintf("%d met, %d missed", len(b.rep.pass), len(b.rep.miss))
	w("%s (judged on the current side's medians; the baseline's figure beside).\n\n", summary)
	for _, s := range b.rep.miss {
		w("- MISS %s\n", s)
	}
	for _, s := range b.rep.pass {
		w("- met %s\n", s)
	}
	w("\n")
	body.Write(b.rep.Bytes())
	if why, err := os.ReadFile(filepath.Join(b.sides[1].root, "cmd", "meshfs-bench", "why.md")); err == nil {
		body.WriteString("\n")
		body.Write(why)
	}
	if len(b.rep.profiles) > 0 {
		body.WriteString("\n## CPU profiles of the current daemon\n\n`go tool pprof -top` of the daemon (`MESHFS_CPUPROFILE`) over the measurements named (also in `" + o.profiles + "`).\n\n")
		for _, p := range b.rep.profiles {
			body.WriteString(p + "\n")
		}
	}
	if err := os.WriteFile(o.out, body.Bytes(), 0o644); err != nil {
		return err
	}
	var prof bytes.Buffer
	prof.WriteString("# CPU profiles of the current daemon\n\n`go tool pprof -top` of the daemon (`MESHFS_CPUPROFILE`) over the measurements named.\n\n")
	for _, p := range b.rep.profiles {
		prof.WriteString(p + "\n")
	}
	os.MkdirAll(filepath.Dir(o.profiles), 0o755)
	if err := os.WriteFile(o.profiles, prof.Bytes(), 0o644); err != nil {
		return err
	}
	os.Stdout.Write(body.Bytes())
	fmt.Println(summary)
	if len(b.rep.miss) > 0 {
		return fmt.Errorf("%s (see MISS above; %s is written)", summary, o.out)
	}
	return nil
}

// --- measurements side by side --------------------------------------------

// row is one measurement: the runs of each side in the order they ran, and
// of the plain reference when there is one. Values are milliseconds unless
// unit says otherwise.
type row struct {
	what, unit string
	base, cur  []float64
	ref        []float64
	refName    string
}

// interleave runs each function once per rep, in order, reps times, and
// returns each one's results. A nil function is skipped (a side that
// cannot run the measurement).
func interleave(reps int, fs ...func() (float64, error)) ([][]float64, error) {
	out := make([][]float64, len(fs))
	for range reps {
		for i, f := range fs {
			if f == nil {
				continue
			}
			v, err := f()
			if err != nil {
				return nil, err
			}
			out[i] = append(out[i], v)
		}
	}
	return out, nil
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := append([]float64(nil), v...)
	sort.Float64s(s)
	if len(s)%2 == 0 {
		return (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return s[len(s)/2]
}

// fig formats a value in its unit.
func fig(v float64, unit string) string {
	switch unit {
	case "", "ms":
		if v >= 100 {
			return fmt.Sprintf("%.0f ms", v)
		}
		return fmt.Sprintf("%.1f ms", v)
	case "MB/s":
		return fmt.Sprintf("%.0f MB/s", v)
	}
	return fmt.Sprintf("%.2f %s", v, unit)
}

func figs(v []float64, unit string) string {
	if len(v) == 0 {
		return "—"
	}
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strings.TrimSuffix(strings.TrimSuffix(fig(x, unit), " ms"), " MB/s")
	}
	return strings.Join(s, ", ")
}

func medFig(v []float64, unit string) string {
	if len(v) == 0 {
		return "—"
	}
	return fig(median(v), unit)
}

func ratio(a, b []float64) string {
	if len(a) == 0 || len(b) == 0 || median(b) == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f ×", median(a)/median(b))
}

// table writes rows: both sides' medians, their ratio, and the plain
// reference with the current side's ratio to it; then every run.
func (b *bench) table(rows []row) {
	r := &b.rep
	r.f("| measurement | %s | %s | current / baseline | plain reference | current / reference |\n|---|---:|---:|---:|---:|---:|\n", b.sides[0].name, b.sides[1].name)
	for _, x := range rows {
		ref := "—"
		if len(x.ref) > 0 {
			ref = x.refName + ": " + medFig(x.ref, x.unit)
		}
		r.f("| %s | %s | %s | %s | %s | %s |\n", x.what, medFig(x.base, x.unit), medFig(x.cur, x.unit), ratio(x.cur, x.base), ref, ratio(x.cur, x.ref))
	}
	r.f("\nRuns in order (baseline; current; reference):\n\n")
	for _, x := range rows {
		unit := x.unit
		if unit == "" {
			unit = "ms"
		}
		r.f("- %s (%s): %s; %s", x.what, unit, figs(x.base, x.unit), figs(x.cur, x.unit))
		if len(x.ref) > 0 {
			r.f("; %s", figs(x.ref, x.unit))
		}
		r.f("\n")
	}
	r.f("\n")
}

// peakRow is a benchmark's daemon peak RSS on each side (MiB; 0: not run).
type peakRow struct {
	what      string
	base, cur float64
}

func (b *bench) peak(what string, base, cur float64) {
	b.peaks = append(b.peaks, peakRow{what, base, cur})
}

// memory writes the peaks of every daemon benchmark and judges the budget.
func (b *bench) memory() {
	if len(b.peaks) == 0 {
		return
	}
	r := &b.rep
	budget := float64(b.o.cacheMB) + 64
	r.f("## Daemon peak RSS\n\nVmHWM of each daemon over each benchmark (the highest of its runs), for a %d MiB memory budget (target ≤ %.0f MiB).\n\n", b.o.cacheMB, budget)
	r.f("| benchmark | %s | %s |\n|---|---:|---:|\n", b.sides[0].name, b.sides[1].name)
	worst, worstWhat := 0.0, ""
	for _, p := range b.peaks {
		r.f("| %s | %.0f MiB | %.0f MiB |\n", p.what, p.base, p.cur)
		if p.cur > worst {
			worst, worstWhat = p.cur, p.what
		}
	}
	r.f("\n")
	r.target(fmt.Sprintf("daemon peak RSS ≤ budget + 64 MiB (%.0f MiB) in every benchmark", budget), worst <= budget,
		fmt.Sprintf("highest %.0f MiB (%s)", worst, worstWhat))
}

// --- helpers -----------------------------------------------------------------

func msSince(f func() error) (float64, error) {
	t := time.Now()
	err := f()
	return float64(time.Since(t).Microseconds()) / 1000, err
}

func readFile(p string) error {
	f, err := os.Open(p)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = io.Copy(io.Discard, f)
	return err
}

// sh runs a shell script, its output discarded; grep's "nothing matched"
// is not a failure.
func sh(script string) func() error {
	return func() error {
		cmd := exec.Command("sh", "-c", script)
		var eb bytes.Buffer
		cmd.Stdout, cmd.Stderr = io.Discard, &eb
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("%s: %v: %s", script, err, eb.String())
		}
		return nil
	}
}

func dropCaches() bool {
	syscall.Sync()
	return os.WriteFile("/proc/sys/vm/drop_caches", []byte("3"), 0) == nil
}

func gitOut(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
	}
	return strings.TrimSpace(string(out)), nil
}

func cpuModel() string {
	b, _ := os.ReadFile("/proc/cpuinfo")
	for _, ln := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(ln, "model name") {
			if _, v, ok := strings.Cut(ln, ":"); ok {
				return strings.TrimSpace(v)
			}
		}
	}
	return runtime.GOARCH
}

func memTotal() string {
	b, _ := os.ReadFile("/proc/meminfo")
	for _, ln := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(ln, "MemTotal:") {
			f := strings.Fields(ln)
			kb, _ := strconv.ParseFloat(f[1], 64)
			return fmt.Sprintf("%.1f GiB", kb/(1<<20))
		}
	}
	return "?"
}

func kernel() string {
	var u syscall.Utsname
	if syscall.Uname(&u) != nil {
		return "?"
	}
	var sb strings.Builder
	for _, c := range u.Release {
		if c == 0 {
			break
		}
		sb.WriteByte(byte(c))
	}
	return sb.String()
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], ", ")
}
