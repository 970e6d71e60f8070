package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/internal/srcview"
)

func init() { subcommands = append(subcommands, newCheckCmd) }

func newCheckCmd() *cobra.Command {
	var jobs int
	var limits outputs.Limits
	cmd := &cobra.Command{
		Use:   "check [-j N] DIR|FILE...",
		Short: "Scan and convert every mesh under DIR, and print the ones that fail",
		Long: `check finds every mesh file under each DIR as the mount shows them (companion
files belong to their mesh) and makes all of its outputs, as convert and the mount
do, in parallel, writing nothing. It prints one line per broken mesh (its path, then
the error: the mesh whose folder shows error.txt) and a summary line. The exit status
is 1 when any mesh failed, 2 on a usage error.

The limits (--max-source-size, --timeout, --max-output-size) are those of the mount.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCheck(cmd.Context(), args, jobs, limits, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	cmd.Flags().IntVarP(&jobs, "jobs", "j", runtime.NumCPU(), "meshes checked at once")
	addLimitFlags(cmd, &limits)
	return cmd
}

func runCheck(ctx context.Context, args []string, jobs int, limits outputs.Limits, stdout, stderr io.Writer) error {
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
	list := collectMeshes(args, limits.View)
	failed := runMeshes(ctx, list, jobs, "checking", stderr, func(ctx context.Context, j meshJob) error {
		j.m.Limits = limits
		return j.m.Produce(ctx, func(string, []byte) error { return nil })
	}, func(j meshJob, err error) {
		// The errors name the mesh by its Path; the line names it once.
		abs, aerr := filepath.Abs(j.path)
		if aerr != nil {
			abs = j.path
		}
		if j.m != nil {
			abs = j.m.Path
		}
		fmt.Fprintln(stdout, outputs.ErrorLine(j.path, abs, err))
	})
	fmt.Fprintf(stdout, "checked %d meshes: %d failed, in %s\n", len(list), failed, time.Since(start).Round(time.Millisecond))
	if failed > 0 {
		return &exitError{code: 1, err: fmt.Errorf("%d of %d meshes failed", failed, len(list))}
	}
	return nil
}
