package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/meshfs/meshfs/export/outputs"
)

func init() { subcommands = append(subcommands, newConvertCmd, newInfoCmd) }

func newConvertCmd() *cobra.Command {
	var outDir string
	var jobs int
	var limits outputs.Limits
	cmd := &cobra.Command{
		Use:   "convert [-o DIR] FILE...",
		Short: "Write each mesh file's folder (NAME.glb, NAME.obj, NAME.mtl, header.json, chunks/) to disk",
		Long: `convert writes, for each FILE, the folder DIR/<file name>/ holding exactly what the
mount shows for it: NAME.glb, NAME.obj, NAME.mtl, header.json, chunks/, and error.txt
in place of the outputs that failed. Files convert in parallel. The exit status is 1
when any file failed.

The limits (--max-source-size, --timeout, --max-output-size) are those of the mount:
a file that exceeds one gets an error.txt naming the limit.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runConvert(cmd.Context(), args, outDir, jobs, limits, cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVarP(&outDir, "output", "o", ".", "folder to write the converted folders into")
	cmd.Flags().IntVarP(&jobs, "jobs", "j", runtime.NumCPU(), "files converted at once")
	addLimitFlags(cmd, &limits)
	return cmd
}

func runConvert(ctx context.Context, files []string, outDir string, jobs int, limits outputs.Limits, stderr io.Writer) error {
	if ctx == nil {
		ctx = context.Background()
	}
	if jobs < 1 {
		jobs = 1
	}
	start := time.Now()
	var bar *progressbar.ProgressBar
	if f, ok := stderr.(*os.File); ok && term.IsTerminal(int(f.Fd())) && len(files) > 1 {
		bar = progressbar.NewOptions(len(files), progressbar.OptionSetWriter(stderr),
			progressbar.OptionSetDescription("converting"), progressbar.OptionShowCount(),
			progressbar.OptionClearOnFinish())
	}
	var failed, skipped atomic.Int64
	var mu sync.Mutex // serialises error lines with the bar
	report := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		if bar != nil {
			bar.Clear()
		}
		fmt.Fprintf(stderr, format, args...)
	}

	work := make(chan string)
	var wg sync.WaitGroup
	for range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for path := range work {
				m, err := outputs.Open(path)
				switch {
				case err != nil:
					failed.Add(1)
					report("meshfs: %v\n", err)
				case m == nil:
					skipped.Add(1)
					report("meshfs: %s: not a supported mesh file, skipped\n", path)
				default:
					m.Limits = limits
					if err := m.WriteDir(ctx, filepath.Join(outDir, filepath.Base(path))); err != nil {
						failed.Add(1)
						report("meshfs: %v\n", err)
					}
				}
				if bar != nil {
					mu.Lock()
					bar.Add(1)
					mu.Unlock()
				}
			}
		}()
	}
	for _, f := range files {
		work <- f
	}
	close(work)
	wg.Wait()
	if bar != nil {
		bar.Finish()
	}
	n := int64(len(files))
	fmt.Fprintf(stderr, "converted %d of %d files (%d failed, %d skipped) into %s in %s\n",
		n-failed.Load()-skipped.Load(), n, failed.Load(), skipped.Load(), outDir, time.Since(start).Round(time.Millisecond))
	if failed.Load() > 0 || skipped.Load() > 0 {
		return &exitError{code: 1, err: fmt.Errorf("%d of %d files did not convert", failed.Load()+skipped.Load(), n)}
	}
	return nil
}

func newInfoCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "info FILE",
		Short: "Print a mesh file's header.json",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			m, err := outputs.Open(args[0])
			if err != nil {
				return err
			}
			if m == nil {
				return fmt.Errorf("%s: not a supported mesh file", args[0])
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
