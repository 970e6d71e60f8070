package vfs

import (
	"context"
	"fmt"
	"io/fs"
	"sync"
)

// Others returns t as a user of the "other" class may read it, the class
// every user of the machine is in: a name is reached only through folders
// whose shown modes grant others search (x), a folder is listed only where
// they may also read it (r), and a file is opened only where they may read
// it. The shown modes are already narrowed by every file an output was made
// from, so Others serves no byte that such a user could not read from the
// source. It is what a door answers a client it knows nothing of (serve
// without --auth, on loopback: any local user can connect).
//
// What it learns of a name (its Stat) is kept for the value's life: make
// one for each request, not one for a process.
func Others(t Tree) Tree { return &others{t: t, known: map[string]Info{}} }

type others struct {
	t     Tree
	mu    sync.Mutex
	known map[string]Info
}

const (
	otherRead   fs.FileMode = 0o004
	otherSearch fs.FileMode = 0o001
)

// stat is the tree's Stat of name, asked once.
func (o *others) stat(ctx context.Context, name string) (Info, error) {
	o.mu.Lock()
	info, ok := o.known[name]
	o.mu.Unlock()
	if ok {
		return info, nil
	}
	info, err := o.t.Stat(ctx, name)
	if err != nil {
		return Info{}, err
	}
	o.mu.Lock()
	o.known[name] = info
	o.mu.Unlock()
	return info, nil
}

// reach checks every folder above name, from the root down: each must be a
// folder (a name below a file or a link does not exist) that others may
// search.
func (o *others) reach(ctx context.Context, name string) error {
	if name == "" {
		return nil // nothing stands above the root
	}
	above := []string{""}
	for i := range len(name) {
		if name[i] == '/' {
			above = append(above, name[:i])
		}
	}
	for _, d := range above {
		info, err := o.stat(ctx, d)
		switch {
		case err != nil:
			return err
		case !info.IsDir():
			return &fs.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
		case info.Mode&otherSearch == 0:
			return denied(name, d, "search")
		}
	}
	return nil
}

func denied(name, where, what string) error {
	if where == "" {
		where = "the served folder"
	}
	return fmt.Errorf("%s: %s does not let other users %s it (serve --auth serves the daemon user's view): %w", name, where, what, fs.ErrPermission)
}

func (o *others) Stat(ctx context.Context, name string) (Info, error) {
	if err := o.reach(ctx, name); err != nil {
		return Info{}, err
	}
	return o.stat(ctx, name)
}

func (o *others) ReadDir(ctx context.Context, name string) ([]Info, error) {
	info, err := o.Stat(ctx, name)
	if err != nil {
		return nil, err
	}
	if info.Mode&(otherRead|otherSearch) != otherRead|otherSearch {
		return nil, denied(name, name, "list")
	}
	return o.t.ReadDir(ctx, name)
}

func (o *others) Open(ctx context.Context, name string) (File, error) {
	info, err := o.Stat(ctx, name)
	if err != nil {
		return nil, err
	}
	if info.Mode&otherRead == 0 {
		return nil, denied(name, name, "read")
	}
	f, err := o.t.Open(ctx, name)
	if err != nil {
		return nil, err
	}
	if f.Info().Mode&otherRead == 0 { // the version opened is narrower
		f.Close()
		return nil, denied(name, name, "read")
	}
	return f, nil
}
