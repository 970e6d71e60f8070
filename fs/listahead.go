package fs

import (
	"path/filepath"
	"sync"
	"syscall"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/formats"
	"github.com/meshfs/meshfs/internal/srcfile"
)

// Listing ahead. The first listing of a source folder sniffs every file in
// it that was not sniffed before (an open and a read of its first bytes:
// which format, if any, makes it a mesh folder). On a cold disk that took
// 4 ms for a folder of 100 meshes even with the sniffs in parallel, which a
// walker (grep -r, find, ls -lR) waited for at every folder: measured on a
// cold grep of 10 000 meshes in 100 folders, 0.41 of 3.1 s.
//
// So a folder's first listing starts a background pass that sniffs the
// files of the folders the walker enters next: the listAheadWindow folders
// after it in its parent's last listing, in that order (that of
// dirNode.Readdir and of a walker that does not sort; kept by the parent,
// so that a pass costs nothing in a parent of 100 000 folders). The walker then
// finds the sniffs cached, and the small files' bytes in the page cache for
// the scans that follow. Only sniffs: nothing is scanned or converted, and
// no node is made. One pass runs at a time for the whole mount, and it
// stops at unmount (the scanAhead lifecycle).

// listAheadWindow is how many folders after the one listed a pass covers,
// listAheadMax how many files it sniffs at most (a listing is not always a
// walk: `ls` of one folder must not make the daemon read a huge sibling
// folder's files), and listAheadWorkers how many sniffs it keeps in flight
// (the disk's queue, not the CPU, is what they wait for).
var (
	listAheadWindow  = 2
	listAheadMax     = 1024
	listAheadWorkers = 4
)

// listAhead sniffs ahead of a walker that has just listed d for the first
// time. It returns at once.
func (f *FS) listAhead(d *dirNode) {
	if d.abs == f.source || !d.listedAhead.CompareAndSwap(false, true) {
		return
	}
	next := foldersAfter(d)
	if len(next) == 0 {
		return
	}
	a := f.ahead
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return
	}
	a.wg.Add(1)
	a.mu.Unlock()
	go func() {
		defer a.wg.Done()
		select {
		case a.listOne <- struct{}{}:
		case <-a.ctx.Done():
			return
		}
		defer func() { <-a.listOne }()
		f.sniffFolders(filepath.Dir(d.abs), next)
	}()
}

// folderOrder is the source folders of a listing, in its order (which is
// the order of a walker that does not sort), with each one's place.
type folderOrder struct {
	names []string
	at    map[string]int
}

// add appends name (o may be nil).
func (o *folderOrder) add(name string) *folderOrder {
	if o == nil {
		o = &folderOrder{at: map[string]int{}}
	}
	o.at[name] = len(o.names)
	o.names = append(o.names, name)
	return o
}

// foldersAfter returns the names of the folders that follow d in its
// parent's last listing (at most listAheadWindow), or none when the parent
// was not listed: no walker is going through it.
func foldersAfter(d *dirNode) []string {
	name, parent := d.Parent()
	if parent == nil {
		return nil
	}
	pd, ok := parent.Operations().(*dirNode)
	if !ok {
		return nil
	}
	o := pd.subdirs.Load()
	if o == nil {
		return nil
	}
	i, ok := o.at[name]
	if !ok {
		return nil
	}
	return o.names[i+1 : min(i+1+listAheadWindow, len(o.names))]
}

// sniffFolders sniffs the files of the folders names in the folder parent.
func (f *FS) sniffFolders(parent string, names []string) {
	budget := listAheadMax
	for _, n := range names {
		if budget <= 0 || f.ahead.ctx.Err() != nil {
			return
		}
		budget -= f.sniffFolder(filepath.Join(parent, n), budget)
	}
}

// sniffFolder sniffs the regular files of dir that are not companions,
// among its first limit entries; it returns how many entries it looked at.
func (f *FS) sniffFolder(dir string, limit int) int {
	fd, err := srcfile.OpenFolder(dir)
	if err != nil {
		return 0
	}
	names, _ := fd.Readdirnames(limit)
	fd.Close()
	var known map[string]bool
	var knownOnce sync.Once
	siblings := func(n string) bool {
		knownOnce.Do(func() {
			known = make(map[string]bool, len(names))
			for _, s := range names {
				known[s] = true
			}
		})
		return known[n]
	}
	decode.ForEach(len(names), min(listAheadWorkers, len(names)/listPerWorker), func(i int) {
		if f.ahead.ctx.Err() != nil {
			return
		}
		p := filepath.Join(dir, names[i])
		var st syscall.Stat_t
		if syscall.Lstat(p, &st) != nil || st.Mode&syscall.S_IFMT != syscall.S_IFREG ||
			formats.IsCompanion(names[i], siblings) {
			return
		}
		if _, read, _ := f.sniffNew(p, &st); read {
			f.ahead.sniffs.Add(1)
		}
	})
	return len(names)
}
