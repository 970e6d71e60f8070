package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"github.com/meshfs/meshfs/internal/store"
)

// A --daemon without --log logs to daemonLogName in its cache folder; the
// file is renamed to daemonLogName+".1" (replacing the previous one) once it
// reaches daemonLogMax bytes, so the two never hold more than twice that.
const (
	daemonLogName = "daemon.log"
	daemonLogMax  = 4 << 20
)

// daemonLog returns the default log file of a daemon whose cache folder is
// cacheDir (a real path, "" for none), or "" when there is none.
func daemonLog(cacheDir string) string {
	if cacheDir == "" {
		return ""
	}
	return filepath.Join(cacheDir, daemonLogName)
}

// rotatingLog appends to a file, moving it aside to path.1 when it reaches
// max bytes. Several daemons sharing a cache folder may append to the same
// file: each write goes to the file now at path (reopened when another
// process rotated it).
type rotatingLog struct {
	mu   sync.Mutex
	path string
	max  int64
	f    *os.File
}

// openRotatingLog opens the log file path (in a cache folder, which it
// prepares: created and marked if need be).
func openRotatingLog(path string, max int64) (*rotatingLog, error) {
	if err := store.PrepareCacheDir(filepath.Dir(path)); err != nil {
		return nil, err
	}
	l := &rotatingLog{path: path, max: max}
	if err := l.reopen(); err != nil {
		return nil, err
	}
	return l, nil
}

func (l *rotatingLog) reopen() error {
	f, err := os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o600)
	if err != nil {
		return fmt.Errorf("log file: %w", err)
	}
	if l.f != nil {
		l.f.Close()
	}
	l.f = f
	return nil
}

func (l *rotatingLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	cur, err := l.f.Stat()
	if err != nil {
		return 0, err
	}
	if at, err := os.Stat(l.path); err != nil || !os.SameFile(cur, at) {
		// Rotated (or removed) by someone else: follow the name.
		if err := l.reopen(); err != nil {
			return 0, err
		}
	} else if cur.Size() > 0 && cur.Size()+int64(len(p)) > l.max {
		if err := os.Rename(l.path, l.path+".1"); err != nil {
			return 0, err
		}
		if err := l.reopen(); err != nil {
			return 0, err
		}
	}
	return l.f.Write(p)
}

func (l *rotatingLog) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.f.Close()
}

// teeUntil writes to w, and to pre as well until detach: a daemon's log
// lines also reach whoever started it until the mount is ready.
type teeUntil struct {
	mu  sync.Mutex
	w   io.Writer
	pre io.Writer
}

func (t *teeUntil) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.pre != nil {
		t.pre.Write(p)
	}
	return t.w.Write(p)
}

func (t *teeUntil) detach() {
	t.mu.Lock()
	t.pre = nil
	t.mu.Unlock()
}
