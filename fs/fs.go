// Package fs is the FUSE door of meshfs: a thin go-fuse adapter over the
// tree of package vfs, which decides what every name shows as, what a
// mesh folder holds, the stat each node shows and the bytes it serves
// (its made files and .meshfs too). Each node asks vfs and translates the
// answer into a FUSE reply. Only what is kernel-facing is here: what the
// kernel was told of each node and may be told (kernelview.go, output.go,
// passthrough.go), the entry and attribute timeouts, errno, notifications
// and their order, and the raw request layer (kernel.go; what its requests
// share, FUSE-free, in internal/requests), READ replies (readresult.go).
// DESIGN.md ("The house", "Talking to the kernel") says why.
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
	// Store is what outputs are made and kept by (vfs.Config.Store).
	Store store.Config
	// EntryTimeout, AttrTimeout and NegativeTimeout are how long the kernel
	// may trust a name, an attribute and a missing name: zero the defaults
	// (timeouts.go), negative "do not cache".
	EntryTimeout, AttrTimeout, NegativeTimeout time.Duration
	// Log receives one line per broken mesh and watcher problem (nil: none).
	Log *log.Logger
	// NoWatch disables the watcher: changes show when the attribute
	// timeout expires and on each open.
	NoWatch bool
	// OpenHandles makes the kernel open every file and folder through the
	// daemon; by default OPEN and OPENDIR answer ENOSYS (kernel.go).
	OpenHandles bool
	// NoPassthrough keeps reads in the daemon in the open-handles mode
	// (passthrough.go).
	NoPassthrough bool
	// NoDefaultPermissions keeps the kernel from checking the modes shown
	// on a mount with allow_other: every user then reads what the daemon can.
	NoDefaultPermissions bool
	// Overlay shows a resource/ or res/ folder as the game sees it (vfs.Folder.Overlay).
	Overlay bool
	// Ahead is how far the mount works ahead of a walker (zero: walk's defaults).
	Ahead walk.Config
}

// FS is one meshfs file system.
type FS struct {
	cfg    Config
	source string
	log    *log.Logger
	// tree is what the mount shows; st and sniffer are its parts, view
	// its view of the sources.
	tree    *vfs.FS
	st      *store.Store
	sniffer *walk.Sniffer
	view    *source.Packed
	root    *dirNode
	// dirs are the watched source folders' nodes, for the watcher.
	dirs vfs.Watched[*dirNode]
	n    meshstats.Counts // what the mount counts for stats.json
	once *logonce.Log
	ttl  timeouts
	raw  *rawFS // the request layer (nil before Mount)
	// srcFDs are source descriptors kept for handle-less reads.
	srcFDs *srcfd.FDs
	// passOff is set once a read showed the kernel did not pass through.
	passOff atomic.Bool
	// mounted is set once the nodes can be notified.
	mounted atomic.Bool
}

// New prepares a file system for cfg.Source; nothing is read yet.
func New(cfg Config) (*FS, error) {
	lg := cfg.Log
	if lg == nil {
		lg = log.New(io.Discard, "", 0)
	}
	f := &FS{cfg: cfg, log: lg, once: logonce.New(lg), srcFDs: srcfd.New()}
	sc := cfg.Store
	sc.Events = hooks{f} // what the kernel must learn
	tree, err := vfs.New(vfs.Config{Source: cfg.Source, Store: sc, Log: lg, NoWatch: cfg.NoWatch, Overlay: cfg.Overlay,
		Changes: watchHandler{f}, Ahead: &cfg.Ahead})
	if err != nil {
		return nil, err
	}
	f.source, f.tree, f.view = tree.Source(), tree, tree.View()
	f.st, f.sniffer = tree.Parts()
	if _, err := os.Lstat(filepath.Join(f.source, statsDirName)); err == nil {
		lg.Printf("meshfs: %s is hidden: the mount shows its own %s (statistics) at the root in its place",
			filepath.Join(f.source, statsDirName), statsDirName)
	}
	f.ttl = timeouts{Entry: cfg.EntryTimeout, Attr: cfg.AttrTimeout, Negative: cfg.NegativeTimeout, Watched: tree.Watching()}
	f.root = &dirNode{srcNode: srcNode{fsys: f}, dir: tree.Root()} // watched by the tree from the start
	f.dirs.Add(f.root.dir, f.root)
	return f, nil
}

// Source is the absolute path of the mirrored folder.
func (f *FS) Source() string { return f.source }

// shortTTL caps the timeouts of a reply about a node in (or below) source
// folder d when d's watch failed (timeouts.Unwatched).
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

// Options returns go-fuse options for a read-only mount with this file
// system's explicit kernel cache timeouts (go-fuse takes nil ones as zero).
func (f *FS) Options(mo fuse.MountOptions) *gofs.Options {
	mo.Options = append(mo.Options, "ro")
	if mo.AllowOther && !f.cfg.NoDefaultPermissions && !slices.Contains(mo.Options, "default_permissions") {
		// Others see the source's modes and owners: the kernel checks them.
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
	// READDIRPLUS answers the entries whose attributes are cheap
	// (plainLookup); with handles, listings stay plain READDIR.
	mo.DisableReadDirPlus = f.cfg.OpenHandles
	// No node has extended attributes: ENOSYS stops the kernel asking.
	mo.DisableXAttrs = true
	if !f.cfg.OpenHandles {
		mo.ExtraCapabilities |= fuse.CAP_NO_OPENDIR_SUPPORT // offered only to a daemon that asks
	}
	mo.PanicHandler = f.panicHandler
	if mo.Logger == nil {
		mo.Logger = f.log
	}
	if mo.MaxWrite == 0 {
		mo.MaxWrite = 1 << 20 // READs of up to 1 MiB (max_pages), not 128 KiB
	}
	entry, attr, negative := f.ttl.Kernel()
	return &gofs.Options{
		MountOptions: mo,
		// A mode of 0 shows as 0, not go-fuse's 0644 or 0755.
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
		return nil, err // as gofs.Mount: the serve loop ends
	}
	mountpoint.RaiseReadahead(mnt)
	// The watcher reports events once the nodes can be notified.
	f.mounted.Store(true)
	f.tree.StartWatch()
	return srv, nil
}

// Close stops the watcher and frees the cache. Call it after unmounting.
func (f *FS) Close() {
	f.srcFDs.Close()
	f.tree.Close()
}

// noOpen reports whether the kernel opens files and folders without us.
func (f *FS) noOpen() bool { return !f.cfg.OpenHandles }

// touch records a reader's request (vfs.FS.Touch).
func (f *FS) touch() { f.tree.Touch() }

// Prewarm converts every mesh under the source in the background; Close
// stops it.
func (f *FS) Prewarm() { f.tree.Prewarm() }

// Unmount unmounts srv's mount point, lazily when it is busy, and waits
// until the server has stopped serving (when it could unmount cleanly).
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
