// Package fs is the FUSE side of meshfs: a read-only mirror of a source
// folder in which every mesh file appears as a folder of converted outputs.
// It knows no file format and decides little: each node asks the tree
// (package vfs: what a source folder's entry shows as, what a mesh folder
// holds and where its bytes come from) and translates the answer into a
// FUSE reply. What is kernel-facing is here and only here: what the kernel
// was told of each node and may be told (kernelview.go, output.go), its
// passthrough opens (passthrough.go), errnos (errno.go), the raw request
// layer (kernel.go; what its requests share, FUSE-free, in
// internal/requests), READ replies (readresult.go).
//
// Kernel caching is deliberate: the kernel opens files and folders without
// asking (kernel.go) and keeps entries, attributes, pages and listings, so
// warm walks never reach the daemon; the watcher pushes every source change
// to the kernel (watch.go). A broken mesh's folder changes shape (error.txt
// in, geometry out) and the kernel is told at once (hooks.Broken). DESIGN.md
// says how each of these is kept.
package fs

import (
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/meshfs/meshfs/internal/logonce"
	"github.com/meshfs/meshfs/internal/mountpoint"
	"github.com/meshfs/meshfs/internal/source"
	"github.com/meshfs/meshfs/internal/srcfd"
	"github.com/meshfs/meshfs/internal/store"
	meshstats "github.com/meshfs/meshfs/internal/store/stats"
	"github.com/meshfs/meshfs/internal/walk"
	"github.com/meshfs/meshfs/vfs"
)

// DefaultCacheSize is the default memory cache budget (--cache-size).
const DefaultCacheSize = store.DefaultCacheSize

// Config configures one mount.
type Config struct {
	// Source is the folder to mirror.
	Source string
	// Store is what outputs are made and kept by (memory and disk
	// caches, limits, concurrency, GC pacing).
	Store store.Config
	// EntryTimeout, AttrTimeout and NegativeTimeout are how long the kernel
	// may trust a name, an attribute and a missing name. Zero means the
	// defaults (timeouts); a negative value means "do not cache".
	EntryTimeout, AttrTimeout, NegativeTimeout time.Duration
	// Log receives one line per broken mesh and per watcher problem
	// (nil: discard).
	Log *log.Logger
	// NoWatch disables the inotify watcher (changes are then seen when the
	// attribute timeout expires and on each open).
	NoWatch bool
	// OpenHandles makes the kernel open every file and folder through the
	// daemon (a handle per open, as before the no-open mode). By default
	// OPEN and OPENDIR answer ENOSYS and the kernel sends neither again
	// (see kernel.go): a warm walk costs no round trip per mesh.
	OpenHandles bool
	// NoPassthrough keeps reads in the daemon in the open-handles mode,
	// where plain files and big .glb outputs are otherwise passed through
	// (passthrough.go).
	NoPassthrough bool
	// NoDefaultPermissions keeps the kernel from checking permissions on a
	// mount with allow_other (-o no_default_permissions): every user then
	// reads every file the daemon can. By default such a mount gets
	// default_permissions, so each user reads what the modes shown allow.
	NoDefaultPermissions bool
	// Overlay shows a resource/ or res/ folder as the game sees it (vfs.Folder.Overlay).
	Overlay bool
	// Ahead is how far the mount works ahead of a walker (zero: walk's
	// defaults).
	Ahead walk.Config
}

// FS is one meshfs file system.
type FS struct {
	cfg    Config
	source string
	log    *log.Logger
	// tree is what the mount shows (package vfs), apart from the kernel:
	// what each name shows as, and its store (st: memory, disk cache,
	// conversion) and sniffer (which format, or none, a source file
	// version is).
	tree    *vfs.FS
	sniffer *walk.Sniffer
	// view is the tree's view of the sources (vfs.FS.View).
	view *source.Packed
	root *dirNode
	st   *store.Store

	// dirs are the watched source folders' nodes, for the watcher.
	dirs vfs.Watched[*dirNode]

	start time.Time
	n     meshstats.Counts // what stats.json reports of the mount
	once  *logonce.Log

	// ttl decides the kernel's entry and attribute timeouts.
	ttl timeouts
	// raw is the request layer of the mount (nil before Mount).
	raw *rawFS
	// srcFDs are source descriptors kept for handle-less reads (package srcfd).
	srcFDs *srcfd.FDs
	// passOff is set once a passthrough handle was asked for a read: the
	// kernel did not take the backing file.
	passOff atomic.Bool
	// mounted is set once the nodes can be notified (Mount).
	mounted atomic.Bool
	// ahead runs the passes ahead of a walker (ahead.go).
	ahead *walk.Ahead
}

// New prepares a file system for cfg.Source; nothing is read yet.
func New(cfg Config) (*FS, error) {
	lg := cfg.Log
	if lg == nil {
		lg = log.New(io.Discard, "", 0)
	}
	f := &FS{cfg: cfg, log: lg, once: logonce.New(lg), start: time.Now()}
	// The store tells the mount what the kernel must learn (hooks).
	sc := cfg.Store
	sc.Events = hooks{f}
	// The tree's watcher tells the mount what the kernel must forget.
	tree, err := vfs.New(vfs.Config{Source: cfg.Source, Store: sc, Log: lg, NoWatch: cfg.NoWatch, Overlay: cfg.Overlay, Changes: watchHandler{f}})
	if err != nil {
		return nil, err
	}
	src := tree.Source()
	f.source, f.tree = src, tree
	f.st, f.sniffer = tree.Parts()
	f.view = tree.View()
	f.srcFDs, f.ahead = srcfd.New(), walk.NewAhead(cfg.Ahead)
	if _, err := os.Lstat(filepath.Join(src, statsDirName)); err == nil {
		lg.Printf("meshfs: %s is hidden: the mount shows its own %s (statistics) at the root in its place",
			filepath.Join(src, statsDirName), statsDirName)
	}
	f.ttl = timeouts{Entry: cfg.EntryTimeout, Attr: cfg.AttrTimeout, Negative: cfg.NegativeTimeout, Watched: tree.Watching()}
	// The root is the tree's, watched by it from the start.
	f.root = &dirNode{srcNode: srcNode{fsys: f}, dir: tree.Root()}
	f.dirs.Add(f.root.dir, f.root)
	return f, nil
}

// Source is the absolute path of the mirrored folder.
func (f *FS) Source() string { return f.source }

// shortTTL caps the timeouts of an entry or attribute reply for a node in
// (or below) source folder d when d's watch failed (Timeouts.Unwatched).
func (f *FS) shortTTL(d *dirNode, entry *fuse.EntryOut, attr *fuse.AttrOut) {
	if d == nil || !d.dir.Unwatched.Load() {
		return
	}
	e, a := f.ttl.Unwatched()
	if entry != nil && e != 0 {
		entry.SetEntryTimeout(e)
	}
	if entry != nil && a != 0 {
		entry.SetAttrTimeout(a)
	}
	if attr != nil && a != 0 {
		attr.SetTimeout(a)
	}
}

// Options returns go-fuse options with this file system's explicit kernel
// cache timeouts (go-fuse treats nil timeouts in non-nil Options as zero)
// and a read-only mount.
func (f *FS) Options(mo fuse.MountOptions) *gofs.Options {
	mo.Options = append(mo.Options, "ro")
	if mo.AllowOther && !f.cfg.NoDefaultPermissions && !slices.Contains(mo.Options, "default_permissions") {
		// Other users see the source's modes and owners (below): the
		// kernel checks them, or anyone could read anything.
		mo.Options = append(mo.Options, "default_permissions")
	}
	if mo.DirectMountFlags == 0 {
		mo.DirectMountFlags = syscall.MS_NOSUID | syscall.MS_NODEV | syscall.MS_RDONLY
	}
	if mo.Name == "" {
		mo.Name = "meshfs"
	}
	if mo.FsName == "" {
		mo.FsName = f.source
	}
	// READDIRPLUS answers each entry's LOOKUP inside the listing (a cold
	// `ls -lR` asks one per entry). Exact sizes of outputs are only known
	// after conversion, so mesh folders and chunks/ answer only the entries
	// whose attributes are cheap (plainLookup) and leave the others plain
	// dirents. With handles, listings stay plain READDIR, as they were.
	mo.DisableReadDirPlus = f.cfg.OpenHandles
	// No node has extended attributes, and answering "none" (ENODATA) for
	// each one `ls -l` asks about (security.selinux, the POSIX ACLs) costs
	// two or three round trips per file. ENOSYS makes the kernel stop
	// asking.
	mo.DisableXAttrs = true
	if !f.cfg.OpenHandles {
		// The kernel offers no_opendir only to a daemon that asks.
		mo.ExtraCapabilities |= fuse.CAP_NO_OPENDIR_SUPPORT
	}
	mo.PanicHandler = f.panicHandler
	if mo.Logger == nil {
		// go-fuse's own notices belong in the mount's log.
		mo.Logger = f.log
	}
	if mo.MaxWrite == 0 {
		// READs of up to 1 MiB (the kernel's max_pages limit) instead of
		// go-fuse's 128 KiB: half the requests for a big file.
		mo.MaxWrite = 1 << 20
	}
	entry, attr, negative := f.ttl.Kernel()
	return &gofs.Options{
		MountOptions: mo,
		// Modes are shown as they are: go-fuse would otherwise show a mode
		// of 0 (a source file or folder of mode 000) as 0644 or 0755.
		NullPermissions: true,
		EntryTimeout:    &entry,
		AttrTimeout:     &attr,
		NegativeTimeout: &negative,
	}
}

// Mount mounts the file system at mnt and starts watching the source.
func (f *FS) Mount(mnt string, mo fuse.MountOptions) (*fuse.Server, error) {
	if mo.AllowOther && f.cfg.NoDefaultPermissions {
		f.log.Printf("meshfs: allow_other with no_default_permissions: every user may read every file under %s, whatever its mode", mnt)
	}
	opts := f.Options(mo)
	f.raw = newRawFS(gofs.NewNodeFS(f.root, opts), !f.cfg.OpenHandles)
	srv, err := fuse.NewServer(f.raw, mnt, &opts.MountOptions)
	if err != nil {
		return nil, err
	}
	f.raw.srv.Store(srv)
	go srv.Serve()
	if err := srv.WaitMount(); err != nil {
		// As gofs.Mount: a failed mount leaves a serve loop that ends.
		return nil, err
	}
	mountpoint.RaiseReadahead(mnt)
	// The tree's watcher reports events once the server, which Mount
	// connects to the nodes, can send their notifications.
	f.mounted.Store(true)
	f.tree.StartWatch()
	return srv, nil
}

// Close stops the watcher and frees the cache. Call it after unmounting.
func (f *FS) Close() {
	// Scans ahead save to the disk cache: stop them first.
	f.ahead.Close()
	f.srcFDs.Close()
	f.tree.Close()
}

// noOpen reports whether the kernel opens files and folders without us:
// reads and listings then come without handles.
func (f *FS) noOpen() bool { return !f.cfg.OpenHandles }

// touch records a reader's request: the pre-warmer and big saves wait for
// a quiet moment.
func (f *FS) touch() { f.tree.Touch() }

// Prewarm converts every mesh under the source in the background (the
// store's pre-warmer). It returns at once; Close stops it.
func (f *FS) Prewarm() { f.tree.Prewarm() }

// newMeshDir is the mesh folder of d's source entry e.
func (d *dirNode) newMeshDir(e *vfs.SourceEntry) *meshDir {
	return &meshDir{srcNode: srcNode{fsys: d.fsys, ident: e.ID()}, parent: d, src: d.fsys.tree.Mesh(d.dir, e)}
}

// newDirNode is the node of the source folder abs.
func (f *FS) newDirNode(abs string, id srcID) *dirNode {
	return &dirNode{srcNode: srcNode{fsys: f, ident: id}, dir: f.tree.NewFolder(abs)}
}

// Unmount unmounts srv's mount point, falling back to a lazy unmount when
// the file system is busy, and waits until the server has stopped serving
// (when it could unmount cleanly).
func Unmount(srv *fuse.Server, mnt string) error {
	if err := srv.Unmount(); err != nil {
		if derr := mountpoint.Detach(mnt); derr != nil {
			return fmt.Errorf("unmount %s: %v; lazy unmount: %v", mnt, err, derr)
		}
		return nil
	}
	srv.Wait()
	return nil
}
