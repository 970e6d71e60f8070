package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/meshfs/meshfs/internal/fusetest"
	"github.com/meshfs/meshfs/internal/meshgen"
)

// stormStats is the part of stats.json the storm tests read.
type stormStats struct {
	Conversions map[string]int64 `json:"conversions"`
	DiskLoads   map[string]int64 `json:"disk_loads"`
	Cache       struct {
		HoldWaits     int64 `json:"hold_waits"`
		HoldsReleased int64 `json:"holds_released"`
	} `json:"cache"`
}

func readStormStats(t *testing.T, mnt string) stormStats {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(mnt, ".meshfs", "stats.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s stormStats
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("stats.json: %v\n%s", err, b)
	}
	return s
}

// TestConversionStorm: concurrent readers of meshes whose outputs are each
// bigger than the memory budget, without a disk cache, convert each mesh
// once (a single pinned copy serves them all while they read), and the
// daemon's peak RSS stays within budget + 150 MiB.
func TestConversionStorm(t *testing.T) {
	if testing.Short() {
		t.Skip("generates and converts about 20 MB of meshes")
	}
	for _, c := range []struct {
		name string
		args []string
	}{
		{"memory", []string{"--no-disk-cache"}},
		{"disk", []string{"--cache-dir", ""}},
	} {
		t.Run(c.name, func(t *testing.T) {
			src, mnt := sourceTree(t), mountDir(t)
			os.Remove(filepath.Join(src, "ground.ply"))
			const budget = 1 << 20
			meshes, readers, triangles := 4, 8, 400_000
			if v := os.Getenv("MESHFS_STORM"); v != "" {
				// A bigger storm, to measure: "readers,meshes,triangles".
				if _, err := fmt.Sscanf(v, "%d,%d,%d", &readers, &meshes, &triangles); err != nil {
					t.Fatalf("MESHFS_STORM=%q: %v", v, err)
				}
			}
			want := map[string][]byte{}
			for i := range meshes {
				b, err := meshgen.GEM(triangles, float32(i))
				if err != nil {
					t.Fatal(err)
				}
				name := fmt.Sprintf("m%d.ply", i)
				if err := os.WriteFile(filepath.Join(src, name), b, 0o644); err != nil {
					t.Fatal(err)
				}
				want[name] = nil
			}
			args := append([]string{}, c.args...)
			if args[len(args)-1] == "" {
				args[len(args)-1] = t.TempDir()
			}
			d := startMount(t, append(args, "--cache-size", strconv.Itoa(budget), src, mnt)...)
			glb := func(i int) string {
				return filepath.Join(mnt, fmt.Sprintf("m%d.ply", i), fmt.Sprintf("m%d.glb", i))
			}
			for round := range 2 {
				if round == 1 && c.name == "memory" {
					break
				}
				if round == 1 {
					// The disk-cache round: a fresh mount reads what the
					// first one saved.
					if err := d.stop(t, syscall.SIGTERM); err != nil {
						t.Fatalf("exit: %v\n%s", err, d.stderr)
					}
					d = startMount(t, append(args, "--cache-size", strconv.Itoa(budget), src, mnt)...)
				}
				began := time.Now()
				var wg sync.WaitGroup
				errs := make(chan error, readers*meshes)
				sizes := make([][]int, readers)
				done := make(chan struct{})
				for r := range readers {
					sizes[r] = make([]int, meshes)
					wg.Add(1)
					go func() {
						defer wg.Done()
						for k := range meshes {
							i := (r + k) % meshes
							b, err := os.ReadFile(glb(i))
							if err != nil {
								errs <- err
								return
							}
							sizes[r][i] = len(b)
						}
					}()
				}
				go func() { wg.Wait(); close(done) }()
				select {
				case <-done:
				case <-time.After(3 * guard):
					fusetest.AbortAt(mnt)
					t.Fatalf("readers not done within %v", 3*guard)
				}
				close(errs)
				for err := range errs {
					t.Fatal(err)
				}
				for r := range readers {
					for i := range meshes {
						if sizes[r][i] != sizes[0][i] || sizes[r][i] <= budget {
							t.Fatalf("reader %d read %d bytes of m%d.glb (reader 0: %d; budget %d)", r, sizes[r][i], i, sizes[0][i], budget)
						}
					}
				}
				s := readStormStats(t, mnt)
				peak := vmHWM(t, d.pid)
				t.Logf("round %d: %d readers × %d meshes (.glb %d KiB), cache %d KiB: conversions %v, disk loads %v, hold waits %d, holds released %d, peak RSS %d MiB, in %v",
					round, readers, meshes, sizes[0][0]>>10, budget>>10, s.Conversions, s.DiskLoads, s.Cache.HoldWaits, s.Cache.HoldsReleased, peak>>20, time.Since(began).Round(time.Millisecond))
				// Each mesh made once: converted in the first round, loaded
				// from the disk cache in the second.
				wantConv, wantDisk := int64(meshes), int64(0)
				if round == 1 {
					wantConv, wantDisk = 0, int64(meshes)
				}
				if got, disk := s.Conversions["gem-ply/glb"], s.DiskLoads["gem-ply/glb"]; got != wantConv || disk != wantDisk {
					t.Errorf("round %d: %d conversions and %d disk loads of %d meshes, want %d and %d", round, got, disk, meshes, wantConv, wantDisk)
				}
				if limit := int64(budget + 150<<20); peak > limit && rssBounded(t) {
					t.Errorf("round %d: peak RSS %d MiB over budget + 150 MiB", round, peak>>20)
				}
			}
		})
	}
}
