package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/meshfs/meshfs/export/outputs"
)

func init() { subcommands = append(subcommands, newCheckCmd) }

func newCheckCmd() *cobra.Command {
	var o treeOpts
	cmd := &cobra.Command{
		Use:   "check [-j N] DIR|FILE...",
		Short: "Scan and convert every mesh under DIR, and print the ones that fail",
		Long: `check reads the tree the mount shows of each DIR (or FILE, or ARCHIVE) as convert
does, making every output of every mesh in parallel, and writes nothing. It prints one
line per broken mesh (its path, then the error: the mesh whose folder shows
error.txt) and per damaged archive, and a summary line. The exit status is 1 when
any mesh failed, 2 on a usage error.

The limits (--max-source-size, --timeout, --max-output-size) are those of the mount.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCheck(cmd.Context(), args, o, cmd.OutOrStdout(), cmd.ErrOrStderr())
		},
	}
	addTreeFlags(cmd, &o, "meshes checked at once")
	return cmd
}

func runCheck(ctx context.Context, args []string, o treeOpts, stdout, stderr io.Writer) error {
	start := time.Now()
	r := newRun(ctx, o, stderr, "checking", func(display, abs, text string) {
		fmt.Fprintln(stdout, outputs.ErrorLine(display, abs, errors.New(text)))
	})
	defer r.close()
	for _, arg := range args {
		r.target(r.locate(arg))
	}
	r.wait()
	n, failed := r.files.Load(), r.failed.Load()
	fmt.Fprintf(stdout, "checked %d meshes: %d failed, in %s\n", n, failed, time.Since(start).Round(time.Millisecond))
	if failed > 0 {
		return &exitError{code: 1, err: fmt.Errorf("%d of %d meshes failed", failed, n)}
	}
	return nil
}
