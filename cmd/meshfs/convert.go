package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/internal/srcview"
)

func init() { subcommands = append(subcommands, newConvertCmd, newInfoCmd) }

func newConvertCmd() *cobra.Command {
	var outDir string
	var jobs int
	var limits outputs.Limits
	var nested bool
	cmd := &cobra.Command{
		Use:   "convert [-o OUT] FILE|DIR|ARCHIVE...",
		Short: "Write each mesh file's folder (NAME.glb, NAME.obj, NAME.mtl, header.json, chunks/) to disk",
		Long: `convert writes, for each mesh FILE, the folder OUT/<file name>/ holding exactly what
the mount shows for it: NAME.glb, NAME.obj, NAME.mtl, NAME.preview.png (a thumbnail,
--preview-size pixels a side), header.json, chunks/, or, for a
broken mesh, header.json (with the error), chunks/ and error.txt. A DIR is mirrored
like the mount shows it: every mesh file under it gets its folder at the same place
under OUT/<DIR name>/; other files are not copied. An ARCHIVE (a ZIP or .pak, by its
first bytes), given or under a DIR, is mirrored as a folder of its name: each mesh in
it gets its folder at its path inside, converted as a loose file would be (what it
names is found inside the archive); an archive inside one is descended only with
--nested. Companion files (a .msh.blob) are
part of their mesh's folder and are skipped without a word. Meshes convert in
parallel. The exit status is 1 when any mesh failed (or a FILE is missing or not a
mesh), 2 on a usage error.

The limits (--max-source-size, --timeout, --max-output-size) are those of the mount:
a file that exceeds one gets an error.txt naming the limit.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			limits.View = sourceView(nested)
			return runConvert(cmd.Context(), args, outDir, jobs, limits, cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVarP(&outDir, "output", "o", ".", "folder to write the converted folders into")
	cmd.Flags().IntVarP(&jobs, "jobs", "j", runtime.NumCPU(), "meshes converted at once")
	addLimitFlags(cmd, &limits)
	addNestedFlag(cmd, &nested)
	return cmd
}

// meshJob is one source a command works on: a mesh (m), or a path given
// that is not one (err: missing, unreadable, not a supported mesh file).
type meshJob struct {
	path string // the source, as given or found under a DIR argument
	rel  string // where its folder goes, relative to the output folder
	m    *outputs.Mesh
	err  error
	// load, when set, makes m when the job runs (a mesh inside an archive).
	load func() (*outputs.Mesh, error)
}

// errNotMesh is the failure of a FILE argument that no format claims.
var errNotMesh = errors.New("not a supported mesh file")

// collectMeshes turns arguments into jobs: a folder gives every mesh under
// it, by the mount's rule (outputs.Walk), placed under the folder's name,
// then the meshes inside the archives under it; a file gives itself,
// placed under its name, and an archive (sniffed by its first bytes) the
// meshes in it, placed under its name and their paths in it. Companion
// files given are left out; so are the plain files of a folder.
func collectMeshes(args []string, v *srcview.Packed) []meshJob {
	var jobs []meshJob
	for _, arg := range args {
		abs, err := filepath.Abs(arg)
		if err != nil {
			abs = arg
		}
		fi, err := os.Stat(arg)
		switch {
		case err != nil:
			jobs = append(jobs, meshJob{path: arg, err: argError(arg, err)})
		case fi.IsDir():
			base := filepath.Base(abs)
			werr := outputs.Walk(arg, func(rel string, m *outputs.Mesh, err error) error {
				jobs = append(jobs, meshJob{path: filepath.Join(arg, filepath.FromSlash(rel)), rel: filepath.Join(base, filepath.FromSlash(rel)), m: m, err: err})
				return nil
			})
			if werr != nil {
				jobs = append(jobs, meshJob{path: arg, err: werr})
			}
			// Archives are read at their real paths (no link is followed
			// beneath one), their meshes in the folder's tree (Walk's).
			real, rerr := outputs.RealPath(arg)
			if rerr != nil {
				real = arg
			}
			paths, rels := archivesUnder(real)
			for i, p := range paths {
				jobs = append(jobs, archiveJobs(v, p, filepath.Join(base, rels[i]), real)...)
			}
		case outputs.IsCompanion(arg):
		default:
			m, err := outputs.Open(arg)
			if real, rerr := outputs.RealPath(arg); err == nil && m == nil && rerr == nil && sniffArchive(real) {
				// The links in a path the user named are followed once, as outputs.Open does.
				jobs = append(jobs, archiveJobs(v, real, filepath.Base(abs), real)...)
				continue
			}
			if err == nil && m == nil {
				err = fmt.Errorf("%s: %w", arg, errNotMesh)
			}
			jobs = append(jobs, meshJob{path: arg, rel: filepath.Base(arg), m: m, err: err})
		}
	}
	return jobs
}

// argError is the failure of a FILE argument that cannot be opened: its
// full path, whichever of its components is missing, then the reason.
func argError(arg string, err error) error {
	abs, aerr := filepath.Abs(arg)
	if aerr != nil {
		abs = arg
	}
	if u := errors.Unwrap(err); u != nil {
		err = u
	}
	return fmt.Errorf("%s: %w", abs, err)
}

// runMeshes runs do on every job that is a mesh, on workers goroutines,
// with a progress bar (described verb) on stderr when it is a terminal,
// and calls fail, one call at a time, for each job that failed: those that
// are no mesh, and those do failed. It returns the number of failures.
func runMeshes(ctx context.Context, jobs []meshJob, workers int, verb string, stderr io.Writer,
	do func(ctx context.Context, j meshJob) error, fail func(j meshJob, err error)) int64 {
	if workers < 1 {
		workers = 1
	}
	var bar *progressbar.ProgressBar
	if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) && len(jobs) > 1 {
		bar = progressbar.NewOptions(len(jobs), progressbar.OptionSetWriter(stderr),
			progressbar.OptionSetDescription(verb), progressbar.OptionShowCount(),
			progressbar.OptionClearOnFinish())
	}
	var failed atomic.Int64
	var mu sync.Mutex // serialises failure reports with the bar
	work := make(chan meshJob)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range work {
				err := j.err
				if err == nil && j.load != nil {
					j.m, err = j.load()
				}
				if err == nil {
					err = do(ctx, j)
				}
				mu.Lock()
				if err != nil {
					failed.Add(1)
					if bar != nil {
						bar.Clear()
					}
					fail(j, err)
				}
				if bar != nil {
					bar.Add(1)
				}
				mu.Unlock()
			}
		}()
	}
	for _, j := range jobs {
		work <- j
	}
	close(work)
	wg.Wait()
	if bar != nil {
		bar.Finish()
	}
	return failed.Load()
}

func runConvert(ctx context.Context, args []string, outDir string, jobs int, limits outputs.Limits, stderr io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if limits.Caches == nil {
		// This run's conversions share decodings (a model's parts).
		limits.Caches = outputs.NewCaches()
	}
	if limits.View == nil {
		// This run's own view of the sources.
		limits.View = srcview.NewView()
	}
	start := time.Now()
	if limits.Projects == nil {
		limits.Projects = outputs.NewProjects() // one index per project for the run
	}
	list := collectMeshes(args, limits.View)
	failed := runMeshes(ctx, list, jobs, "converting", stderr, func(ctx context.Context, j meshJob) error {
		j.m.Limits = limits
		return j.m.WriteDir(ctx, filepath.Join(outDir, j.rel))
	}, func(j meshJob, err error) {
		fmt.Fprintf(stderr, "meshfs: %v\n", err)
	})
	n := int64(len(list))
	fmt.Fprintf(stderr, "converted %d of %d files (%d failed) into %s in %s\n",
		n-failed, n, failed, outDir, time.Since(start).Round(time.Millisecond))
	if failed > 0 {
		return &exitError{code: 1, err: fmt.Errorf("%d of %d files did not convert", failed, n)}
	}
	return nil
}

func newInfoCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "info FILE",
		Short: "Print a mesh file's header.json (a FILE inside an archive too)",
		Long: `info prints the header.json the mount shows for FILE (which may lie inside an
archive). ` + exitStatusHelp,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := outputs.Open(args[0])
			if errors.Is(err, syscall.ENOTDIR) {
				// A path inside an archive (srcview), read in place.
				if abs, aerr := filepath.Abs(args[0]); aerr == nil {
					lim := outputs.DefaultLimits
					lim.View = srcview.NewView()
					m, err = outputs.OpenSource(abs, lim)
				}
			}
			if err != nil {
				return &exitError{code: 1, err: argError(args[0], err)}
			}
			if m == nil {
				return &exitError{code: 1, err: fmt.Errorf("%s: %w", args[0], errNotMesh)}
			}
			st, scanErr := m.Scan(cmd.Context())
			hdr, err := m.Header(st, scanErr)
			if err != nil {
				return err
			}
			cmd.OutOrStdout().Write(hdr)
			if scanErr != nil {
				return &exitError{code: 1, err: scanErr}
			}
			return nil
		},
	}
}
