package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// assimp: the same job done by assimp, which reads the .obj meshfs makes
// of the big GEM mesh (copied to a plain folder with its .mtl) and writes
// a .glb (`assimp export big.obj big.glb`), against meshfs's first read of
// that mesh's .glb (the big section's current median: conversion from the
// source, through the mount).
func (b *bench) assimp() error {
	r := &b.rep
	if b.bigSrc == "" || b.bigFirst == 0 {
		r.f("## assimp\n\nNot measured: the big section did not run.\n\n")
		return nil
	}
	if _, err := exec.LookPath("assimp"); err != nil {
		r.target("assimp ≥ 10 × slower than meshfs on the same OBJ → .glb job", false, "assimp is not installed")
		return nil
	}
	src := filepath.Dir(b.bigSrc)
	mnt := filepath.Join(b.work, "mnt-assimp")
	d, err := b.mount(b.sides[1].bin, src, mnt, nil, "--cache-dir", filepath.Join(b.work, "cache-assimp"))
	if err != nil {
		return err
	}
	plain := filepath.Join(b.work, "assimp")
	os.MkdirAll(plain, 0o755)
	name := filepath.Base(b.bigSrc)
	stem := strings.TrimSuffix(name, filepath.Ext(name))
	for _, f := range []string{stem + ".obj", stem + ".mtl"} {
		data, err := os.ReadFile(filepath.Join(mnt, name, f))
		if err != nil {
			d.stop()
			return err
		}
		if err := os.WriteFile(filepath.Join(plain, f), data, 0o644); err != nil {
			d.stop()
			return err
		}
	}
	d.stop()
	reps := 3
	if b.o.quick {
		reps = 1
	}
	obj := filepath.Join(plain, stem+".obj")
	runs, err := interleave(reps, func() (float64, error) {
		return msSince(func() error {
			out, err := exec.Command("assimp", "export", obj, filepath.Join(plain, "out.glb")).CombinedOutput()
			if err != nil {
				return fmt.Errorf("assimp export: %v: %s", err, tail(string(out), 5))
			}
			return nil
		})
	})
	if err != nil {
		return err
	}
	fi, _ := os.Stat(obj)
	mf := float64(b.bigFirst.Microseconds()) / 1000
	a := median(runs[0])
	r.f("## assimp on the same job\n\n`assimp export big.obj big.glb` of the `.obj` (%.0f MB) meshfs makes of the 1 M-triangle GEM mesh, against meshfs's first read of that mesh's `.glb` through the mount (conversion from the source included; the current side's median above). Runs: %s ms. Load: %s.\n\n", float64(fi.Size())/1e6, figs(runs[0], "ms"), loadavg())
	r.f("| job | time | × meshfs |\n|---|---:|---:|\n| meshfs, first read of `big.glb` | %s | 1 |\n| assimp, `.obj` → `.glb` | %s | %.1f × |\n\n", fig(mf, "ms"), fig(a, "ms"), a/mf)
	r.target("assimp ≥ 10 × slower than meshfs on the same OBJ → .glb job", a/mf >= 10, fmt.Sprintf("%.1f × (assimp %s, meshfs %s)", a/mf, fig(a, "ms"), fig(mf, "ms")))
	return nil
}
