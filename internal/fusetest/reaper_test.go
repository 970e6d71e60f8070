package fusetest

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/meshfs/meshfs/internal/mountpoint"
)

func TestMain(m *testing.M) {
	stop := StartReaper()
	if r := os.Getenv(roleEnv); r != "" {
		if err := play(r); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	code := m.Run()
	stop()
	os.Exit(code)
}

// roleEnv makes this test binary a victim (a test binary that mounts and
// starts a daemon that mounts, then is killed) or that daemon.
const roleEnv = "FUSETEST_ROLE"

// blocker is a file whose reads never return while the mount lives.
type blocker struct{ gofs.Inode }

var _ = (gofs.NodeOpener)((*blocker)(nil))
var _ = (gofs.NodeReader)((*blocker)(nil))

func (*blocker) Open(context.Context, uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	return nil, fuse.FOPEN_DIRECT_IO, 0
}

func (*blocker) Read(ctx context.Context, _ gofs.FileHandle, _ []byte, _ int64) (fuse.ReadResult, syscall.Errno) {
	select {} // a hung daemon
}

type root struct{ gofs.Inode }

var _ = (gofs.NodeOnAdder)((*root)(nil))

func (r *root) OnAdd(ctx context.Context) {
	r.AddChild("block", r.NewPersistentInode(ctx, &blocker{}, gofs.StableAttr{}), false)
}

// mountHere mounts a root with a file whose reads hang, in this process.
func mountHere() (string, error) {
	mnt, err := os.MkdirTemp("", "mnt")
	if err != nil {
		return "", err
	}
	_, err = gofs.Mount(mnt, &root{}, &gofs.Options{MountOptions: fuse.MountOptions{DirectMount: os.Geteuid() == 0, FsName: "fusetest"}})
	return mnt, err
}

// play plays a role for TestReaperAfterKill: "victim", a test binary that
// mounts, starts a daemon that mounts, and leaves readers stuck in both;
// or "daemon". Once ready it says so on stdout and waits to be killed.
func play(role string) error {
	mnt, err := mountHere()
	if err != nil {
		return err
	}
	if role == "daemon" {
		fmt.Println("READY", mnt)
		select {}
	}
	d := exec.Command(os.Args[0])
	d.Env = append(os.Environ(), roleEnv+"=daemon")
	out, err := d.StdoutPipe()
	if err != nil {
		return err
	}
	if err := d.Start(); err != nil {
		return err
	}
	line, _ := bufio.NewReader(out).ReadString('\n')
	dmnt, ok := strings.CutPrefix(strings.TrimSpace(line), "READY ")
	if !ok {
		return fmt.Errorf("daemon said %q", line)
	}
	for _, m := range []string{mnt, dmnt} {
		if err := exec.Command("cat", filepath.Join(m, "block")).Start(); err != nil {
			return err
		}
	}
	fmt.Println("READY", mnt, dmnt, d.Process.Pid, os.Getenv(markEnv))
	select {}
}

// TestReaperAfterKill: a test binary killed with SIGKILL while it holds a
// mount, has started a daemon that holds another, and has readers stuck
// in both leaves nothing behind: no mount, no process, no folder.
func TestReaperAfterKill(t *testing.T) {
	if _, err := os.Stat("/dev/fuse"); err != nil && os.Getenv("CI") == "" {
		t.Skip("no /dev/fuse")
	}
	v := exec.Command(os.Args[0])
	// A victim of its own, not one reaped by this binary's reaper.
	var env []string
	for _, e := range os.Environ() {
		if !strings.HasPrefix(e, markEnv+"=") {
			env = append(env, e)
		}
	}
	v.Env = append(env, roleEnv+"=victim")
	v.Stderr = os.Stderr
	out, err := v.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(out).ReadString('\n')
		ready <- l
	}()
	var line string
	select {
	case line = <-ready:
	case <-time.After(30 * time.Second):
		v.Process.Kill()
		t.Fatal("the victim was not ready in 30 s")
	}
	var mnt, dmnt, vroot string
	var dpid int
	if _, err := fmt.Sscanf(line, "READY %s %s %d %s", &mnt, &dmnt, &dpid, &vroot); err != nil {
		v.Process.Kill()
		t.Fatalf("victim said %q: %v", line, err)
	}
	if n := len(MountsBeneath(vroot)); n != 2 {
		t.Errorf("before the kill: %d mounts beneath %s, want 2", n, vroot)
	}
	// The daemon and the two readers (the victim's own mark is set after
	// its exec, so /proc does not show it: the reaper spares it by pid).
	if m := Marked(vroot); len(m) != 3 || !slices.Contains(m, dpid) {
		t.Errorf("before the kill: marked processes %v, want the daemon %d and two readers", m, dpid)
	}
	v.Process.Kill()
	v.Wait()

	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		_, err := os.Stat(vroot)
		if len(MountsBeneath(vroot)) == 0 && len(Marked(vroot)) == 0 && os.IsNotExist(err) {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Errorf("20 s after the kill: mounts %v, processes %v left", MountsBeneath(vroot), Marked(vroot))
	if _, err := os.Stat(vroot); err == nil {
		t.Errorf("%s is still there", vroot)
	}
	// Leave the machine clean even when the reaper failed.
	Cleanup(vroot, nil)
	if _, ok := mountpoint.Last(dmnt); ok {
		syscall.Unmount(dmnt, syscall.MNT_DETACH)
	}
}
