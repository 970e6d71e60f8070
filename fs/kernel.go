package fs

import (
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// The kernel's no-open modes (Linux 5.1 and later, fs/fuse/file.c
// fuse_file_open): ENOSYS to OPEN sets no_open for the connection (no
// OPEN, RELEASE or FLUSH again, every file kept as with FOPEN_KEEP_CACHE,
// READs with fh 0); ENOSYS to OPENDIR sets no_opendir (READDIR with fh 0,
// every listing kept until it is invalidated). DESIGN.md ("Talking to the
// kernel") says how reads, listings and writes keep what handles gave.
// go-fuse answers READ with fh 0 by calling the node's Read with a nil
// handle, which every file node here copes with; it answers READDIR with
// fh 0 with an empty listing, so rawFS opens a real handle for it.

// rawFS wraps the go-fuse node file system: it counts requests (for tests
// and stats.json) and, unless Config.OpenHandles, answers OPEN and OPENDIR
// with ENOSYS and serves READDIR without a kernel handle.
type rawFS struct {
	fuse.RawFileSystem
	noOpen bool
	// reqs counts requests and their answers' time by kind (stats.json).
	reqs *reqCounter
	// listOpens counts listings opened for handle-less READDIRs.
	listOpens atomic.Int64
	// held keeps the handle of a listing between its READDIRs.
	held heldHandles[heldDir]

	// srv is the mount's server (set by FS.Mount before it serves), for
	// the notifications a refused WRITE sends (Write).
	srv atomic.Pointer[fuse.Server]
}

type heldDir struct {
	hdr fuse.InHeader
	fh  uint64
}

// heldIdle is how long a listing's handle waits for its next READDIR.
const heldIdle = 2 * time.Second

func newRawFS(inner fuse.RawFileSystem, noOpen bool) *rawFS {
	r := &rawFS{RawFileSystem: inner, noOpen: noOpen, reqs: newReqCounter(requestKinds)}
	r.held = heldHandles[heldDir]{Idle: heldIdle, Release: r.releaseDir}
	return r
}

func (r *rawFS) Lookup(cancel <-chan struct{}, h *fuse.InHeader, name string, out *fuse.EntryOut) fuse.Status {
	defer r.reqs.Time("LOOKUP").Done()
	st := r.RawFileSystem.Lookup(cancel, h, name, out)
	uncached(out.AttrValid, &out.AttrValidNsec)
	uncached(out.EntryValid, &out.EntryValidNsec)
	return st
}

// uncachedAttr marks attributes the kernel must not keep at all (0, which
// go-fuse would replace by the mount's default; see rawFS.GetAttr). One
// nanosecond would still be one jiffy, and under no_open a read within it
// would find stats.json's previous pages and size.
const uncachedAttr = time.Nanosecond

// uncached turns a reply's timeout of uncachedAttr into 0.
func uncached(sec uint64, nsec *uint32) {
	if sec == 0 && *nsec == uint32(uncachedAttr) {
		*nsec = 0
	}
}

// Forget releases the listing handles held for the node before the
// kernel's FORGET of it reaches the node file system: the kernel holds no
// file of a held handle, so it may forget the node (a folder renamed or
// removed while listed), and releasing a handle of a forgotten node panics
// in go-fuse. A listing that goes on opens a new handle at its offset.
func (r *rawFS) Forget(nodeid, nlookup uint64) {
	r.reqs.Count("FORGET")
	r.held.Drop(nodeid)
	r.RawFileSystem.Forget(nodeid, nlookup)
}

func (r *rawFS) GetAttr(cancel <-chan struct{}, in *fuse.GetAttrIn, out *fuse.AttrOut) fuse.Status {
	defer r.reqs.Time("GETATTR").Done()
	st := r.RawFileSystem.GetAttr(cancel, in, out)
	uncached(out.AttrValid, &out.AttrValidNsec)
	return st
}

// Every request that would modify the tree is refused here, for every
// node. The mount is read-only in the kernel too ("ro"), which answers
// first unless root remounted it read-write.
func (r *rawFS) SetAttr(<-chan struct{}, *fuse.SetAttrIn, *fuse.AttrOut) fuse.Status {
	return fuse.EROFS
}
func (r *rawFS) Mknod(<-chan struct{}, *fuse.MknodIn, string, *fuse.EntryOut) fuse.Status {
	return fuse.EROFS
}
func (r *rawFS) Mkdir(<-chan struct{}, *fuse.MkdirIn, string, *fuse.EntryOut) fuse.Status {
	return fuse.EROFS
}
func (r *rawFS) Unlink(<-chan struct{}, *fuse.InHeader, string) fuse.Status { return fuse.EROFS }
func (r *rawFS) Rmdir(<-chan struct{}, *fuse.InHeader, string) fuse.Status  { return fuse.EROFS }
func (r *rawFS) Rename(<-chan struct{}, *fuse.RenameIn, string, string) fuse.Status {
	return fuse.EROFS
}
func (r *rawFS) Link(<-chan struct{}, *fuse.LinkIn, string, *fuse.EntryOut) fuse.Status {
	return fuse.EROFS
}
func (r *rawFS) Symlink(<-chan struct{}, *fuse.InHeader, string, string, *fuse.EntryOut) fuse.Status {
	return fuse.EROFS
}
func (r *rawFS) SetXAttr(<-chan struct{}, *fuse.SetXAttrIn, string, []byte) fuse.Status {
	return fuse.EROFS
}
func (r *rawFS) RemoveXAttr(<-chan struct{}, *fuse.InHeader, string) fuse.Status { return fuse.EROFS }
func (r *rawFS) Create(<-chan struct{}, *fuse.CreateIn, string, *fuse.CreateOut) fuse.Status {
	return fuse.EROFS
}

// writeFlags are the open flags that would modify a file.
const writeFlags = syscall.O_WRONLY | syscall.O_RDWR | syscall.O_TRUNC | syscall.O_APPEND | syscall.O_CREAT

// Open refuses an open for writing of any file here, before any node sees
// it: the kernel refuses these on a read-only mount before asking; should
// one arrive (root remounted it read-write; under no_open, the first open
// of the connection), it is refused.
func (r *rawFS) Open(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	defer r.reqs.Time("OPEN").Done()
	if in.Flags&writeFlags != 0 {
		return fuse.Status(syscall.EROFS)
	} else if !r.noOpen {
		return r.RawFileSystem.Open(cancel, in, out)
	}
	// ENOSYS: this open succeeds without a handle, and the kernel sends no
	// OPEN for any file again.
	return fuse.ENOSYS
}

// Write refuses every write. None arrives while the mount is read-only; a
// root `mount -o remount,rw` lets write opens through, and under no_open the
// kernel does not ask the daemon about them (every OPEN but the first is
// skipped), so root's stores into a shared mapping reach the page cache,
// which every reader of the file shares. Their WRITE (at close, msync or
// writeback) is refused here, and the file's pages are dropped once the
// reply is on its way: readers get the daemon's bytes again. Until then the
// stores are visible (a known limit: the kernel never asks before it).
func (r *rawFS) Write(cancel <-chan struct{}, in *fuse.WriteIn, data []byte) (uint32, fuse.Status) {
	return r.refuseWrite(in)
}

// Writev is what go-fuse asks first for a WRITE.
func (r *rawFS) Writev(cancel <-chan struct{}, in *fuse.WriteIn, data [][]byte) (uint32, fuse.Status) {
	return r.refuseWrite(in)
}

func (r *rawFS) refuseWrite(in *fuse.WriteIn) (uint32, fuse.Status) {
	if srv := r.srv.Load(); srv != nil {
		node := in.NodeId
		// Not from this request: the invalidation waits for the
		// writeback this reply ends.
		go srv.InodeNotify(node, 0, 0)
	}
	return 0, fuse.Status(syscall.EROFS)
}

// CopyFileRange and Fallocate would write too.
func (r *rawFS) CopyFileRange(cancel <-chan struct{}, in *fuse.CopyFileRangeIn) (uint32, fuse.Status) {
	return 0, fuse.Status(syscall.EROFS)
}

func (r *rawFS) Fallocate(cancel <-chan struct{}, in *fuse.FallocateIn) fuse.Status {
	return fuse.Status(syscall.EROFS)
}

func (r *rawFS) Read(cancel <-chan struct{}, in *fuse.ReadIn, buf []byte) (fuse.ReadResult, fuse.Status) {
	defer r.reqs.Time("READ").Done()
	return r.RawFileSystem.Read(cancel, in, buf)
}

func (r *rawFS) Release(cancel <-chan struct{}, in *fuse.ReleaseIn) {
	defer r.reqs.Time("RELEASE").Done()
	r.RawFileSystem.Release(cancel, in)
}

func (r *rawFS) Flush(cancel <-chan struct{}, in *fuse.FlushIn) fuse.Status {
	defer r.reqs.Time("FLUSH").Done()
	if r.noOpen {
		// Files opened without us still flush on every close (their open
		// flags cannot carry FOPEN_NOFLUSH); ENOSYS makes the kernel stop
		// asking for the whole connection (fc->no_flush).
		return fuse.ENOSYS
	}
	return r.RawFileSystem.Flush(cancel, in)
}

func (r *rawFS) OpenDir(cancel <-chan struct{}, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	defer r.reqs.Time("OPENDIR").Done()
	if r.noOpen {
		// As for OPEN: no OPENDIR or RELEASEDIR again, listings cached.
		return fuse.ENOSYS
	}
	return r.RawFileSystem.OpenDir(cancel, in, out)
}

func (r *rawFS) ReadDir(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	defer r.reqs.Time("READDIR").Done()
	if in.Fh != 0 {
		return r.RawFileSystem.ReadDir(cancel, in, out)
	}
	return r.readDirNoHandle(cancel, in, out, false)
}

func (r *rawFS) ReadDirPlus(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	defer r.reqs.Time("READDIRPLUS").Done()
	if in.Fh != 0 {
		return r.RawFileSystem.ReadDirPlus(cancel, in, out)
	}
	return r.readDirNoHandle(cancel, in, out, true)
}

func (r *rawFS) ReleaseDir(in *fuse.ReleaseIn) {
	defer r.reqs.Time("RELEASEDIR").Done()
	r.RawFileSystem.ReleaseDir(in)
}

func (r *rawFS) Access(cancel <-chan struct{}, in *fuse.AccessIn) fuse.Status {
	defer r.reqs.Time("ACCESS").Done()
	return r.RawFileSystem.Access(cancel, in)
}

func (r *rawFS) StatFs(cancel <-chan struct{}, in *fuse.InHeader, out *fuse.StatfsOut) fuse.Status {
	defer r.reqs.Time("STATFS").Done()
	return r.RawFileSystem.StatFs(cancel, in, out)
}

func (r *rawFS) GetXAttr(cancel <-chan struct{}, h *fuse.InHeader, attr string, dest []byte) (uint32, fuse.Status) {
	defer r.reqs.Time("GETXATTR").Done()
	return r.RawFileSystem.GetXAttr(cancel, h, attr, dest)
}

func (r *rawFS) ListXAttr(cancel <-chan struct{}, h *fuse.InHeader, dest []byte) (uint32, fuse.Status) {
	defer r.reqs.Time("LISTXATTR").Done()
	return r.RawFileSystem.ListXAttr(cancel, h, dest)
}

func (r *rawFS) Readlink(cancel <-chan struct{}, h *fuse.InHeader) ([]byte, fuse.Status) {
	defer r.reqs.Time("READLINK").Done()
	return r.RawFileSystem.Readlink(cancel, h)
}

func (r *rawFS) Lseek(cancel <-chan struct{}, in *fuse.LseekIn, out *fuse.LseekOut) fuse.Status {
	defer r.reqs.Time("LSEEK").Done()
	return r.RawFileSystem.Lseek(cancel, in, out)
}

func (r *rawFS) Statx(cancel <-chan struct{}, in *fuse.StatxIn, out *fuse.StatxOut) fuse.Status {
	defer r.reqs.Time("STATX").Done()
	return r.RawFileSystem.Statx(cancel, in, out)
}

// readDirNoHandle serves a READDIR(PLUS) that came without a handle
// (no_opendir): it takes the handle held for this listing at this offset,
// or opens one through the node file system (which seeks it to the
// offset), reads, and holds the handle for the next request until the
// listing ends or heldIdle passes.
func (r *rawFS) readDirNoHandle(cancel <-chan struct{}, in *fuse.ReadIn, out *fuse.DirEntryList, plus bool) (st fuse.Status) {
	r.held.Serve(in.NodeId, in.Offset, func() (heldDir, bool) {
		var oo fuse.OpenOut
		oi := fuse.OpenIn{InHeader: in.InHeader, Flags: syscall.O_RDONLY | syscall.O_DIRECTORY}
		if st = r.RawFileSystem.OpenDir(cancel, &oi, &oo); !st.Ok() {
			return heldDir{}, false
		}
		r.listOpens.Add(1)
		return heldDir{hdr: in.InHeader, fh: oo.Fh}, true
	}, func(h heldDir) (uint64, bool) {
		rin := *in
		rin.Fh = h.fh
		if plus {
			st = r.RawFileSystem.ReadDirPlus(cancel, &rin, out)
		} else {
			st = r.RawFileSystem.ReadDir(cancel, &rin, out)
		}
		return out.Offset, st.Ok()
	})
	return st
}

func (r *rawFS) releaseDir(h heldDir) {
	r.RawFileSystem.ReleaseDir(&fuse.ReleaseIn{InHeader: h.hdr, Fh: h.fh})
}

func (r *rawFS) OnUnmount() {
	r.held.Close()
	r.RawFileSystem.OnUnmount()
}

// panicHandler answers a request whose code panicked with EIO and logs one
// line (panicLine: one bad file must not print its stack per
// request). The daemon carries on serving.
func (f *FS) panicHandler(v any) fuse.Status {
	f.log.Printf("meshfs: internal error (answered EIO): %s", panicLine(v))
	return fuse.EIO
}
