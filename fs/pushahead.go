package fs

// Pushing a big output ahead of its reader. Under no_open every READ of an
// output reaches the daemon: a 36 MB .glb read by cp or Blender is about
// 290 requests of 128 KiB, ≈ 50 ms on this machine after the conversion,
// while the kernel could copy the same bytes into its page cache in a few
// milliseconds. So once a reader shows it reads on (a READ past the first
// request's bytes), the rest of the output is stored in the kernel's
// page cache (FUSE_NOTIFY_STORE) by one goroutine, in pushChunk pieces from
// where the reader is; the reader's next reads are then answered by the
// kernel. READs already on their way are answered as before: the store of a
// page waits for its lock, which a READ in flight holds until we answer.
// A reader that stops after the first request (file(1), a peek at the
// header) costs nothing more.

import (
	"syscall"
)

const (
	// pushMin is the smallest output pushed ahead: below it the READs
	// are few.
	pushMin = 1 << 20
	// pushChunk is the size of one store.
	pushChunk = 1 << 20
)

// readOn records a READ without a handle of p's bytes [off, end) and starts
// pushing the rest from end when this is the first READ of this version
// past the first request's bytes: the reader reads on. (Not "the READ that
// continues the last one": the kernel's readahead sends several READs at
// once, and they may reach us in any order.)
func (o *outFile) readOn(p *produced, off, end int64) {
	if int64(len(p.data)) < pushMin || end >= int64(len(p.data)) || off == 0 {
		return
	}
	o.mu.Lock()
	start := o.pushFP != p.fp
	o.pushFP = p.fp
	o.mu.Unlock()
	if !start {
		return
	}
	f := o.m.fsys
	f.pushes.Add(1)
	go func() {
		defer f.pushes.Done()
		o.pushRest(p, end)
	}()
}

// pushRest stores p's bytes from off to the end in the kernel's page cache,
// while the source is still version p.fp.
func (o *outFile) pushRest(p *produced, off int64) {
	for n := int64(len(p.data)); off < n; off += pushChunk {
		if _, fp, err := o.m.stat(); err != nil || fp != p.fp {
			break
		}
		end := min(off+pushChunk, n)
		if errno := o.WriteCache(off, p.data[off:end]); errno != 0 {
			// Unmounted, or the kernel forgot the inode: stop.
			if errno != syscall.ENOENT {
				o.m.fsys.logOnce("push-error", "meshfs: storing pages in the kernel's cache: %v", errno)
			}
			return
		}
		o.m.fsys.pushedBytes.Add(end - off)
	}
	// The source changed while we stored (the watcher's invalidation may
	// have come before our last store): drop what we stored.
	if _, fp, err := o.m.stat(); err == nil && fp != p.fp {
		o.m.fsys.notifyContent(&o.Inode)
	}
}
