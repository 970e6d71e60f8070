package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/vfs"
)

func init() { subcommands = append(subcommands, newConvertCmd, newInfoCmd) }

func newConvertCmd() *cobra.Command {
	var outDir string
	var o treeOpts
	cmd := &cobra.Command{
		Use:   "convert [-o OUT] FILE|DIR|ARCHIVE...",
		Short: "Write each mesh file's folder (NAME.glb, NAME.obj, NAME.mtl, header.json, chunks/) to disk",
		Long: `convert writes what the mount shows of each argument, read from the same tree
(package vfs) with the same conversions and limits: a mesh FILE becomes the folder
OUT/<file name>/ holding NAME.glb, NAME.obj, NAME.mtl, NAME.preview.png (a thumbnail,
--preview-size pixels a side), header.json, chunks/, or, for a broken mesh,
header.json (with the error), chunks/ and error.txt. A DIR is mirrored under
OUT/<DIR name>/ as the mount of it shows it: every folder, every mesh's folder, each
texture's NAME.EXT.png; the files the mount passes through unchanged (and links) are
not copied. An ARCHIVE (a ZIP or .pak, by its first bytes), given or under a DIR, is
a folder of its name holding its tree (an archive inside one only with --nested).
A FILE is shown as a mount of / would show it (a model finds its parts and textures
in the asset roots above it). Companion files (a .msh.blob)
are part of their mesh's folder and are skipped without a word. Meshes convert in
parallel (--jobs). Files get the permissions the mount shows (the source's, narrowed
by every file an output is made from), writable by their owner, less the umask, as a
copy would. OUT/<name> may not lie inside what it is made from, nor hold it; no link
in it is followed. The exit status is 1 when any mesh failed (or a FILE is missing or
not a mesh, or an archive is damaged), 2 on a usage error.

The limits (--max-source-size, --timeout, --max-output-size) are those of the mount:
a file that exceeds one gets an error.txt naming the limit.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runConvert(cmd.Context(), args, outDir, o, cmd.ErrOrStderr())
		},
	}
	cmd.Flags().StringVarP(&outDir, "output", "o", ".", "folder to write the converted folders into")
	addTreeFlags(cmd, &o, "meshes converted at once")
	return cmd
}

// runConvert writes what the tree shows of each argument under outDir.
func runConvert(ctx context.Context, args []string, outDir string, o treeOpts, stderr io.Writer) error {
	start := time.Now()
	r := newRun(ctx, o, stderr, "converting", func(display, _ string, text string) {
		fmt.Fprintf(stderr, "meshfs: %s\n", text)
	})
	defer r.close()
	out, err := realPrefix(outDir)
	if err != nil {
		return err
	}
	r.umask = umask()
	for _, arg := range args {
		tg, err := r.locate(arg)
		if err == nil && tg.tree != nil {
			tg.dir = filepath.Join(out, tg.rel)
			if src := sourcePath(tg.tree, tg.name); within(src, tg.dir) || within(tg.dir, src) {
				err = fmt.Errorf("%s: the folder written, %s, and the source, %s, may not lie inside one another", arg, tg.dir, src)
			} else if err = os.MkdirAll(out, 0o777); err == nil {
				err = noLinkDir(out)
			}
		}
		r.target(tg, err)
	}
	r.wait()
	n, failed := r.files.Load(), r.failed.Load()
	fmt.Fprintf(stderr, "converted %d of %d files (%d failed) into %s in %s\n",
		n-failed, n, failed, outDir, time.Since(start).Round(time.Millisecond))
	if failed > 0 {
		return &exitError{code: 1, err: fmt.Errorf("%d of %d files did not convert", failed, n)}
	}
	return nil
}

// errNotMesh is the failure of a FILE argument that no format claims.
var errNotMesh = errors.New("not a supported mesh file")

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

// within reports whether the path p is dir or lies inside it (both
// absolute and clean).
func within(p, dir string) bool {
	return p == dir || strings.HasPrefix(p, strings.TrimSuffix(dir, "/")+"/")
}

// realPrefix is the absolute path p with the links of its longest existing
// ancestor resolved: where writing under p lands.
func realPrefix(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	rest := ""
	for {
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			return filepath.Join(real, rest), nil
		}
		parent := filepath.Dir(abs)
		if parent == abs {
			return filepath.Join(abs, rest), nil
		}
		rest = filepath.Join(filepath.Base(abs), rest)
		abs = parent
	}
}

func newInfoCmd() *cobra.Command {
	var o treeOpts
	cmd := &cobra.Command{
		Use:   "info FILE",
		Short: "Print a mesh file's header.json (a FILE inside an archive too)",
		Long: `info prints the header.json a mount of / shows for FILE (which may lie inside an
archive); with an error.txt beside it, exit status 1. ` + exitStatusHelp,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runInfo(cmd.Context(), args[0], o, cmd.OutOrStdout())
		},
	}
	addLimitFlags(cmd, &o.limits)
	addNestedFlag(cmd, &o.nested)
	cmd.Flags().BoolVar(&o.overlay, "overlay", false, "show resource/ and res/ folders as the game sees them (as mount --overlay)")
	return cmd
}

// runInfo prints the header.json of the mesh arg, as its folder's tree
// shows it; the mesh's error.txt, when its folder then lists one, is the
// error.
func runInfo(ctx context.Context, arg string, o treeOpts, stdout io.Writer) error {
	o.jobs = 1
	r := newRun(ctx, o, io.Discard, "", nil)
	defer r.close()
	tg, err := r.locate(arg)
	if err != nil {
		return &exitError{code: 1, err: err}
	}
	if tg.tree == nil {
		return &exitError{code: 1, err: fmt.Errorf("%s: %w", arg, errNotMesh)}
	}
	if i, err := tg.tree.Stat(r.ctx, tg.name); err != nil || i.Kind != vfs.SourceMesh {
		return &exitError{code: 1, err: fmt.Errorf("%s: %w", arg, errNotMesh)}
	}
	hdr, err := vfs.ReadFile(r.ctx, tg.tree, tg.name+"/"+outputs.HeaderName)
	if err != nil {
		return &exitError{code: 1, err: err}
	}
	stdout.Write(hdr)
	if msg, err := vfs.ReadFile(r.ctx, tg.tree, tg.name+"/"+outputs.ErrorName); err == nil {
		return &exitError{code: 1, err: errors.New(strings.TrimSpace(string(msg)))}
	}
	return nil
}
