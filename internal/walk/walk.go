// Package walk is what the mount does ahead of a walker (grep -r, find,
// ls -lR) going through the source tree, apart from FUSE: it remembers
// which format each source file version is (Sniffer), sniffs the files of
// the folders a walker enters next (SniffFolder), and scans a folder's
// meshes ahead of it (ScanAhead). Passes run in the background one at a
// time per kind, as far as the mount's Config says, and stop when the
// mount closes (Ahead).
//
// Listing ahead: the first listing of a source folder sniffs every file in
// it that was not sniffed before (an open and a read of its first bytes),
// which a walker waited for at every folder of a cold tree. So a folder's
// first listing starts a pass that sniffs the files of the folders after it
// in its parent's listing (FolderOrder): the walker then finds the sniffs
// cached, and the small files' bytes in the page cache for the scans that
// follow. Only sniffs: nothing is scanned or converted.
//
// Scanning ahead: a walker enters a folder's mesh folders one after the
// other, and each cold one makes it wait for a structure scan. So the first
// cold mesh folder listed starts a pass that scans the folder's next meshes
// (from the one after it, in listing order) while the walker reads the
// first; the walker then finds most scans done, or joins the one in
// progress. Only scans: a listing never converts.
package walk

import (
	"cmp"
	"context"
	"io"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/maypok86/otter/v2"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/formats"
	"github.com/meshfs/meshfs/decode/texture"
	"github.com/meshfs/meshfs/internal/archive"
	"github.com/meshfs/meshfs/internal/source"
)

// Sniffer remembers which format (or none) each source file version is,
// and whether it is an archive, so that listing a folder again does not
// reopen every file. Files are read through its source view (internal/source): an
// archive's entries are sniffed as files.
type Sniffer struct {
	c     *otter.Cache[sniffKey, sniffed]
	view  source.View
	count atomic.Int64
}

type sniffed struct {
	fm      decode.Format
	archive bool
	png     bool // texture.ShowsPNG
}

type sniffKey struct {
	path string
	id   source.Ident
}

// NewSniffer returns a sniffer remembering up to 65 536 file versions,
// reading them through view.
func NewSniffer(view source.View) (*Sniffer, error) {
	c, err := otter.New(&otter.Options[sniffKey, sniffed]{MaximumSize: 1 << 16})
	if err != nil {
		return nil, err
	}
	return &Sniffer{c: c, view: view}, nil
}

// Sniff returns the format of the source file at path (stat st), or nil;
// read reports whether the file was read (no sniff of this version was
// remembered) and known whether the answer is known (false: the file could
// not be read, and is sniffed again next time).
func (s *Sniffer) Sniff(path string, st *syscall.Stat_t) (fm decode.Format, read, known bool) {
	fm, _, read, known = s.SniffArchive(path, st)
	return fm, read, known
}

// SniffArchive is Sniff, and whether a file no format claims is an
// archive by its first bytes (archive.Sniff).
func (s *Sniffer) SniffArchive(path string, st *syscall.Stat_t) (fm decode.Format, isArchive, read, known bool) {
	sn, read, known := s.sniff(path, st)
	return sn.fm, sn.archive, read, known
}

// ShowsPNG reports whether the source file at path (stat st) is a texture
// the mount shows as a PNG beside it (texture.ShowsPNG), as far as known
// (a file that cannot be read is not).
func (s *Sniffer) ShowsPNG(path string, st *syscall.Stat_t) bool {
	sn, _, _ := s.sniff(path, st)
	return sn.png
}

func (s *Sniffer) sniff(path string, st *syscall.Stat_t) (sn sniffed, read, known bool) {
	k := sniffKey{path, source.FromStat(st)}
	if sn, ok := s.c.GetIfPresent(k); ok {
		return sn, false, true
	}
	s.count.Add(1)
	f, err := s.view.Open(path)
	if err != nil {
		return sniffed{}, true, false
	}
	defer f.Close()
	head := make([]byte, max(formats.HeadSize, texture.SniffSize))
	n, err := f.ReadAt(head, 0)
	if err != nil && err != io.EOF {
		return sniffed{}, true, false
	}
	sn = sniffed{fm: formats.Sniff(path, head[:min(n, formats.HeadSize)])}
	sn.archive = sn.fm == nil && archive.Sniff(head[:n])
	sn.png = sn.fm == nil && texture.ShowsPNG(path, head[:n])
	s.c.Set(k, sn)
	return sn, true, true
}

// Count is the number of files read to sniff them.
func (s *Sniffer) Count() int64 { return s.count.Load() }

// Close stops the sniffer's background work.
func (s *Sniffer) Close() { s.c.StopAllGoroutines() }

// Config is how far the passes of one mount run ahead of a walker. A
// field left zero takes its default (Config.defaults, the one place they
// are kept).
type Config struct {
	// ScanMax is the largest source scanned ahead (4 MiB), and ScanWindow
	// how many meshes after the one entered a pass covers (256): a walker
	// that gets past them misses again and starts the next pass from
	// there, so a huge folder is not scanned whole into memory for a
	// walker that stops early.
	ScanMax    int64
	ScanWindow int
	// ListWindow is how many folders after the one listed a pass covers
	// (2), ListMax how many files it sniffs at most (1024: a listing is
	// not always a walk, and `ls` of one folder must not make the daemon
	// read a huge sibling folder's files), and ListWorkers how many sniffs
	// it keeps in flight (4: the disk's queue, not the CPU, is what they
	// wait for).
	ListWindow, ListMax, ListWorkers int
}

// defaults returns c with each zero field set to its default.
func (c Config) defaults() Config {
	c.ScanMax = cmp.Or(c.ScanMax, 4<<20)
	c.ScanWindow = cmp.Or(c.ScanWindow, 256)
	c.ListWindow = cmp.Or(c.ListWindow, 2)
	c.ListMax = cmp.Or(c.ListMax, 1024)
	c.ListWorkers = cmp.Or(c.ListWorkers, 4)
	return c
}

// Ahead runs the background passes of one mount.
type Ahead struct {
	cfg    Config
	mu     sync.Mutex
	closed bool
	wg     sync.WaitGroup
	// Ctx ends when the mount closes.
	Ctx    context.Context
	cancel context.CancelFunc
	// scans and lists serialize the passes of each kind: a walker moving
	// on to the next folder queues its pass behind the current one.
	scans, lists chan struct{}
	// Scans and Sniffs count the scans and sniffs made ahead.
	Scans, Sniffs atomic.Int64
}

// NewAhead returns a mount's pass runner, running as far as c says.
func NewAhead(c Config) *Ahead {
	ctx, cancel := context.WithCancel(context.Background())
	return &Ahead{cfg: c.defaults(), Ctx: ctx, cancel: cancel, scans: make(chan struct{}, 1), lists: make(chan struct{}, 1)}
}

// Config is how far the passes run, with its defaults set.
func (a *Ahead) Config() Config { return a.cfg }

// Kind is a kind of pass: one of each runs at a time.
type Kind int

const (
	Scans Kind = iota
	Lists
)

// Go runs fn in the background after the running pass of its kind ends,
// unless the mount closes first; it reports whether fn was started (false
// once closed). done, if set, runs when the pass ends or is dropped.
func (a *Ahead) Go(kind Kind, fn func(ctx context.Context), done func()) bool {
	if done == nil {
		done = func() {}
	}
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		done()
		return false
	}
	a.wg.Add(1)
	a.mu.Unlock()
	slot := a.scans
	if kind == Lists {
		slot = a.lists
	}
	go func() {
		defer a.wg.Done()
		defer done()
		select {
		case slot <- struct{}{}:
		case <-a.Ctx.Done():
			return
		}
		defer func() { <-slot }()
		fn(a.Ctx)
	}()
	return true
}

// Close stops the passes and waits for them.
func (a *Ahead) Close() {
	a.mu.Lock()
	a.closed = true
	a.mu.Unlock()
	a.cancel()
	a.wg.Wait()
}

// FolderOrder is the source folders of a listing, in its order (which is
// the order of a walker that does not sort), with each one's place.
type FolderOrder struct {
	names []string
	at    map[string]int
}

// Add appends name (o may be nil).
func (o *FolderOrder) Add(name string) *FolderOrder {
	if o == nil {
		o = &FolderOrder{at: map[string]int{}}
	}
	o.at[name] = len(o.names)
	o.names = append(o.names, name)
	return o
}

// After returns the names of at most n folders that follow name.
func (o *FolderOrder) After(name string, n int) []string {
	if o == nil {
		return nil
	}
	i, ok := o.at[name]
	if !ok {
		return nil
	}
	return o.names[i+1 : min(i+1+n, len(o.names))]
}

// PerWorker is how many entries of a folder make one more goroutine worth
// it for the stats and sniffs of its entries.
const PerWorker = 8

// SniffFolder sniffs the regular files of dir that are not companions,
// among its first limit entries, up to workers at a time; it returns how
// many entries it looked at and how many files it read.
func SniffFolder(ctx context.Context, s *Sniffer, dir string, limit, workers int) (looked int, read int64) {
	fd, err := source.OpenFolder(dir)
	if err != nil {
		return 0, 0
	}
	names, _ := fd.Readdirnames(limit)
	fd.Close()
	siblings := formats.Among(names)
	var n atomic.Int64
	decode.ForEach(len(names), min(workers, len(names)/PerWorker), func(i int) {
		if ctx.Err() != nil {
			return
		}
		p := filepath.Join(dir, names[i])
		var st syscall.Stat_t
		if syscall.Lstat(p, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG ||
			formats.IsCompanion(names[i], siblings) {
			return
		}
		if _, r, _ := s.Sniff(p, &st); r {
			n.Add(1)
		}
	})
	return len(names), n.Load()
}

// ScanAhead calls scan for the meshes of the folder dir, in the order of
// its listing from the entry after the one named after (wrapping round),
// window of them at most, each a regular file of at most maxSize bytes
// that mesh (its name, stat and the folder's siblings) says is a mesh;
// it stops when ctx ends.
func ScanAhead(ctx context.Context, dir, after string, window int, maxSize int64,
	mesh func(name string, st *syscall.Stat_t, siblings func(string) bool) (decode.Format, bool),
	scan func(path string, st *syscall.Stat_t, format decode.Format)) {
	fd, err := source.OpenFolder(dir)
	if err != nil {
		return
	}
	// Readdirnames: the order of the source listing, which is the order
	// of the mount's listing (and so of a walker that does not sort).
	names, _ := fd.Readdirnames(-1)
	fd.Close()
	start := 0
	for i, n := range names {
		if n == after {
			start = i + 1
			break
		}
	}
	siblings := formats.Among(names)
	meshes := 0
	for i := range names {
		if ctx.Err() != nil || meshes >= window {
			return
		}
		name := names[(start+i)%len(names)]
		if name == after {
			continue
		}
		p := filepath.Join(dir, name)
		var st syscall.Stat_t
		if syscall.Lstat(p, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG || st.Size > maxSize {
			continue
		}
		format, ok := mesh(name, &st, siblings)
		if !ok {
			continue
		}
		meshes++
		scan(p, &st, format)
	}
}

// SniffFolders sniffs the files of the folders names of parent, in order,
// at most limit files in all, up to workers at a time, adding the number
// of files each folder's pass read to reads as it ends.
func SniffFolders(ctx context.Context, s *Sniffer, parent string, names []string, limit, workers int, reads *atomic.Int64) {
	budget := limit
	for _, n := range names {
		if budget <= 0 || ctx.Err() != nil {
			return
		}
		looked, r := SniffFolder(ctx, s, filepath.Join(parent, n), budget, workers)
		budget -= looked
		reads.Add(r)
	}
}
