package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/spf13/cobra"

	"github.com/meshfs/meshfs/export/outputs"
	meshfs "github.com/meshfs/meshfs/fs"
	"github.com/meshfs/meshfs/internal/mountpoint"
	"github.com/meshfs/meshfs/internal/store"
	"github.com/meshfs/meshfs/internal/store/record"
)

func init() {
	subcommands = append(subcommands, newMountCmd)
	os.Args = mountHelperArgs(os.Args)
}

// mountHelperArgs turns a mount(8) helper call into a mount command. When
// the binary is installed (or linked) as /sbin/mount.meshfs or
// /sbin/mount.fuse.meshfs, `mount -t meshfs SRC MNT -o OPTS` (or an fstab
// line of type meshfs or fuse.meshfs) runs it as
//
//	mount.meshfs SRC MNT [-n] [-s] [-f] [-v] [-o OPTS]
//
// and expects it to return once mounted: so --daemon.
func mountHelperArgs(args []string) []string {
	base := filepath.Base(args[0])
	if base != "mount.meshfs" && base != "mount.fuse.meshfs" {
		return args
	}
	out := []string{args[0], "mount", "--daemon"}
	for i := 1; i < len(args); i++ {
		switch a := args[i]; {
		case a == "-o" && i+1 < len(args):
			out = append(out, "-o", args[i+1])
			i++
		case strings.HasPrefix(a, "-o") && len(a) > 2:
			out = append(out, "-o", a[2:])
		case a == "-n", a == "-s", a == "-v", a == "-f":
			// no mtab / sloppy / verbose / fake: nothing for us to do.
		default:
			out = append(out, a)
		}
	}
	return out
}

// mountOpts is what the flags and -o options of one mount set.
type mountOpts struct {
	cacheSize  int64
	daemon     bool
	debug      bool
	logFile    string
	options    []string // raw -o values
	entryTTL   time.Duration
	attrTTL    time.Duration
	negTTL     time.Duration
	fuse       fuse.MountOptions
	cacheGiven bool
	limits     outputs.Limits
	jobs       int
	// entryAuto and attrAuto: the timeout flags were not given, so the
	// mount picks (see meshfs.Config).
	entryAuto, attrAuto bool
	// Disk cache and pre-warming (issue 8).
	cacheDir      string
	diskCacheSize int64
	noDiskCache   bool
	prewarm       bool
	// openHandles: files and folders opened through the daemon (a handle
	// per open) instead of the kernel's no-open modes.
	openHandles bool
	// noPassthrough: in the open-handles mode, serve every read from the
	// daemon instead of the kernel's passthrough.
	noPassthrough bool
	// nonempty: -o nonempty, mount over a folder that holds files.
	nonempty bool
	// noDefaultPerms: -o no_default_permissions (allow_other without the
	// kernel's permission checks).
	noDefaultPerms bool
	// overlay: --overlay, -o overlay (the game's view of resource/ and res/).
	overlay bool
	// nested: --nested, -o nested (archives inside archives as folders).
	nested bool
}

func newMountCmd() *cobra.Command {
	var o mountOpts
	cmd := &cobra.Command{
		Use:   "mount [flags] SOURCE MOUNTPOINT",
		Short: "Mount SOURCE read-only on MOUNTPOINT, each mesh file shown as a folder of converted files",
		Long: `mount mirrors the folder SOURCE on MOUNTPOINT, read-only. Every other file passes
through; each mesh file appears as a folder holding NAME.glb, NAME.obj, NAME.mtl,
NAME.preview.png (a thumbnail), header.json, chunks/ and, when it is broken,
error.txt: exactly what 'meshfs convert' writes. Nothing is converted until an output is first opened or stat'ed; listings,
header.json and chunks/ never convert a mesh. Converted outputs are kept in memory
(--cache-size) and on disk (--cache-dir, --disk-cache-size), so that a remounted tree
lists, stats and reads what an earlier mount converted without converting it again.
--prewarm converts everything in the background, standing aside for readers.
The kernel opens files and folders itself and keeps every listing and every page
until the source changes (the watcher tells it), so a walk of a tree it has seen
never reaches the daemon; --open-handles opens each through the daemon instead.
.meshfs/stats.json at the root (hidden) shows what was converted.

Before anything is mounted or written, mount refuses: a MOUNTPOINT that is already
a mount point (it names what is mounted there) or that is not empty (unless
-o nonempty); a SOURCE and MOUNTPOINT that are the same folder or inside one
another (after resolving symbolic links and ..); a cache folder inside, or
holding, either of them.

The cache folder (--cache-dir) is meshfs's own: a missing folder is created, an
empty one adopted, and both are marked (meshfs-cache, CACHEDIR.TAG); a folder
holding anything else is refused. meshfs deletes only files it wrote there.

The command stays in the foreground, logs to standard error and prints one line
once the mount is ready; Ctrl-C, SIGTERM or 'fusermount3 -u MOUNTPOINT' unmount it.
--daemon returns as soon as the mount is ready instead, and logs to
CACHE-DIR/daemon.log (moved to daemon.log.1 at 4 MiB) unless --log is given; its
ready line says where.

Sizes are bytes or binary units: 512MiB, 512M and 512MB all mean 512 × 2^20.

Mount options (-o, comma-separated, repeatable): allow_other, allow_root,
default_permissions, no_default_permissions, fsname=NAME, nosuid, nodev, noexec,
suid, dev, exec, cache_size=SIZE, asset_path=DIR (as --asset-path), debug, log=FILE,
open_handles, nonempty, overlay, nested; the options
mount(8) itself handles (ro, rw, defaults, auto, noauto, user, users, nouser, _netdev,
nofail, noatime, relatime, x-*) are accepted and ignored. The mount is always
read-only.

Permissions: files and folders show the owner, group and mode of their source (write
bits removed); a mesh folder and its outputs show those of the mesh file, narrowed by
its companion files (a .msh.blob), so nobody reads through the mount what they could
not read from the source; .meshfs is the daemon's user's alone. allow_other turns
default_permissions on, so that the kernel checks these modes for every user;
no_default_permissions turns it off (every user then reads every file the daemon
can: a warning is logged).

fstab (install the binary as /sbin/mount.meshfs, or link it there):
  /srv/game/assets  /mnt/assets  meshfs  ro,allow_other,default_permissions,cache_size=1G,nofail  0 0`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.entryAuto = !cmd.Flags().Changed("entry-timeout")
			o.attrAuto = !cmd.Flags().Changed("attr-timeout")
			o.cacheGiven = cmd.Flags().Changed("cache-size")
			if err := o.parseOptions(); err != nil {
				return err
			}
			if o.cacheSize <= 0 {
				return fmt.Errorf("--cache-size must be more than 0")
			}
			if o.diskCacheSize <= 0 {
				return fmt.Errorf("--disk-cache-size must be more than 0 (--no-disk-cache turns the disk cache off)")
			}
			return runMount(args[0], args[1], &o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	o.cacheSize = meshfs.DefaultCacheSize
	o.diskCacheSize = 2 << 30
	f := cmd.Flags()
	f.Var((*byteSize)(&o.cacheSize), "cache-size", "memory for converted outputs, e.g. 512MiB or 1G (units are binary: MB = MiB)")
	f.BoolVar(&o.daemon, "daemon", false, "return once the mount is ready, serving in the background (logging to "+daemonLogName+" in the cache folder unless --log is given)")
	f.BoolVar(&o.debug, "debug", false, "log every FUSE operation")
	f.StringVar(&o.logFile, "log", "", "append log lines to this file (default: standard error; with --daemon, CACHE-DIR/"+daemonLogName+")")
	f.StringArrayVarP(&o.options, "options", "o", nil, "mount options, comma-separated (see above)")
	// Unset, the entry and attribute timeouts are the mount's defaults:
	// one minute while the source is watched (changes are pushed to the
	// kernel), one second otherwise.
	f.DurationVar(&o.entryTTL, "entry-timeout", 0, "how long the kernel trusts a name (default 1m while the source is watched, else 1s)")
	f.DurationVar(&o.attrTTL, "attr-timeout", 0, "how long the kernel trusts sizes and times (default 1m while the source is watched, else 1s)")
	f.DurationVar(&o.negTTL, "negative-timeout", time.Second, "how long the kernel trusts that a name is absent")
	addCacheFlags(cmd, &o.jobs, &o.cacheDir, &o.diskCacheSize, &o.noDiskCache, "the source or the mount point")
	f.BoolVar(&o.prewarm, "prewarm", false, "convert every mesh in the background once mounted (low priority)")
	f.BoolVar(&o.openHandles, "open-handles", false, "open every file and folder through the daemon (by default the kernel opens them itself, and keeps every listing, so warm walks never reach the daemon); as root on Linux ≥ 6.9 plain files and big .glb files are then passed through (the kernel reads them itself)")
	f.BoolVar(&o.overlay, "overlay", false, "show each resource/ or res/ folder holding .pak or .zip archives as the game sees it: its loose files merged with its archives' trees (loose files first, then the archives from the last by name); the archives show as their own folders too")
	f.BoolVar(&o.noPassthrough, "no-passthrough", false, "with --open-handles, serve every read from the daemon instead of the kernel's passthrough")
	addLimitFlags(cmd, &o.limits)
	addNestedFlag(cmd, &o.nested)
	return cmd
}

// addCacheFlags adds the flags of the conversions and the disk cache that
// mount and serve share; the cache folder may not lie inside notIn.
func addCacheFlags(cmd *cobra.Command, jobs *int, cacheDir *string, diskCacheSize *int64, noDiskCache *bool, notIn string) {
	f := cmd.Flags()
	f.IntVarP(jobs, "jobs", "j", runtime.NumCPU(), "conversions run at once (others wait)")
	f.StringVar(cacheDir, "cache-dir", defaultCacheDir(), "folder of the persistent disk cache: a new or empty folder, or one meshfs made (never inside "+notIn+")")
	f.Var((*byteSize)(diskCacheSize), "disk-cache-size", "disk space for converted outputs, e.g. 2GiB (units are binary: GB = GiB)")
	f.BoolVar(noDiskCache, "no-disk-cache", false, "keep converted outputs in memory only")
}

// parseOptions applies the -o options.
func (o *mountOpts) parseOptions() error {
	for _, group := range o.options {
		for _, opt := range strings.Split(group, ",") {
			opt = strings.TrimSpace(opt)
			key, val, hasVal := strings.Cut(opt, "=")
			switch {
			case opt == "":
			case key == "allow_other":
				o.fuse.AllowOther = true
			case key == "no_default_permissions":
				o.noDefaultPerms = true
			case key == "allow_root", key == "default_permissions",
				key == "nosuid", key == "nodev", key == "noexec", key == "suid", key == "dev", key == "exec":
				o.fuse.Options = append(o.fuse.Options, opt)
			case key == "fsname" && hasVal:
				o.fuse.FsName = val
			case key == "cache_size" && hasVal:
				n, err := parseSize(val)
				if err != nil {
					return fmt.Errorf("-o cache_size: %w", err)
				}
				o.cacheSize, o.cacheGiven = n, true
			case key == "asset_path" && hasVal:
				o.limits.AssetPaths = append(o.limits.AssetPaths, val)
			case key == "debug":
				o.debug = true
			case key == "open_handles":
				o.openHandles = true
			case key == "nonempty":
				o.nonempty = true
			case key == "overlay":
				o.overlay = true
			case key == "nested":
				o.nested = true
			case key == "log" && hasVal:
				o.logFile = val
			case key == "ro", key == "rw", key == "defaults", key == "auto", key == "noauto",
				key == "user", key == "users", key == "nouser", key == "owner", key == "group",
				key == "_netdev", key == "nofail", key == "noatime", key == "atime", key == "relatime",
				key == "strictatime", key == "nodiratime", key == "diratime", key == "sync", key == "async",
				key == "comment", strings.HasPrefix(key, "x-"), key == "subtype":
				// mount(8)'s business, or implied (the mount is always read-only).
			default:
				return fmt.Errorf("unknown mount option %q", opt)
			}
		}
	}
	if o.noDefaultPerms && slices.Contains(o.fuse.Options, "default_permissions") {
		return fmt.Errorf("-o default_permissions and no_default_permissions contradict each other")
	}
	return nil
}

// readyFdEnv names the descriptor on which a --daemon child reports
// readiness ("ready\n") or its failure to its parent.
const readyFdEnv = "MESHFS_READY_FD"

func runMount(source, mnt string, o *mountOpts, stdout, stderr io.Writer) error {
	var ready *os.File
	if fd := os.Getenv(readyFdEnv); fd != "" {
		n, err := strconv.Atoi(fd)
		if err == nil {
			ready = os.NewFile(uintptr(n), "ready")
		}
		os.Unsetenv(readyFdEnv)
	}
	fail := func(err error) error {
		if ready != nil {
			fmt.Fprintf(ready, "error: %v\n", err)
			ready.Close()
		}
		return err
	}
	// Every argument is checked before any cache or mount work, and before
	// a daemon is started.
	paths, err := mountpoint.Check(source, mnt, o.usedCacheDir(o.daemon || ready != nil), o.nonempty)
	if err != nil {
		return fail(err)
	}
	if o.daemon {
		return startDaemon(stdout)
	}
	if err := serve(paths, o, stdout, stderr, ready); err != nil {
		return fail(err)
	}
	return nil
}

// usedCacheDir is the cache folder this mount uses: for its disk cache,
// and a daemon's for its default log; "" for none.
func (o *mountOpts) usedCacheDir(daemon bool) string {
	if !o.noDiskCache || (daemon && o.logFile == "") {
		return o.cacheDir
	}
	return ""
}

// serve mounts and serves until a signal or an external unmount. ready is
// the pipe of the --daemon that started this process (nil in the
// foreground).
func serve(paths mountpoint.Paths, o *mountOpts, stdout, stderr io.Writer, ready *os.File) error {
	var logw io.Writer = stderr
	logPath := ""
	switch {
	case o.logFile != "":
		f, err := os.OpenFile(o.logFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return fmt.Errorf("log file: %w", err)
		}
		defer f.Close()
		logw, logPath = f, o.logFile
	case ready != nil && paths.CacheDir != "":
		l, err := openRotatingLog(daemonLog(paths.CacheDir), daemonLogMax)
		if err != nil {
			fmt.Fprintf(stderr, "meshfs: %v: the daemon runs without a log file (give it --log FILE)\n", err)
			break
		}
		defer l.Close()
		logw, logPath = l, l.path
	}
	var tee *teeUntil
	if ready != nil && logPath != "" {
		// Until the mount is ready, whoever started the daemon sees its
		// lines too.
		tee = &teeUntil{w: logw, pre: stderr}
		logw = tee
	}
	logger := log.New(logw, "", log.LstdFlags)

	convertGOGC := store.SetMemoryPolicy(o.cacheSize)
	var disk *store.DiskCache
	build := record.Build()
	switch {
	case paths.CacheErr == nil:
		disk = openDiskCache(o, paths.CacheDir, build, logger)
	case !o.noDiskCache:
		logger.Printf("meshfs: %v: running without a disk cache", paths.CacheErr)
	}
	if disk != nil {
		defer disk.Close()
	}
	o.limits.View = sourceView(o.nested)
	fsys, err := meshfs.New(meshfs.Config{
		Source: paths.Source,
		Store: store.Config{CacheSize: o.cacheSize, Limits: &o.limits, Concurrency: o.jobs,
			Build: build, DiskCache: disk, ConvertGOGC: convertGOGC},
		EntryTimeout:         autoTTL(o.entryAuto, o.entryTTL),
		AttrTimeout:          autoTTL(o.attrAuto, o.attrTTL),
		NegativeTimeout:      ttl(o.negTTL),
		Log:                  logger,
		OpenHandles:          o.openHandles,
		NoPassthrough:        o.noPassthrough,
		NoDefaultPermissions: o.noDefaultPerms,
		Overlay:              o.overlay,
	})
	if err != nil {
		return err
	}
	defer fsys.Close()

	mo := o.fuse
	mo.Debug = o.debug
	mo.Logger = logger
	// As root, mount(2) directly; as a user, through fusermount3.
	mo.DirectMount = os.Geteuid() == 0

	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)

	absMnt := paths.Mountpoint
	srv, err := fsys.Mount(absMnt, mo)
	if err != nil {
		return fmt.Errorf("mount %s on %s: %w", fsys.Source(), absMnt, err)
	}
	logNote := ""
	if logPath != "" {
		logNote = ", log " + logPath
	}
	fmt.Fprintf(stdout, "meshfs: %s mounted on %s (pid %d, cache %s%s); unmount with Ctrl-C or fusermount3 -u %s\n",
		fsys.Source(), absMnt, os.Getpid(), humanBytes(o.cacheSize), logNote, absMnt)
	if ready != nil {
		fmt.Fprintf(ready, "ready pid %d%s\n", os.Getpid(), logNote)
		ready.Close()
		if tee != nil {
			tee.detach()
		}
		detachOutput(logPath)
	}
	if o.prewarm {
		fsys.Prewarm()
	}

	done := make(chan struct{})
	go func() {
		srv.Wait()
		close(done)
	}()
	select {
	case <-done:
		// Unmounted from outside (fusermount3 -u, umount).
		return nil
	case sig := <-sigs:
		logger.Printf("meshfs: %v: unmounting %s", sig, absMnt)
		if err := meshfs.Unmount(srv, absMnt); err != nil {
			return err
		}
		return nil
	}
}

// defaultCacheDir is $XDG_CACHE_HOME/meshfs, else ~/.cache/meshfs.
func defaultCacheDir() string {
	if d := os.Getenv("XDG_CACHE_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "meshfs")
	}
	if h, err := os.UserHomeDir(); err == nil {
		return filepath.Join(h, ".cache", "meshfs")
	}
	return ""
}

// openDiskCache opens the persistent cache in dir (checked by
// mountpoint.Check) for the outputs of build (record.Build), or returns nil: with --no-disk-cache, or when it
// cannot be used. A folder already held by
// another meshfs daemon is not an error: this mount runs without a disk
// cache (memory only) and says so in the log, rather than refuse to mount
// or share the folder unsafely.
func openDiskCache(o *mountOpts, dir, build string, logger *log.Logger) *store.DiskCache {
	if o.noDiskCache {
		return nil
	}
	if dir == "" {
		logger.Printf("meshfs: no cache folder (no $XDG_CACHE_HOME nor home): running without a disk cache")
		return nil
	}
	dc, err := store.OpenDiskCache(dir, o.diskCacheSize, record.CacheVersion(build, o.limits))
	if err != nil {
		if errors.Is(err, store.ErrLocked) {
			logger.Printf("meshfs: %v: running without a disk cache (give this mount its own --cache-dir to have one)", err)
		} else {
			logger.Printf("meshfs: %v: running without a disk cache", err)
		}
		return nil
	}
	return dc
}

// autoTTL is a timeout flag's value for meshfs.Config: 0 (the mount's
// default) when the flag was not given.
func autoTTL(auto bool, d time.Duration) time.Duration {
	if auto {
		return 0
	}
	return ttl(d)
}

// ttl maps a flag's "0" (do not cache) onto the Config's "negative: none".
func ttl(d time.Duration) time.Duration {
	if d == 0 {
		return -1
	}
	return d
}

func humanBytes(n int64) string {
	switch {
	case n >= 1<<30 && n%(1<<30) == 0:
		return fmt.Sprintf("%d GiB", n>>30)
	case n >= 1<<20:
		return fmt.Sprintf("%.0f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d bytes", n)
}

// startDaemon runs this command again without --daemon in a new session
// and returns once the child reports the mount ready (or its error).
func startDaemon(stdout io.Writer) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	var args []string
	for _, a := range os.Args[1:] {
		if a != "--daemon" && a != "--daemon=true" {
			args = append(args, a)
		}
	}
	r, w, err := os.Pipe()
	if err != nil {
		return err
	}
	defer r.Close()
	devnull, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer devnull.Close()
	// Until it is ready the child's standard error (its own messages and
	// fusermount3's) comes here; then it points it at its log.
	er, ew, err := os.Pipe()
	if err != nil {
		return err
	}
	defer er.Close()
	copied := make(chan struct{})
	go func() {
		io.Copy(os.Stderr, er)
		close(copied)
	}()
	cmd := exec.Command(exe, args...)
	cmd.Env = append(os.Environ(), readyFdEnv+"=3")
	cmd.Stdin, cmd.Stdout, cmd.Stderr = devnull, devnull, ew
	cmd.ExtraFiles = []*os.File{w}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		w.Close()
		ew.Close()
		return err
	}
	w.Close()
	ew.Close()
	line, rerr := bufio.NewReader(r).ReadString('\n')
	line = strings.TrimSpace(line)
	select {
	case <-copied:
	case <-time.After(2 * time.Second):
		// Something the child started still holds the pipe; go on.
	}
	switch {
	case strings.HasPrefix(line, "ready"):
		cmd.Process.Release()
		what := strings.TrimSpace(strings.TrimPrefix(line, "ready"))
		if !strings.Contains(what, ", log ") {
			what += ", no log file (give --log FILE)"
		}
		fmt.Fprintf(stdout, "meshfs: mounted (daemon %s)\n", what)
		return nil
	case strings.HasPrefix(line, "error: "):
		// The child printed the error on the standard error it shares.
		cmd.Wait()
		return errors.New("the mount failed")
	}
	werr := cmd.Wait()
	return fmt.Errorf("the daemon exited before the mount was ready (%v, %v)", werr, rerr)
}

// detachOutput points a daemon's standard output and error at its log file
// (or /dev/null, for ""), releasing the terminal or pipe of whoever started
// it.
func detachOutput(logFile string) {
	target := os.DevNull
	if logFile != "" {
		target = logFile
	}
	f, err := os.OpenFile(target, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	syscall.Dup3(int(f.Fd()), 1, 0)
	syscall.Dup3(int(f.Fd()), 2, 0)
}
