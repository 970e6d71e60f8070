package fs

import (
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/meshfs/meshfs/internal/requests"
)

// rawFS wraps go-fuse's node file system: it counts requests, refuses
// every modifying request and every open for writing (EROFS) for every
// node, and unless Config.OpenHandles answers the first OPEN and OPENDIR
// with ENOSYS (the kernel's no_open and no_opendir: DESIGN.md, "Talking
// to the kernel"). go-fuse then calls a node's Read with a nil handle,
// and answers a READDIR without a handle with an empty listing, so rawFS
// opens a listing's handle itself and holds it between its READDIRs.
type rawFS struct {
	fuse.RawFileSystem
	noOpen    bool
	reqs      reqCounter
	listOpens atomic.Int64 // listings opened for handle-less READDIRs
	held      requests.Held[fuse.ReleaseIn]
	// srv is the mount's server (set before it serves), for a refused
	// WRITE's notification.
	srv atomic.Pointer[fuse.Server]
}

// heldIdle is how long a listing's handle waits for its next READDIR.
const heldIdle = 2 * time.Second

// cancel is a request's interrupt channel.
type cancel = <-chan struct{}

func newRawFS(inner fuse.RawFileSystem, noOpen bool) *rawFS {
	r := &rawFS{RawFileSystem: inner, noOpen: noOpen, reqs: newReqCounter()}
	r.held = requests.Held[fuse.ReleaseIn]{Idle: heldIdle, Release: func(in fuse.ReleaseIn) { r.RawFileSystem.ReleaseDir(&in) }}
	return r
}

// requestKinds are the requests a mount counts, by the kernel's names.
var requestKinds = []string{"LOOKUP", "FORGET", "GETATTR", "OPEN", "READ", "RELEASE", "FLUSH",
	"OPENDIR", "READDIR", "READDIRPLUS", "RELEASEDIR", "ACCESS", "STATFS", "READLINK", "LSEEK", "STATX"}

// reqCounter counts requests by kind (requestKinds; another panics) and
// adds up the time from each one's dispatch to its reply (stats.json).
type reqCounter map[string]*struct{ count, nanos atomic.Int64 }

func newReqCounter() reqCounter {
	c := reqCounter{}
	for _, n := range requestKinds {
		c[n] = new(struct{ count, nanos atomic.Int64 })
	}
	return c
}

// Count counts a request of kind, untimed.
func (c reqCounter) Count(kind string) { c[kind].count.Add(1) }

// Time counts a request of kind and starts its clock: defer
// c.Time("READ").Done().
func (c reqCounter) Time(kind string) reqTiming {
	c.Count(kind)
	return reqTiming{&c[kind].nanos, time.Now()}
}

type reqTiming struct {
	nanos *atomic.Int64
	start time.Time
}

func (t reqTiming) Done() { t.nanos.Add(int64(time.Since(t.start))) }

// Counts returns the requests and their time in milliseconds by kind,
// kinds never asked left out.
func (c reqCounter) Counts() (map[string]int64, map[string]float64) {
	n, ms := map[string]int64{}, map[string]float64{}
	for k, r := range c {
		if v := r.count.Load(); v != 0 {
			n[k], ms[k] = v, float64(r.nanos.Load())/1e6
		}
	}
	return n, ms
}

func (r *rawFS) Lookup(c cancel, h *fuse.InHeader, name string, out *fuse.EntryOut) fuse.Status {
	defer r.reqs.Time("LOOKUP").Done()
	st := r.RawFileSystem.Lookup(c, h, name, out)
	uncached(out.AttrValid, &out.AttrValidNsec)
	uncached(out.EntryValid, &out.EntryValidNsec)
	return st
}

func (r *rawFS) GetAttr(c cancel, in *fuse.GetAttrIn, out *fuse.AttrOut) fuse.Status {
	defer r.reqs.Time("GETATTR").Done()
	st := r.RawFileSystem.GetAttr(c, in, out)
	uncached(out.AttrValid, &out.AttrValidNsec)
	return st
}

// uncachedAttr is the timeout of what the kernel must not keep at all: a
// node's 0 would become the mount's default in go-fuse, and rawFS turns
// this one into 0 (uncached).
const uncachedAttr = time.Nanosecond

func uncached(sec uint64, nsec *uint32) {
	if sec == 0 && *nsec == uint32(uncachedAttr) {
		*nsec = 0
	}
}

// Forget releases the listing handles held for the node first: go-fuse
// panics at the release of a forgotten node's handle.
func (r *rawFS) Forget(nodeid, nlookup uint64) {
	r.reqs.Count("FORGET")
	r.held.Drop(nodeid)
	r.RawFileSystem.Forget(nodeid, nlookup)
}

// Modifying requests are refused (xattrs are off: go-fuse answers those).
func (*rawFS) SetAttr(cancel, *fuse.SetAttrIn, *fuse.AttrOut) fuse.Status      { return fuse.EROFS }
func (*rawFS) Mknod(cancel, *fuse.MknodIn, string, *fuse.EntryOut) fuse.Status { return fuse.EROFS }
func (*rawFS) Mkdir(cancel, *fuse.MkdirIn, string, *fuse.EntryOut) fuse.Status { return fuse.EROFS }
func (*rawFS) Unlink(cancel, *fuse.InHeader, string) fuse.Status               { return fuse.EROFS }
func (*rawFS) Rmdir(cancel, *fuse.InHeader, string) fuse.Status                { return fuse.EROFS }
func (*rawFS) Rename(cancel, *fuse.RenameIn, string, string) fuse.Status       { return fuse.EROFS }
func (*rawFS) Link(cancel, *fuse.LinkIn, string, *fuse.EntryOut) fuse.Status   { return fuse.EROFS }
func (*rawFS) Symlink(cancel, *fuse.InHeader, string, string, *fuse.EntryOut) fuse.Status {
	return fuse.EROFS
}
func (*rawFS) Create(cancel, *fuse.CreateIn, string, *fuse.CreateOut) fuse.Status { return fuse.EROFS }
func (*rawFS) CopyFileRange(cancel, *fuse.CopyFileRangeIn) (uint32, fuse.Status) {
	return 0, fuse.EROFS
}
func (*rawFS) Fallocate(cancel, *fuse.FallocateIn) fuse.Status { return fuse.EROFS }

// writeFlags are the open flags that would modify a file.
const writeFlags = syscall.O_WRONLY | syscall.O_RDWR | syscall.O_TRUNC | syscall.O_APPEND | syscall.O_CREAT

func (r *rawFS) Open(c cancel, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	defer r.reqs.Time("OPEN").Done()
	if in.Flags&writeFlags != 0 {
		return fuse.EROFS
	} else if r.noOpen {
		return fuse.ENOSYS
	}
	return r.RawFileSystem.Open(c, in, out)
}

// Writev (go-fuse asks Write only after its ENOSYS) refuses a WRITE
// (root's stores into a shared mapping of a mount remounted read-write)
// and, once the reply is on its way (the notification waits for the
// writeback it ends), drops the file's pages: readers get the daemon's
// bytes again.
func (r *rawFS) Writev(_ cancel, in *fuse.WriteIn, _ [][]byte) (uint32, fuse.Status) {
	if srv := r.srv.Load(); srv != nil {
		go srv.InodeNotify(in.NodeId, 0, 0)
	}
	return 0, fuse.EROFS
}

// Flush: ENOSYS makes the kernel stop asking (no_flush), as files opened
// without the daemon still flush at every close.
func (r *rawFS) Flush(c cancel, in *fuse.FlushIn) fuse.Status {
	defer r.reqs.Time("FLUSH").Done()
	if r.noOpen {
		return fuse.ENOSYS
	}
	return r.RawFileSystem.Flush(c, in)
}

func (r *rawFS) OpenDir(c cancel, in *fuse.OpenIn, out *fuse.OpenOut) fuse.Status {
	defer r.reqs.Time("OPENDIR").Done()
	if r.noOpen {
		return fuse.ENOSYS
	}
	return r.RawFileSystem.OpenDir(c, in, out)
}

func (r *rawFS) ReadDir(c cancel, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	defer r.reqs.Time("READDIR").Done()
	return r.readDir(c, in, out, r.RawFileSystem.ReadDir)
}

func (r *rawFS) ReadDirPlus(c cancel, in *fuse.ReadIn, out *fuse.DirEntryList) fuse.Status {
	defer r.reqs.Time("READDIRPLUS").Done()
	return r.readDir(c, in, out, r.RawFileSystem.ReadDirPlus)
}

// readDir reads with in's handle or, without one (no_opendir), with the
// handle held for this listing at this offset or one opened through the
// node file system (which seeks it there), held for the next request until
// the listing ends or heldIdle passes.
func (r *rawFS) readDir(c cancel, in *fuse.ReadIn, out *fuse.DirEntryList, read func(cancel, *fuse.ReadIn, *fuse.DirEntryList) fuse.Status) (st fuse.Status) {
	if in.Fh != 0 {
		return read(c, in, out)
	}
	r.held.Serve(in.NodeId, in.Offset, func() (fuse.ReleaseIn, bool) {
		oi, oo := fuse.OpenIn{InHeader: in.InHeader, Flags: syscall.O_RDONLY | syscall.O_DIRECTORY}, fuse.OpenOut{}
		if st = r.RawFileSystem.OpenDir(c, &oi, &oo); !st.Ok() {
			return fuse.ReleaseIn{}, false
		}
		r.listOpens.Add(1)
		return fuse.ReleaseIn{InHeader: in.InHeader, Fh: oo.Fh}, true
	}, func(h fuse.ReleaseIn) (uint64, bool) {
		rin := *in
		rin.Fh = h.Fh
		st = read(c, &rin, out)
		return out.Offset, st.Ok()
	})
	return st
}

func (r *rawFS) OnUnmount() {
	r.held.Close()
	r.RawFileSystem.OnUnmount()
}

// The other requests are counted and passed on.
func (r *rawFS) Read(c cancel, in *fuse.ReadIn, buf []byte) (fuse.ReadResult, fuse.Status) {
	defer r.reqs.Time("READ").Done()
	return r.RawFileSystem.Read(c, in, buf)
}
func (r *rawFS) Release(c cancel, in *fuse.ReleaseIn) {
	defer r.reqs.Time("RELEASE").Done()
	r.RawFileSystem.Release(c, in)
}
func (r *rawFS) ReleaseDir(in *fuse.ReleaseIn) {
	defer r.reqs.Time("RELEASEDIR").Done()
	r.RawFileSystem.ReleaseDir(in)
}
func (r *rawFS) Access(c cancel, in *fuse.AccessIn) fuse.Status {
	defer r.reqs.Time("ACCESS").Done()
	return r.RawFileSystem.Access(c, in)
}
func (r *rawFS) StatFs(c cancel, in *fuse.InHeader, out *fuse.StatfsOut) fuse.Status {
	defer r.reqs.Time("STATFS").Done()
	return r.RawFileSystem.StatFs(c, in, out)
}
func (r *rawFS) Readlink(c cancel, h *fuse.InHeader) ([]byte, fuse.Status) {
	defer r.reqs.Time("READLINK").Done()
	return r.RawFileSystem.Readlink(c, h)
}
func (r *rawFS) Lseek(c cancel, in *fuse.LseekIn, out *fuse.LseekOut) fuse.Status {
	defer r.reqs.Time("LSEEK").Done()
	return r.RawFileSystem.Lseek(c, in, out)
}
func (r *rawFS) Statx(c cancel, in *fuse.StatxIn, out *fuse.StatxOut) fuse.Status {
	defer r.reqs.Time("STATX").Done()
	return r.RawFileSystem.Statx(c, in, out)
}

// panicHandler answers a request whose code panicked with EIO and logs
// one line; the daemon carries on serving.
func (f *FS) panicHandler(v any) fuse.Status {
	f.log.Printf("meshfs: internal error (answered EIO): %s", requests.PanicLine(v))
	return fuse.EIO
}
