package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// baselineSide is the baseline revision checked out in a git worktree
// under build/bench-base/REV/meshfs (made once, then reused), with
// ../shared beside it linked to the real data beside the repository (the
// tests find it there), and its meshfs binary built there unless
// -baseline-bin names one.
func baselineSide(o *options, root string) (side, error) {
	full, err := gitOut(root, "rev-parse", "--verify", o.baseline+"^{commit}")
	if err != nil {
		return side{}, err
	}
	short := full[:7]
	dir := filepath.Join(root, "build", "bench-base", short)
	tree := filepath.Join(dir, "meshfs")
	if _, err := os.Stat(filepath.Join(tree, "go.mod")); err != nil {
		os.MkdirAll(dir, 0o755)
		if out, err := exec.Command("git", "-C", root, "worktree", "add", "--detach", tree, full).CombinedOutput(); err != nil {
			return side{}, fmt.Errorf("git worktree add: %v: %s", err, out)
		}
	}
	if head, err := gitOut(tree, "rev-parse", "HEAD"); err != nil || head != full {
		return side{}, fmt.Errorf("%s is at %s, not %s (remove it with git worktree remove)", tree, head, full)
	}
	shared := filepath.Join(dir, "shared")
	if _, err := os.Lstat(shared); err != nil {
		if real, err := filepath.Abs(filepath.Join(root, "..", "shared")); err == nil {
			os.Symlink(real, shared)
		}
	}
	bin := o.baselineBin
	if bin == "" {
		bin = filepath.Join(dir, "meshfs-bin")
		cmd := exec.Command("go", "build", "-o", bin, "./cmd/meshfs")
		cmd.Dir = tree
		if out, err := cmd.CombinedOutput(); err != nil {
			return side{}, fmt.Errorf("go build: %v: %s", err, out)
		}
	}
	bin, err = filepath.Abs(bin)
	return side{name: "baseline " + short, root: tree, bin: bin}, err
}
