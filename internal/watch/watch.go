// Package watch tells the mount of changes under its source, apart from
// FUSE: an inotify watcher (fsnotify) whose events wait until the mount is
// ready, and whose lost events are reported as one overflow.
package watch

import (
	"errors"
	"path/filepath"
	"sync"

	"github.com/fsnotify/fsnotify"
)

// Handler is what the mount does with what the watcher sees.
type Handler interface {
	// Changed is called for every change, appearance or removal of the
	// entry at path.
	Changed(path string)
	// Failed is called for every error of the watcher; lost is set when
	// events were lost (everything the kernel holds may be stale).
	Failed(err error, lost bool)
}

// Watcher watches folders as the mount asks. Events wait for Start:
// handling one touches the mounted tree, which is set up while mounting.
type Watcher struct {
	h         Handler
	w         *fsnotify.Watcher
	done      sync.WaitGroup
	ready     chan struct{}
	readyOnce sync.Once
	once      sync.Map // folders AddOnce was asked for
}

// New starts a watcher that reports to h once started.
func New(h Handler) (*Watcher, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	wt := &Watcher{h: h, w: w, ready: make(chan struct{})}
	wt.done.Add(1)
	go wt.loop()
	return wt, nil
}

// Add watches the folder dir (not its subfolders).
func (wt *Watcher) Add(dir string) error { return wt.w.Add(dir) }

// AddOnce watches dir unless AddOnce was asked for it before (a folder of
// material files and textures, which several meshes name): only the
// first call tries, and reports its error.
func (wt *Watcher) AddOnce(dir string) error {
	if _, seen := wt.once.LoadOrStore(dir, true); seen {
		return nil
	}
	return wt.w.Add(dir)
}

// AddFoldersOf watches the folder of each of paths (AddOnce), calling
// failed for each one it could not watch.
func (wt *Watcher) AddFoldersOf(paths []string, failed func(dir string, err error)) {
	for _, p := range paths {
		dir := filepath.Dir(p)
		if err := wt.AddOnce(dir); err != nil {
			failed(dir, err)
		}
	}
}

// Start lets the watcher report events (after the mount).
func (wt *Watcher) Start() { wt.readyOnce.Do(func() { close(wt.ready) }) }

// Close stops the watcher and waits for the event being handled.
func (wt *Watcher) Close() {
	wt.Start()
	wt.w.Close()
	wt.done.Wait()
}

func (wt *Watcher) loop() {
	defer wt.done.Done()
	<-wt.ready
	for {
		select {
		case ev, ok := <-wt.w.Events:
			if !ok {
				return
			}
			wt.h.Changed(ev.Name)
		case err, ok := <-wt.w.Errors:
			if !ok {
				return
			}
			wt.h.Failed(err, errors.Is(err, fsnotify.ErrEventOverflow))
		}
	}
}
