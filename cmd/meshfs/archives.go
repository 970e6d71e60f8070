package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/meshfs/meshfs/internal/source"
)

// sourceView is a command's own view of the sources (source.NewView),
// archives inside archives descended when nested is set (--nested).
func sourceView(nested bool) *source.Packed {
	v := source.NewView()
	v.SetNested(nested)
	return v
}

// addNestedFlag adds --nested, shared by convert and the mount: archives
// inside archives are descended as folders (source.Packed.SetNested).
func addNestedFlag(cmd *cobra.Command, on *bool) {
	cmd.Flags().BoolVar(on, "nested", false, fmt.Sprintf("descend archives inside archives as folders (at most %d deep, entries up to %d MiB)", source.MaxNesting, source.MaxNested>>20))
}
