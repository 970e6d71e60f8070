package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/internal/source"
	"github.com/meshfs/meshfs/internal/store"
	"github.com/meshfs/meshfs/internal/store/record"
	"github.com/meshfs/meshfs/vfs"
)

// convert, check and info read what they show from the tree the mount
// shows (package vfs), made from the flags the mount has for it: one way
// a folder of outputs is made.

// treeOpts are the flags of the trees a command reads.
type treeOpts struct {
	jobs    int
	limits  outputs.Limits
	nested  bool
	overlay bool
}

// addTreeFlags adds --jobs (described by jobs), the limits, --nested and
// --overlay, as the mount has them.
func addTreeFlags(cmd *cobra.Command, o *treeOpts, jobs string) {
	f := cmd.Flags()
	f.IntVarP(&o.jobs, "jobs", "j", runtime.NumCPU(), jobs)
	addLimitFlags(cmd, &o.limits)
	addNestedFlag(cmd, &o.nested)
	f.BoolVar(&o.overlay, "overlay", false, "show each resource/ or res/ folder holding .pak or .zip archives as the game sees it (as mount --overlay)")
}

// A run is one command's walk of its arguments' trees: a tree per source
// folder, sharing the run's decodings, with o.jobs meshes at once.
type run struct {
	ctx      context.Context
	o        treeOpts
	caches   *outputs.Caches
	projects *outputs.Projects
	trees    map[string]*vfs.FS
	// build is the running build (record.Build), once for the run.
	build string
	// slots bounds the meshes (and textures) being made at once.
	slots chan struct{}
	wg    sync.WaitGroup
	// umask narrows the modes written, as it does a copy's.
	umask os.FileMode
	// mu serialises reports with the progress bar.
	mu     sync.Mutex
	bar    *progressbar.ProgressBar
	report func(display, abs, text string)
	// files counts the meshes and the inputs that failed before being
	// one (a missing FILE, a damaged archive); failed those that failed.
	files, failed atomic.Int64
}

// newRun starts a run; report is told of each failure, one at a time:
// display names the input as the user named it, abs is the path its
// errors name it by, text the errors, a line each. A progress bar
// (described verb) goes to stderr when it is a terminal.
func newRun(ctx context.Context, o treeOpts, stderr io.Writer, verb string, report func(display, abs, text string)) *run {
	if ctx == nil {
		ctx = context.Background()
	}
	if o.jobs < 1 {
		o.jobs = 1
	}
	r := &run{ctx: ctx, o: o, caches: outputs.NewCaches(), projects: outputs.NewProjects(),
		trees: map[string]*vfs.FS{}, build: record.Build(), slots: make(chan struct{}, o.jobs), report: report}
	if f, ok := stderr.(*os.File); ok && verb != "" && term.IsTerminal(int(f.Fd())) {
		r.bar = progressbar.NewOptions(-1, progressbar.OptionSetWriter(stderr),
			progressbar.OptionSetDescription(verb), progressbar.OptionShowCount(),
			progressbar.OptionClearOnFinish())
	}
	return r
}

// tree is the tree of the source folder src, made once per run.
func (r *run) tree(src string) (*vfs.FS, error) {
	if t := r.trees[src]; t != nil {
		return t, nil
	}
	lim := r.o.limits
	lim.View = sourceView(r.o.nested)
	lim.Caches, lim.Projects = r.caches, r.projects
	t, err := vfs.New(vfs.Config{Source: src, NoWatch: true, Overlay: r.o.overlay,
		Store: store.Config{Limits: &lim, Concurrency: r.o.jobs, Build: r.build}})
	if err != nil {
		return nil, err
	}
	r.trees[src] = t
	return t, nil
}

// close closes the run's trees.
func (r *run) close() {
	for _, t := range r.trees {
		t.Close()
	}
}

// wait waits for every mesh started.
func (r *run) wait() {
	r.wg.Wait()
	if r.bar != nil {
		r.bar.Finish()
	}
}

// A target is an argument as a tree shows it.
type target struct {
	display string  // the argument
	tree    *vfs.FS // nil: nothing to do (a companion file)
	name    string  // its name in tree ("": the tree's root)
	rel     string  // the name it is written under in OUT
	dir     string  // where it is written ("": nowhere, check)
}

// locate finds the tree that shows arg: a folder is its own tree (a link
// to it followed); a file (a link to it followed), or a path beneath an
// archive file, is an entry of the tree of the file system's root, so
// that a model finds its parts, materials and textures in the asset roots
// above it, at any height. A companion file gives a target without a
// tree; a missing file an error naming its full path.
func (r *run) locate(arg string) (target, error) {
	tg := target{display: arg}
	abs, err := filepath.Abs(arg)
	if err != nil {
		return tg, err
	}
	tg.rel = filepath.Base(abs)
	src := "/"
	fi, err := os.Stat(abs)
	switch {
	case err == nil && fi.IsDir():
		if src, err = filepath.EvalSymlinks(abs); err != nil {
			return tg, argError(arg, err)
		}
	case err == nil:
		if outputs.IsCompanion(abs) {
			return tg, nil
		}
		real, err := filepath.EvalSymlinks(abs)
		if err != nil {
			return tg, argError(arg, err)
		}
		if !fi.Mode().IsRegular() {
			// Opened as the tree would (without blocking) for its error.
			f, err := source.Disk.Open(real)
			if err == nil {
				f.Close()
				err = fmt.Errorf("%s: %w", arg, errNotMesh)
			}
			return tg, err
		}
		tg.name = strings.TrimPrefix(real, "/")
	case errors.Is(err, syscall.ENOTDIR):
		// A path beneath a file: an archive's entry, or nothing.
		arch := abs
		for {
			parent := filepath.Dir(arch)
			if parent == arch {
				return tg, argError(arg, err)
			}
			arch = parent
			if st, serr := os.Stat(arch); serr == nil {
				if st.IsDir() {
					return tg, argError(arg, err)
				}
				break
			}
		}
		real, rerr := filepath.EvalSymlinks(arch)
		if rerr != nil {
			return tg, argError(arg, rerr)
		}
		tg.name = strings.TrimPrefix(real, "/") + "/" + filepath.ToSlash(abs[len(arch)+1:])
	default:
		return tg, argError(arg, err)
	}
	if tg.tree, err = r.tree(src); err != nil {
		return tg, fmt.Errorf("%s: %w", arg, err)
	}
	return tg, nil
}

// target starts on tg (or reports err, its argument's failure): a mesh
// is made, a folder or archive walked; anything else is no mesh.
func (r *run) target(tg target, err error) {
	if err == nil && tg.tree == nil {
		return // a companion: part of its mesh's folder
	}
	abs, aerr := filepath.Abs(tg.display)
	if aerr != nil {
		abs = tg.display
	}
	var i vfs.Info
	if err == nil {
		if i, err = tg.tree.Stat(r.ctx, tg.name); err != nil {
			err = argError(tg.display, err)
		}
	}
	switch {
	case err != nil:
		r.files.Add(1)
		r.failure(tg.display, abs, err.Error())
	case i.Kind == vfs.SourceMesh:
		r.spawn(func() { r.mesh(tg.tree, tg.name, tg.display, tg.dir, i) })
	case i.IsDir():
		r.folder(tg.tree, tg.name, tg.display, tg.dir, i)
	default:
		r.files.Add(1)
		r.failure(tg.display, abs, fmt.Sprintf("%s: %v", tg.display, errNotMesh))
	}
}

// spawn runs fn on a slot of its own, waiting for one.
func (r *run) spawn(fn func()) {
	r.slots <- struct{}{}
	r.wg.Add(1)
	go func() {
		defer func() {
			<-r.slots
			r.wg.Done()
		}()
		fn()
	}()
}

// failure reports one failed input.
func (r *run) failure(display, abs, text string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed.Add(1)
	if r.bar != nil {
		r.bar.Clear()
	}
	if r.report != nil {
		r.report(display, abs, text)
	}
}

// tick counts one mesh done on the bar.
func (r *run) tick() {
	if r.bar != nil {
		r.mu.Lock()
		r.bar.Add(1)
		r.mu.Unlock()
	}
}

// sourcePath is the path the errors of the entry name of tr name it by.
func sourcePath(tr *vfs.FS, name string) string {
	return filepath.Join(tr.Source(), filepath.FromSlash(name))
}

// join is the tree name of the entry elem of the folder dir.
func join(dir, elem string) string {
	if dir == "" {
		return elem
	}
	return dir + "/" + elem
}

// sub is where the entry elem of the folder written at dir is written
// ("" when nothing is).
func sub(dir, elem string) string {
	if dir == "" {
		return ""
	}
	return filepath.Join(dir, elem)
}

// folder walks the source folder (or archive) name of tr, written at dir:
// its meshes are made on slots of their own, its folders walked in turn,
// its textures' PNGs and error texts written; what the tree passes
// through (files, links) is not written. A damaged archive's error.txt is
// a failed input.
func (r *run) folder(tr *vfs.FS, name, display, dir string, info vfs.Info) {
	abs := sourcePath(tr, name)
	list, err := tr.ReadDir(r.ctx, name)
	if err == nil {
		err = r.mkdir(dir, info)
	}
	if err != nil {
		r.files.Add(1)
		r.failure(display, abs, err.Error())
		return
	}
	for _, e := range list {
		if !plainName(e.Name) {
			continue
		}
		child, cdisplay, cdir := join(name, e.Name), filepath.Join(display, e.Name), sub(dir, e.Name)
		switch {
		case e.Kind == vfs.SourceMesh:
			r.spawn(func() { r.mesh(tr, child, cdisplay, cdir, e) })
		case e.IsDir():
			r.folder(tr, child, cdisplay, cdir, e)
		case e.Kind == vfs.SourceText && e.Name == outputs.ErrorName:
			r.files.Add(1)
			b, err := vfs.ReadFile(r.ctx, tr, child)
			if err == nil && cdir != "" {
				err = r.file(tr, child, cdir)
			}
			if err != nil {
				b = []byte(err.Error())
			}
			r.failure(display, abs, strings.TrimSpace(string(b)))
		case cdir != "" && (e.Kind == vfs.SourcePNG || e.Kind == vfs.SourceText):
			r.spawn(func() { r.texture(tr, child, cdir) })
		}
	}
}

// plainName reports whether a name a tree listed is one to write: never
// empty, "." or "..", nor holding a slash (a tree lists none such).
func plainName(n string) bool {
	return n != "" && n != "." && n != ".." && !strings.ContainsAny(n, "/\x00")
}

// texture writes a texture's PNG, or, when it fails, the error text the
// folder shows in its place.
func (r *run) texture(tr *vfs.FS, name, path string) {
	if r.file(tr, name, path) == nil {
		return
	}
	if base, ok := strings.CutSuffix(name, outputs.PNGSuffix); ok {
		r.file(tr, base+vfs.TextureErrorSuffix, strings.TrimSuffix(path, outputs.PNGSuffix)+vfs.TextureErrorSuffix)
	}
}

// mesh makes the mesh name's folder (vfs.MakeFolder), written at dir:
// what its last listing lacks is removed. The mesh failed when its folder
// shows error.txt.
func (r *run) mesh(tr *vfs.FS, name, display, dir string, info vfs.Info) {
	defer r.tick()
	r.files.Add(1)
	abs := sourcePath(tr, name)
	if err := r.mkdir(dir, info); err != nil {
		r.failure(display, abs, err.Error())
		return
	}
	gone, err := vfs.MakeFolder(r.ctx, tr, name, func(_ int, rel string, i vfs.Info, f vfs.File) error {
		p := sub(dir, filepath.FromSlash(rel))
		if f == nil {
			return r.mkdir(p, i)
		}
		return r.write(f, p)
	})
	if dir != "" {
		for _, n := range gone {
			os.RemoveAll(filepath.Join(dir, n))
		}
		// The folder's mode narrowed by what the conversion found.
		if i, err := tr.Stat(r.ctx, name); err == nil {
			os.Chmod(dir, (i.Mode.Perm()|0o700)&^r.umask)
		}
	}
	if err != nil {
		r.failure(display, abs, err.Error())
	}
}

// file opens the file name of tr (converting what it needs) and writes it
// at path ("": nowhere) with the mode the tree shows, writable by its
// owner, less the umask, whatever mode a file there before had. No link
// at path is followed, nor a FIFO waited on.
func (r *run) file(tr *vfs.FS, name, path string) error {
	f, err := tr.Open(r.ctx, name)
	if err != nil {
		return err
	}
	defer f.Close()
	return r.write(f, path)
}

// write writes the open file f at path ("": nowhere) as file says.
func (r *run) write(f vfs.File, path string) error {
	if path == "" {
		return nil
	}
	mode := (f.Info().Mode.Perm() | 0o600) &^ r.umask
	out, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, mode)
	if err != nil {
		return err
	}
	if err = out.Chmod(mode); err == nil {
		// Reads of up to 1 MiB: each read of a source window checks
		// that the source is still the version opened.
		size := f.Info().Size
		buf := make([]byte, max(min(size, 1<<20), 1))
		_, err = io.CopyBuffer(struct{ io.Writer }{out}, io.NewSectionReader(f, 0, size), buf)
	}
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	return err
}

// mkdir makes the folder dir ("": none) for the entry info, with the mode
// the tree shows, its owner's to write, less the umask; a folder there
// before is given that mode, anything else there (a link) is an error.
func (r *run) mkdir(dir string, info vfs.Info) error {
	if dir == "" {
		return nil
	}
	mode := (info.Mode.Perm() | 0o700) &^ r.umask
	if err := os.Mkdir(dir, mode); err != nil && !errors.Is(err, os.ErrExist) {
		return err
	}
	if err := noLinkDir(dir); err != nil {
		return err
	}
	return os.Chmod(dir, mode)
}

// noLinkDir fails unless dir is a folder, not a link to one.
func noLinkDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return &os.PathError{Op: "mkdir", Path: dir, Err: fmt.Errorf("%w (%v, not followed)", syscall.ENOTDIR, fi.Mode().Type())}
	}
	return nil
}

// umask is the process's umask.
func umask() os.FileMode {
	m := syscall.Umask(0)
	syscall.Umask(m)
	return os.FileMode(m)
}
