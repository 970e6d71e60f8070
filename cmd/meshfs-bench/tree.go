package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/meshfs/meshfs/internal/meshgen"
)

// tree: walks of a tree of small GEM meshes, 100 a folder, against plain
// folders: the mount's shape (every folder and file a remount of the
// current side lists, with the sizes it shows: header.json with its bytes,
// the rest sparse), copied once from that mount; and the header.json
// files alone, at their places.
func (b *bench) tree() error {
	r := &b.rep
	n := b.o.treeN
	src := filepath.Join(b.work, "tree-src")
	if err := writeTree(src, n); err != nil {
		return err
	}
	mnt := func(i int) string { return filepath.Join(b.work, fmt.Sprintf("mnt-tree-%d", i)) }
	filled := func(i int) string { return filepath.Join(b.work, fmt.Sprintf("cache-tree-%d", i)) }
	fresh := 0
	empty := func() string { fresh++; return filepath.Join(b.work, fmt.Sprintf("cache-tree-empty-%d", fresh)) }
	r.f("## Walks of a tree of %d small meshes\n\n", n)
	r.f("%d generated GEM meshes (60–110 triangles), 100 a folder. The plain references: **shape**, a plain folder of the same names, sizes and depth as a remount of the current side lists (copied once from it: header.json with its bytes, every other file sparse), and **headers**, the header.json files alone at their places. Load at the start: %s.\n\n", n, loadavg())

	// Three daemons: the two sides, and the current side without previews
	// (noPreview: the baseline's work, for figures like for like where the
	// previews add work: an entry per folder, a drawing per mesh).
	const noPreview = 2
	bins := []string{b.sides[0].bin, b.sides[1].bin, b.sides[1].bin}
	extra := [][]string{nil, nil, {"--preview-size", "0"}}
	mount := func(i int, dir string, env []string, args ...string) (*daemon, error) {
		return b.mount(bins[i], src, mnt(i), env, append(append([]string{"--cache-dir", dir}, extra[i]...), args...)...)
	}

	// Fill each daemon's disk cache with its pre-warmer.
	var pre [3][]float64
	var prePeak [3]float64
	for i := range bins {
		d, err := mount(i, filled(i), nil, "--prewarm")
		if err != nil {
			return err
		}
		d.resetPeak()
		t, _ := msSince(func() error {
			for t0 := time.Now(); time.Since(t0) < 30*time.Minute; time.Sleep(100 * time.Millisecond) {
				if st := d.stats(); st.Prewarm != nil && !st.Prewarm.Running {
					return nil
				}
			}
			return nil
		})
		d.waitIdle()
		prePeak[i] = d.peakMiB()
		d.stop()
		pre[i] = []float64{t}
	}
	b.peak(fmt.Sprintf("tree, `--prewarm` of %d meshes", n), prePeak[0], prePeak[1])
	b.peak(fmt.Sprintf("tree, `--prewarm` of %d meshes, current side with `--preview-size 0`", n), prePeak[0], prePeak[noPreview])

	// The plain folders, from a remount of the current side.
	shape, headers := filepath.Join(b.work, "shape"), filepath.Join(b.work, "headers")
	d, err := mount(1, filled(1), nil)
	if err != nil {
		return err
	}
	err = copyShape(mnt(1), shape, headers)
	d.stop()
	if err != nil {
		return fmt.Errorf("copying the mount's shape: %w", err)
	}

	grep := func(dir string) func() error {
		return sh("grep -r --include=header.json -c vertex " + dir + " > /dev/null || [ $? -eq 1 ]")
	}
	// side runs f on a new daemon i (on cache dir(), after
	// prepare), adding its conversions and drawn previews to conv and
	// its peak to peak.
	type counts struct {
		geometry, previews int64
		peak               float64
	}
	var cnt [2]counts
	side := func(i int, dir func() string, prepare func(), f func() error, env ...string) func() (float64, error) {
		return func() (float64, error) {
			d, err := mount(i, dir(), env)
			if err != nil {
				return 0, err
			}
			defer d.stop()
			if prepare != nil {
				prepare()
			}
			before := d.stats()
			d.resetPeak()
			t, err := msSince(f)
			after := d.stats()
			c := &cnt[min(i, 1)] // noPreview is a step's current side
			c.geometry += after.geometry() - before.geometry()
			c.previews += after.previews() - before.previews()
			c.peak = max(c.peak, d.peakMiB())
			return t, err
		}
	}
	plain := func(prepare func(), f func() error) func() (float64, error) {
		return func() (float64, error) {
			if prepare != nil {
				prepare()
			}
			return msSince(f)
		}
	}
	drop := func() { dropCaches() }
	// through is a walk through go-fuse's loopback of the shape (after
	// prepare), run in turn with the sides and the plain reference (nil: none).
	lb := b.loopback()
	through := func(prepare func(), walk func(string) func() error) func() (float64, error) {
		if lb == nil {
			return nil
		}
		return lb(shape, prepare, walk)
	}
	var rows []row
	var conv [][2]counts
	step := func(what, refName string, reps int, fs ...func() (float64, error)) ([][]float64, error) {
		cnt = [2]counts{}
		runs, err := interleave(reps, fs...)
		if err != nil {
			return nil, err
		}
		x := row{what: what, base: runs[0], cur: runs[1]}
		if len(fs) > 2 {
			x.ref, x.refName = runs[2], refName
		}
		rows = append(rows, x)
		conv = append(conv, cnt)
		b.peak("tree, "+what, cnt[0].peak, cnt[1].peak)
		return runs, nil
	}
	cold, err := step("cold `grep -r --include=header.json` (new daemon, empty cache, page cache dropped)", "headers, cold", b.o.reps,
		side(0, empty, drop, grep(mnt(0))), side(1, empty, drop, grep(mnt(1))), plain(drop, grep(headers)), through(drop, grep))
	if err != nil {
		return err
	}
	coldConv := conv[len(conv)-1]
	lsCold, err := step("cold `ls -lR` (new daemon, empty cache)", "shape", 1,
		side(0, empty, nil, sh("ls -lR "+mnt(0)+" > /dev/null")), side(1, empty, nil, sh("ls -lR "+mnt(1)+" > /dev/null")), plain(nil, sh("ls -lR "+shape+" > /dev/null")))
	if err != nil {
		return err
	}
	lsColdConv := conv[len(conv)-1]
	at := func(i int) func() string { return func() string { return filled(i) } }
	find := func(dir string) func() error { return sh("find " + dir + " -name '*.glb' | wc -l > /dev/null") }
	findRuns, err := step("remount, `find -name '*.glb'` (new daemon on the filled disk cache)", "shape", b.o.reps,
		side(0, at(0), nil, find(mnt(0))), side(1, at(1), nil, find(mnt(1))), plain(nil, find(shape)), through(nil, find))
	if err != nil {
		return err
	}
	prof := filepath.Join(b.work, "cpu-tree-ls.prof")
	ls := func(dir string) func() error { return sh("ls -lR " + dir + " > /dev/null") }
	lsRuns, err := step("remount, `ls -lR` (new daemon on the filled disk cache)", "shape", b.o.reps,
		side(0, at(0), nil, ls(mnt(0))), side(1, at(1), nil, ls(mnt(1)), "MESHFS_CPUPROFILE="+prof), plain(nil, ls(shape)), through(nil, ls))
	if err != nil {
		return err
	}
	lsConv := conv[len(conv)-1]
	r.profile("the current daemon over its last remount `ls -lR` of the tree", b.sides[1].bin, prof)
	// Like for like: the baseline against the current side doing its work.
	if _, err := step("remount, `find`, current side with `--preview-size 0` (the baseline's work)", "", b.o.reps,
		side(0, at(0), nil, find(mnt(0))), side(noPreview, at(noPreview), nil, find(mnt(noPreview)))); err != nil {
		return err
	}
	if _, err := step("remount, `ls -lR`, current side with `--preview-size 0` (the baseline's work)", "", b.o.reps,
		side(0, at(0), nil, ls(mnt(0))), side(noPreview, at(noPreview), nil, ls(mnt(noPreview)))); err != nil {
		return err
	}

	rows = append(rows, row{what: fmt.Sprintf("`--prewarm` of the %d meshes (one run each)", n), base: pre[0], cur: pre[1]},
		row{what: fmt.Sprintf("`--prewarm` of the %d meshes, current side with `--preview-size 0` (the baseline's work)", n), base: pre[0], cur: pre[noPreview]})
	b.table(rows)
	r.f("Conversions during the steps (geometry outputs; previews drawn), baseline / current:\n\n")
	for k, x := range rows[:len(conv)] {
		r.f("- %s: %d / %d; %d / %d\n", x.what, conv[k][0].geometry, conv[k][1].geometry, conv[k][0].previews, conv[k][1].previews)
	}
	ns, np := lineCount("ls -lR "+src), lineCount("ls -lR "+shape)
	r.f("\n`ls -lR` prints %d lines for the shape folder, %d for the source tree.\n\n", np, ns)
	b.loopbackNote([]loopbackWalk{{"cold `grep -r`, page cache dropped", "headers, cold"}, {"remount `find`", "shape"}, {"remount `ls -lR`", "shape"}},
		[][][]float64{cold, findRuns, lsRuns})

	m := func(v []float64) float64 { return median(v) }
	cr := m(cold[1]) / m(cold[2])
	r.target("cold `grep -r --include=header.json` ≤ 1.5 × the plain header files, 0 geometry conversions", cr <= 1.5 && coldConv[1].geometry == 0,
		fmt.Sprintf("%.2f ×, %d conversions (baseline %.2f ×)", cr, coldConv[1].geometry, m(cold[0])/m(cold[2])))
	fr := m(findRuns[1]) / m(findRuns[2])
	r.target("remount `find` ≤ 2 × a plain tree of the same shape", fr <= 2, fmt.Sprintf("%.2f × (baseline %.2f ×)", fr, m(findRuns[0])/m(findRuns[2])))
	lr := m(lsRuns[1]) / m(lsRuns[2])
	r.target("remount `ls -lR` ≤ 1.5 × a plain tree of the same shape", lr <= 1.5, fmt.Sprintf("%.2f × (baseline %.2f ×)", lr, m(lsRuns[0])/m(lsRuns[2])))
	r.target(fmt.Sprintf("`ls -lR` of %d meshes draws 0 previews (cold and remount)", n), lsColdConv[1].previews == 0 && lsConv[1].previews == 0,
		fmt.Sprintf("%d drawn cold (%.0f ms, %d geometry conversions), %d after a remount", lsColdConv[1].previews, m(lsCold[1]), lsColdConv[1].geometry, lsConv[1].previews))
	return nil
}

// copyShape copies the tree under mnt as a plain folder of its shape to
// shape (header.json with its bytes, every other file sparse at the size
// the mount shows) and its header.json files alone to headers.
func copyShape(mnt, shape, headers string) error {
	return filepath.WalkDir(mnt, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(mnt, p)
		if de.IsDir() {
			if de.Name() == ".meshfs" {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(shape, rel), 0o755)
		}
		fi, err := de.Info()
		if err != nil {
			return err
		}
		if de.Name() == "header.json" {
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			os.MkdirAll(filepath.Dir(filepath.Join(headers, rel)), 0o755)
			if err := os.WriteFile(filepath.Join(headers, rel), data, 0o644); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(shape, rel), data, 0o644)
		}
		f, err := os.Create(filepath.Join(shape, rel))
		if err != nil {
			return err
		}
		err = f.Truncate(fi.Size())
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	})
}

// lineCount is the number of lines a shell command prints.
func lineCount(script string) int {
	out, err := exec.Command("sh", "-c", script).Output()
	if err != nil {
		return -1
	}
	return bytes.Count(out, []byte("\n"))
}

// writeTree writes n small GEM meshes under src, 100 a folder.
func writeTree(src string, n int) error {
	for i := range n {
		dir := filepath.Join(src, fmt.Sprintf("d%03d", i/100))
		if i%100 == 0 {
			os.MkdirAll(dir, 0o755)
		}
		data, err := meshgen.GEM(60+i%50, float32(i))
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("m%05d.ply", i)), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
