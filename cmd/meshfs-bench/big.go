package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/meshfs/meshfs/internal/meshgen"
)

// bigSource is one format's ≈1 M-triangle generated mesh.
type bigSource struct {
	format, file, output string
	gen                  func(triangles int, seed float32) ([]byte, error)
}

var bigSources = []bigSource{
	{"GEM", "big.ply", "big.glb", meshgen.GEM},
	{"UNIGINE", "big.mesh", "big.glb", meshgen.Unigine},
}

// big: the first read of each big mesh's .glb through the mount, default
// mode, each run on a new source version (so each converts), both sides
// interleaved; then the warm read against a plain file of the same size.
func (b *bench) big() error {
	r := &b.rep
	r.f("## First read of a 1 M-triangle mesh through the mount\n\n")
	r.f("A generated mesh of %d triangles, one daemon per side (default mode), each run on a new source version (a new mtime) so that each read converts: `stat` + `open` + read of the `.glb`, conversion included; MB/s of source. Neither daemon is still saving the last conversion when a read starts. Then warm reads (the kernel's page cache) against a plain file of the same size. Load at the start: %s.\n\n", b.o.triangles, loadavg())
	var rows []row
	var work []string
	for _, s := range bigSources {
		rs, w, err := b.bigOne(s)
		if err != nil {
			return err
		}
		rows, work = append(rows, rs...), append(work, w)
	}
	b.table(rows)
	r.f("What each first read cost its daemon, in order (time; the daemon's minor page faults, each a fresh page the kernel zeroes; its CPU, in ticks of 10 ms):\n\n%s\n", strings.Join(work, ""))
	return nil
}

func (b *bench) bigOne(bs bigSource) ([]row, string, error) {
	r := &b.rep
	src := filepath.Join(b.work, "big-src-"+bs.format)
	os.MkdirAll(src, 0o755)
	data, err := bs.gen(b.o.triangles, 0)
	if err != nil {
		return nil, "", err
	}
	sp := filepath.Join(src, bs.file)
	if err := os.WriteFile(sp, data, 0o644); err != nil {
		return nil, "", err
	}
	srcMB := float64(len(data)) / 1e6
	data = nil
	if bs.format == "GEM" {
		b.bigSrc = sp
	}
	var ds [2]*daemon
	mnt := func(i int) string { return filepath.Join(b.work, fmt.Sprintf("mnt-big-%d", i)) }
	prof := filepath.Join(b.work, "cpu-big-"+bs.format+".prof")
	for i, s := range b.sides {
		var env []string
		if i == 1 {
			env = []string{"MESHFS_CPUPROFILE=" + prof}
		}
		if ds[i], err = b.mount(s.bin, src, mnt(i), env, "--cache-dir", filepath.Join(b.work, fmt.Sprintf("cache-big-%s-%d", bs.format, i))); err != nil {
			return nil, "", err
		}
		defer ds[i].stop()
	}
	glb := func(i int) string { return filepath.Join(mnt(i), bs.file, bs.output) }
	base := time.Now().Add(-time.Hour)
	syscall.Sync()
	var peaks [2]float64
	var work [2][]string // each first read's daemon faults and CPU
	run := 0
	first := func(i int) func() (float64, error) {
		return func() (float64, error) {
			if i == 0 {
				os.Chtimes(sp, base, base.Add(time.Duration(run)*time.Second))
				run++
				time.Sleep(50 * time.Millisecond) // the watchers' notifications
			}
			ds[0].waitIdle()
			ds[1].waitIdle()
			ds[i].resetPeak()
			f0, c0 := ds[i].procStat()
			t, err := msSince(func() error { return readFile(glb(i)) })
			f1, c1 := ds[i].procStat()
			work[i] = append(work[i], fmt.Sprintf("%.0f ms: %.1f k faults, %d ms CPU", t, float64(f1-f0)/1000, (c1-c0)*10))
			peaks[i] = max(peaks[i], ds[i].peakMiB())
			return srcMB / (t / 1000), err
		}
	}
	firsts, err := interleave(b.o.reps, first(0), first(1))
	if err != nil {
		return nil, "", err
	}
	fi, err := os.Stat(glb(1))
	if err != nil {
		return nil, "", err
	}
	// Warm: the plain file of the .glb's size beside the work folder's
	// other files, in the page cache like the mount's.
	plain := filepath.Join(b.work, "plain.glb")
	bytes, err := os.ReadFile(glb(1))
	if err != nil {
		return nil, "", err
	}
	if err := os.WriteFile(plain, bytes, 0o644); err != nil {
		return nil, "", err
	}
	bytes = nil
	defer os.Remove(plain)
	for i := range ds {
		readFile(glb(i))
		ds[i].waitIdle()
	}
	readFile(plain)
	syscall.Sync()
	warm := func(p string) func() (float64, error) {
		return func() (float64, error) { return msSince(func() error { return readFile(p) }) }
	}
	warms, err := interleave(b.o.reps*3, warm(glb(0)), warm(glb(1)), warm(plain))
	if err != nil {
		return nil, "", err
	}
	for i := range ds {
		ds[i].stop()
	}
	r.profile(fmt.Sprintf("the current daemon over the first and warm reads of the %s big mesh", bs.format), b.sides[1].bin, prof)
	cost := fmt.Sprintf("- %s, baseline: %s\n- %s, current: %s\n", bs.format, strings.Join(work[0], "; "), bs.format, strings.Join(work[1], "; "))
	b.peak(fmt.Sprintf("%s 1 M-triangle first reads", bs.format), peaks[0], peaks[1])
	m := median(firsts[1])
	r.target(fmt.Sprintf("first read through the mount, default mode, 1 M-triangle %s mesh ≥ 400 MB/s of source", bs.format), m >= 400,
		fmt.Sprintf("%.0f MB/s (baseline %s)", m, medFig(firsts[0], "MB/s")))
	if bs.format == "GEM" {
		b.bigFirst = time.Duration(srcMB / m * 1e9)
	}
	return []row{
		{what: fmt.Sprintf("%s first read (%.1f MB of source, .glb %.1f MB)", bs.format, srcMB, float64(fi.Size())/1e6), unit: "MB/s", base: firsts[0], cur: firsts[1]},
		{what: fmt.Sprintf("%s warm read of the .glb", bs.format), base: warms[0], cur: warms[1], ref: warms[2], refName: "plain file"},
	}, cost, nil
}
