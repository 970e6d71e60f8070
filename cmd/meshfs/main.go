// Command meshfs shows game mesh files as folders of standard files: a FUSE
// mount (meshfs mount) and its offline twin (meshfs convert).
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/formats"
)

// subcommands is filled by each command's file (convert.go, info.go,
// mount.go) so that adding a command never edits this file.
var subcommands []func() *cobra.Command

func newRootCmd() *cobra.Command {
	root := &cobra.Command{
		Use:   "meshfs",
		Short: "Look inside game 3D assets: mesh files as folders of .glb, .obj, header.json and chunks",
		Long: `meshfs shows each file of a game's asset folder that a format below claims (by its
extension and first bytes) as a folder of standard files: NAME.glb, NAME.obj + NAME.mtl,
header.json and chunks/. Every other file passes through.

Formats:
` + formatList() + `
` + exitStatusHelp,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	for _, sub := range subcommands {
		root.AddCommand(withUsage(sub()))
	}
	return root
}

// formatList is a line per registered format (decode/formats): its name,
// the extensions it claims and the companion files a mesh reads beside it.
func formatList() string {
	var b strings.Builder
	for _, f := range formats.All {
		exts := formats.Extensions(f)
		line := strings.Join(exts, " ")
		if c, ok := f.(decode.Companion); ok && len(exts) > 0 {
			line += " (with " + strings.Join(c.Companions("NAME"+exts[0]), ", ") + ")"
		}
		fmt.Fprintf(&b, "  %-20s %s\n", f.Name(), line)
	}
	return b.String()
}

// exitStatusHelp is the rule exitCode keeps, for every command.
const exitStatusHelp = `Exit status: 0 when all went well; 1 when an input failed (a FILE missing, unreadable
or not a mesh, or a mesh that does not convert); 2 on a usage error or any other
failure (the mount could not start).`

// withUsage makes c's argument and flag errors end with its usage line
// (SilenceUsage keeps the whole help text for --help).
func withUsage(c *cobra.Command) *cobra.Command {
	usage := func(cmd *cobra.Command, err error) error {
		return fmt.Errorf("%w\nUsage: %s (see %s --help)", err, cmd.UseLine(), cmd.CommandPath())
	}
	if args := c.Args; args != nil {
		c.Args = func(cmd *cobra.Command, a []string) error {
			if err := args(cmd, a); err != nil {
				return usage(cmd, err)
			}
			return nil
		}
	}
	c.SetFlagErrorFunc(usage)
	return c
}

func main() {
	stopProfile := startProfile()
	err := newRootCmd().Execute()
	stopProfile()
	if err != nil {
		fmt.Fprintln(os.Stderr, "meshfs:", err)
		os.Exit(exitCode(err))
	}
}

// exitError carries a specific exit status (1: an input failed, as
// exitStatusHelp says).
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func exitCode(err error) int {
	if e, ok := err.(*exitError); ok {
		return e.code
	}
	return 2
}
