package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/meshfs/meshfs/export/outputs"
	meshfs "github.com/meshfs/meshfs/fs"
	"github.com/meshfs/meshfs/internal/mountpoint"
	"github.com/meshfs/meshfs/internal/store"
	"github.com/meshfs/meshfs/internal/store/record"
	meshserve "github.com/meshfs/meshfs/serve"
	"github.com/meshfs/meshfs/vfs"
)

func init() { subcommands = append(subcommands, newServeCmd) }

// serveOpts is what the flags of `meshfs serve` set.
type serveOpts struct {
	listen, auth     string
	tlsCert, tlsKey  string
	queue            int
	maxAge           time.Duration
	logFile          string
	cacheSize        int64
	diskCacheSize    int64
	cacheDir         string
	noDiskCache      bool
	prewarm, overlay bool
	nested           bool
	jobs             int
	limits           outputs.Limits
}

func newServeCmd() *cobra.Command {
	var o serveOpts
	cmd := &cobra.Command{
		Use:   "serve [flags] SOURCE",
		Short: "Serve SOURCE as the mount shows it, over read-only WebDAV and HTTP (Windows Explorer, macOS Finder, browsers)",
		Long: `serve shows the tree 'meshfs mount' shows (the same names, sizes and bytes, made by
the same conversions and caches) over HTTP: read-only WebDAV class 1 for Windows
Explorer ("Map network drive", http://HOST:PORT/), macOS Finder ("Connect to
Server"), rclone and davfs2, and a page per folder for a browser, with a 3D view of
each mesh. It stays in the foreground and prints one line once it listens; Ctrl-C or
SIGTERM stop it.

It listens on 127.0.0.1:8080 unless --listen says otherwise; an address other
machines can reach needs --auth FILE, a file (mode 600) of lines, each a bearer
token (at least 16 characters) or USER:PASSWORD for basic auth, which needs
--tls-cert and --tls-key (Windows asks for basic auth over https only). Files are
sent with ETag, Last-Modified, ranges and Cache-Control: public, max-age (see
--max-age), so that an HTTP cache in front (nginx proxy_cache) can serve a team.
A request waiting on a conversion holds one of --queue slots; when all are taken
the next gets 503 with Retry-After.

Sizes are bytes or binary units: 512MiB, 512M and 512MB all mean 512 × 2^20.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.cacheSize <= 0 {
				return fmt.Errorf("--cache-size must be more than 0")
			}
			if o.diskCacheSize <= 0 {
				return fmt.Errorf("--disk-cache-size must be more than 0 (--no-disk-cache turns the disk cache off)")
			}
			return runServe(args[0], &o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	o.cacheSize = meshfs.DefaultCacheSize
	o.diskCacheSize = 2 << 30
	f := cmd.Flags()
	f.StringVar(&o.listen, "listen", "127.0.0.1:8080", "address to listen on, HOST:PORT (port 0: any free one; a non-loopback host needs --auth)")
	f.StringVar(&o.auth, "auth", "", "file of credentials (mode 600): a bearer token or USER:PASSWORD (with TLS) a line")
	f.StringVar(&o.tlsCert, "tls-cert", "", "serve https with this certificate (PEM), with --tls-key")
	f.StringVar(&o.tlsKey, "tls-key", "", "the key (PEM) of --tls-cert")
	f.IntVar(&o.queue, "queue", meshserve.DefaultQueue, "requests the tree may hold at once (converting, or waiting for a conversion); one more gets 503")
	f.DurationVar(&o.maxAge, "max-age", meshserve.DefaultMaxAge, "how long a client or HTTP cache may reuse a file's response before asking again")
	f.StringVar(&o.logFile, "log", "", "append log lines to this file (default: standard error)")
	f.Var((*byteSize)(&o.cacheSize), "cache-size", "memory for converted outputs, e.g. 512MiB or 1G (units are binary: MB = MiB)")
	addCacheFlags(cmd, &o.jobs, &o.cacheDir, &o.diskCacheSize, &o.noDiskCache, "the source")
	f.BoolVar(&o.prewarm, "prewarm", false, "convert every mesh in the background once listening (low priority)")
	f.BoolVar(&o.overlay, "overlay", false, "show each resource/ or res/ folder holding .pak or .zip archives as the game sees it (as mount --overlay)")
	addLimitFlags(cmd, &o.limits)
	addNestedFlag(cmd, &o.nested)
	return cmd
}

func runServe(source string, o *serveOpts, stdout, stderr io.Writer) error {
	// Every argument is checked before any cache or socket work.
	var auth *meshserve.Auth
	if o.auth != "" {
		a, err := meshserve.LoadAuth(o.auth)
		if err != nil {
			return err
		}
		auth = a
	}
	if err := meshserve.CheckListen(o.listen, auth, o.tlsCert, o.tlsKey); err != nil {
		return err
	}
	cacheDir := o.cacheDir
	if o.noDiskCache {
		cacheDir = ""
	}
	paths, err := mountpoint.CheckServed(source, cacheDir)
	if err != nil {
		return err
	}
	var logw io.Writer = stderr
	if o.logFile != "" {
		f, err := os.OpenFile(o.logFile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return fmt.Errorf("log file: %w", err)
		}
		defer f.Close()
		logw = f
	}
	logger := log.New(logw, "", log.LstdFlags)

	sc := store.Config{CacheSize: o.cacheSize, Limits: &o.limits, Concurrency: o.jobs,
		Build: record.Build(), ConvertGOGC: store.SetMemoryPolicy(o.cacheSize)}
	if paths.CacheErr == nil {
		mo := &mountOpts{noDiskCache: o.noDiskCache, diskCacheSize: o.diskCacheSize, limits: o.limits}
		if disk := openDiskCache(mo, paths.CacheDir, sc.Build, logger); disk != nil {
			defer disk.Close()
			sc.DiskCache = disk
		}
	} else if !o.noDiskCache {
		logger.Printf("meshfs: %v: running without a disk cache", paths.CacheErr)
	}
	return serveTree(paths.Source, o, sc, auth, logger, stdout)
}

// serveTree serves the tree of src until a signal.
func serveTree(src string, o *serveOpts, sc store.Config, auth *meshserve.Auth, logger *log.Logger, stdout io.Writer) error {
	lim := outputs.DefaultLimits
	if sc.Limits != nil {
		lim = *sc.Limits
	}
	lim.View = sourceView(o.nested)
	sc.Limits = &lim
	tree, err := vfs.New(vfs.Config{Source: src, Store: sc, Log: logger, Overlay: o.overlay})
	if err != nil {
		return err
	}
	defer tree.Close()
	tls := o.tlsCert != ""
	h := meshserve.New(tree, meshserve.Config{Queue: o.queue, MaxAge: o.maxAge, TLS: tls, Log: logger, Auth: auth})
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 30 * time.Second, IdleTimeout: 2 * time.Minute, ErrorLog: logger}
	scheme := "http"
	if tls {
		scheme = "https"
	}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	done := make(chan error, 1)
	go func() {
		if tls {
			done <- srv.ServeTLS(ln, o.tlsCert, o.tlsKey)
		} else {
			done <- srv.Serve(ln)
		}
	}()
	fmt.Fprintf(stdout, "meshfs: serving %s at %s://%s/ (pid %d, cache %s); stop with Ctrl-C\n",
		tree.Source(), scheme, ln.Addr(), os.Getpid(), humanBytes(sc.CacheSize))
	if o.prewarm {
		tree.Prewarm()
	}
	select {
	case err := <-done:
		return err
	case sig := <-sigs:
		logger.Printf("meshfs: %v: stopping", sig)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Shutdown(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		srv.Close()
		return nil
	}
}
