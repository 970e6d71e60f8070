package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
)

// faultRoot is a FUSE tree of one file, hot/x, of faultSize bytes whose
// every read fails with errno: a mapped page of it faults.
type faultRoot struct {
	gofs.Inode
	errno syscall.Errno
}

type faultFile struct {
	gofs.Inode
	errno syscall.Errno
}

const faultSize = 8192

func (r *faultRoot) OnAdd(ctx context.Context) {
	hot := r.NewPersistentInode(ctx, &gofs.Inode{}, gofs.StableAttr{Mode: syscall.S_IFDIR})
	r.AddChild("hot", hot, false)
	x := r.NewPersistentInode(ctx, &faultFile{errno: r.errno}, gofs.StableAttr{Mode: syscall.S_IFREG})
	hot.AddChild("x", x, false)
}

func (f *faultFile) Getattr(ctx context.Context, fh gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	out.Mode = syscall.S_IFREG | 0o444
	out.Size = faultSize
	return 0
}

func (f *faultFile) Open(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	return nil, 0, 0
}

func (f *faultFile) Read(ctx context.Context, fh gofs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	return nil, f.errno
}

var (
	_ = (gofs.NodeOnAdder)((*faultRoot)(nil))
	_ = (gofs.NodeGetattrer)((*faultFile)(nil))
	_ = (gofs.NodeOpener)((*faultFile)(nil))
	_ = (gofs.NodeReader)((*faultFile)(nil))
)

// The faulting tree is served by a child process (this test binary, as
// TestSoakFaultServer): a goroutine faulting on a mapped page of a FUSE
// file its own process serves holds its P in the kernel, and a collection's
// stop-the-world then waits for it while the server cannot run to answer.
const faultServerEnv = "MESHFS_FAULT_SERVER"

// TestSoakFaultServer serves the faulting tree when started by
// TestSoakTellsEIOFromReplaced ($MESHFS_FAULT_SERVER = "MNT ERRNO"), until
// its standard input closes; run otherwise it does nothing.
func TestSoakFaultServer(t *testing.T) {
	spec := os.Getenv(faultServerEnv)
	if spec == "" {
		return
	}
	var mnt string
	var errno int
	if _, err := fmt.Sscan(spec, &mnt, &errno); err != nil {
		t.Fatalf("%s=%q: %v", faultServerEnv, spec, err)
	}
	srv, err := gofs.Mount(mnt, &faultRoot{errno: syscall.Errno(errno)}, &gofs.Options{
		MountOptions: fuse.MountOptions{DirectMount: os.Geteuid() == 0, FsName: "soakfault"},
	})
	if err != nil {
		t.Fatalf("mounting the faulting tree: %v", err)
	}
	fmt.Println("ready")
	io.Copy(io.Discard, os.Stdin)
	srv.Unmount()
}

// startFaultServer mounts the faulting tree on mnt in a child process and
// returns once it is ready; the child unmounts and ends with the test.
func startFaultServer(t *testing.T, mnt string, errno syscall.Errno) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestSoakFaultServer$", "-test.count=1")
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s %d", faultServerEnv, mnt, int(errno)))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		stdin.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(guard):
			cmd.Process.Kill()
			<-done
		}
		checkRace(t, cmd.Process.Pid)
	})
	line := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(out).ReadString('\n')
		line <- l
		io.Copy(io.Discard, out)
	}()
	select {
	case l := <-line:
		if strings.TrimSpace(l) != "ready" {
			t.Fatalf("fault server: %q\n%s", l, stderr.String())
		}
	case <-time.After(guard):
		t.Fatalf("fault server not ready after %v\n%s", guard, stderr.String())
	}
}

// TestSoakTellsEIOFromReplaced: the soak's mmap reader counts a mapped
// page that faults as a replaced file only when the same descriptor's read
// then says the version is gone (ESTALE); a fault whose read fails with
// EIO is an error, and counted as EIO.
func TestSoakTellsEIOFromReplaced(t *testing.T) {
	canMount(t)
	for _, c := range []struct {
		name                   string
		errno                  syscall.Errno
		replaced, errors, eios int64
	}{
		{"ESTALE", syscall.ESTALE, 1, 0, 0},
		{"EIO", syscall.EIO, 0, 1, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			mnt := mountDir(t)
			startFaultServer(t, mnt, c.errno)
			f, err := os.Open(filepath.Join(mnt, "hot", "x"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var counts soakCounts
			var msgs []string
			report := func(kind *atomic.Int64, format string, args ...any) {
				kind.Add(1)
				msgs = append(msgs, format)
			}
			soakMmap(f, filepath.Join("hot", "x"), faultSize, [][]byte{make([]byte, faultSize)}, &counts, report)
			if counts.replaced.Load() != c.replaced || counts.errors.Load() != c.errors || counts.eio.Load() != c.eios || counts.stale.Load() != 0 {
				t.Errorf("reads failing with %v: %d replaced, %d errors (%d EIO), %d stale; want %d, %d (%d), 0: %q",
					c.errno, counts.replaced.Load(), counts.errors.Load(), counts.eio.Load(), counts.stale.Load(), c.replaced, c.errors, c.eios, msgs)
			}
		})
	}
}
