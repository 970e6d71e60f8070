package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/meshfs/meshfs/internal/srcview"
)

// sourceView is a command's own view of the sources (srcview.NewView),
// archives inside archives descended when nested is set (--nested).
func sourceView(nested bool) *srcview.Packed {
	v := srcview.NewView()
	v.SetNested(nested)
	return v
}

// addNestedFlag adds --nested, shared by convert and the mount: archives
// inside archives are descended as folders (srcview.Packed.SetNested).
func addNestedFlag(cmd *cobra.Command, on *bool) {
	cmd.Flags().BoolVar(on, "nested", false, fmt.Sprintf("descend archives inside archives as folders (at most %d deep, entries up to %d MiB)", srcview.MaxNesting, srcview.MaxNested>>20))
}
