package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// daemon is one `meshfs mount` process in the foreground.
type daemon struct {
	cmd *exec.Cmd
	mnt string
	log bytes.Buffer
}

// mount starts bin on src at mnt with the budget and args, and waits for
// its ready line; env adds environment variables.
func (b *bench) mount(bin, src, mnt string, env []string, args ...string) (*daemon, error) {
	os.MkdirAll(mnt, 0o755)
	a := append([]string{"mount", "--cache-size", fmt.Sprintf("%dMiB", b.o.cacheMB)}, args...)
	a = append(a, src, mnt)
	d := &daemon{mnt: mnt, cmd: exec.Command(bin, a...)}
	if env != nil {
		d.cmd.Env = append(os.Environ(), env...)
	}
	d.cmd.Stderr = &d.log
	out, err := d.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := d.cmd.Start(); err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.Contains(line, "mounted on") {
		d.cmd.Process.Kill()
		d.cmd.Wait()
		return nil, fmt.Errorf("mount %s: %q %v: %s", bin, line, err, d.log.String())
	}
	go io.Copy(io.Discard, out)
	return d, nil
}

func (d *daemon) stop() error {
	if d.cmd.ProcessState != nil {
		return nil
	}
	d.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- d.cmd.Wait() }()
	select {
	case err := <-done:
		return err
	case <-time.After(30 * time.Second):
		d.cmd.Process.Kill()
		<-done
		return fmt.Errorf("daemon did not stop: %s", d.log.String())
	}
}

// resetPeak resets the daemon's VmHWM to its current RSS.
func (d *daemon) resetPeak() {
	os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", d.cmd.Process.Pid), []byte("5"), 0)
}

// peakMiB is the daemon's peak RSS since the last reset.
func (d *daemon) peakMiB() float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", d.cmd.Process.Pid))
	if err != nil {
		return -1
	}
	for _, ln := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(ln, "VmHWM:") {
			f := strings.Fields(ln)
			kb, _ := strconv.ParseFloat(f[1], 64)
			return kb / 1024
		}
	}
	return -1
}

// cpuTicks is the daemon's CPU time so far, in clock ticks.
func (d *daemon) cpuTicks() int64 {
	_, ticks := d.procStat()
	return ticks
}

// procStat is the daemon's minor page faults and CPU time (clock ticks) so
// far, from /proc/PID/stat (zero when it cannot be read).
func (d *daemon) procStat() (faults, ticks int64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", d.cmd.Process.Pid))
	if err != nil {
		return 0, 0
	}
	// minflt, utime and stime: the 8th, 12th and 13th fields after the
	// command name.
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	if len(f) < 13 {
		return 0, 0
	}
	faults, _ = strconv.ParseInt(f[7], 10, 64)
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return faults, u + s
}

// waitIdle waits (at most 10 s) until the daemon has no disk-cache save
// pending and used no CPU tick over 200 ms.
func (d *daemon) waitIdle() {
	for t0 := time.Now(); time.Since(t0) < 10*time.Second; {
		before := d.cpuTicks()
		time.Sleep(200 * time.Millisecond)
		if d.cpuTicks() == before && d.stats().DiskSavesPending == 0 {
			return
		}
	}
}

// stats is what the benchmark reads of .meshfs/stats.json (both
// revisions write these fields).
type stats struct {
	Conversions      map[string]int64 `json:"conversions"`
	Scans            map[string]int64 `json:"scans"`
	DiskSavesPending int64            `json:"disk_saves_pending"`
	Prewarm          *struct {
		Running bool `json:"running"`
	} `json:"prewarm"`
}

func (d *daemon) stats() stats {
	var s stats
	if b, err := os.ReadFile(filepath.Join(d.mnt, ".meshfs", "stats.json")); err == nil {
		json.Unmarshal(b, &s)
	}
	return s
}

// geometry is the number of geometry conversions (every output but the
// previews); previews the number of previews drawn.
func (s stats) geometry() (n int64) {
	for k, v := range s.Conversions {
		if !strings.HasSuffix(k, "/preview") {
			n += v
		}
	}
	return n
}

func (s stats) previews() (n int64) {
	for k, v := range s.Conversions {
		if strings.HasSuffix(k, "/preview") {
			n += v
		}
	}
	return n
}

// profile appends the top of a CPU profile to the profiles file.
func (r *report) profile(what, bin, path string) {
	out, err := exec.Command("go", "tool", "pprof", "-top", "-nodecount=25", bin, path).CombinedOutput()
	if err != nil {
		r.profiles = append(r.profiles, fmt.Sprintf("### %s\n\npprof failed: %v\n", what, err))
		return
	}
	var keep []string
	for _, ln := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if !strings.HasPrefix(ln, "File:") && !strings.HasPrefix(ln, "Build ID:") && !strings.HasPrefix(ln, "Type:") && !strings.HasPrefix(ln, "Time:") {
			keep = append(keep, ln)
		}
	}
	r.profiles = append(r.profiles, fmt.Sprintf("### %s\n\n```\n%s\n```\n", what, strings.Join(keep, "\n")))
}
