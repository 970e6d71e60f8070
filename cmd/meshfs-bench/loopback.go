package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// loopback is a measurement through go-fuse's example loopback daemon
// passing a plain folder through (the mount's shape), for the walks to run
// interleaved with both sides and the plain folder: what a go-fuse daemon
// that only passes a tree of the mount's shape through costs, before it
// does anything of its own. Its daemon is built from the go-fuse the
// current side requires, and started afresh for each run (prepare, when
// set, runs once it is mounted). It opens every folder (OPENDIR,
// RELEASEDIR) where the mount does not (no_opendir), so it makes 4
// requests a folder to the mount's 2. Nil when it does not build (the
// report says why).
func (b *bench) loopback() func(orig string, prepare func(), walk func(string) func() error) func() (float64, error) {
	bin := filepath.Join(b.work, "loopback")
	build := exec.Command("go", "build", "-o", bin, "github.com/hanwen/go-fuse/v2/example/loopback")
	build.Dir = b.sides[1].root
	if out, err := build.CombinedOutput(); err != nil {
		b.rep.f("go-fuse's loopback did not build (%v): %s\n\n", err, out)
		return nil
	}
	mnt := filepath.Join(b.work, "mnt-loopback")
	os.MkdirAll(mnt, 0o755)
	return func(orig string, prepare func(), walk func(string) func() error) func() (float64, error) {
		return func() (float64, error) {
			stop, err := mountLoopback(bin, orig, mnt)
			if err != nil {
				return 0, err
			}
			defer stop()
			if prepare != nil {
				prepare()
			}
			return msSince(walk(mnt))
		}
	}
}

// loopbackWalk names a walk run through the loopback and its plain
// reference.
type loopbackWalk struct{ walk, ref string }

// loopbackNote reports the loopback's runs of each walk (the 4th of its
// step's runs, the plain reference's the 3rd).
func (b *bench) loopbackNote(walks []loopbackWalk, runs [][][]float64) {
	r := &b.rep
	r.f("**A go-fuse daemon of the same shape.** go-fuse's example loopback passing the shape folder through (a new daemon each run, in turn with the sides and the plain reference; it also opens each folder: 4 requests a folder where the mount makes 2):\n\n")
	for i, w := range walks {
		if len(runs[i]) < 4 {
			continue
		}
		lb, ref, cur := runs[i][3], runs[i][2], runs[i][1]
		r.f("- %s: loopback %s, %s the %s; the current side %s the loopback (loopback runs: %s)\n", w.walk, medFig(lb, ""), ratio(lb, ref), w.ref, ratio(cur, lb), figs(lb, ""))
	}
	r.f("\n")
}

// mountLoopback starts go-fuse's loopback of orig at mnt and waits for
// its mount; stop unmounts it.
func mountLoopback(bin, orig, mnt string) (stop func(), err error) {
	cmd := exec.Command(bin, "-ro", mnt, orig)
	cmd.Stderr = io.Discard
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil || !strings.Contains(line, "Mounted") {
		cmd.Process.Kill()
		cmd.Wait()
		return nil, fmt.Errorf("loopback mount: %q %v", line, err)
	}
	go io.Copy(io.Discard, out)
	return func() {
		cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	}, nil
}
