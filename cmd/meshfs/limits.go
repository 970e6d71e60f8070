package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/meshfs/meshfs/export/outputs"
)

// addLimitFlags adds the conversion limits (outputs.Limits) to a command,
// with outputs.DefaultLimits as defaults, writing into l. convert and mount
// share them, so a folder converts the same way in both.
func addLimitFlags(cmd *cobra.Command, l *outputs.Limits) {
	*l = outputs.DefaultLimits
	fs := cmd.Flags()
	fs.Var((*byteSize)(&l.MaxSourceSize), outputs.FlagMaxSourceSize,
		"largest mesh file (or companion file) to decode, e.g. 256MiB; a larger one gets error.txt (0: no limit)")
	fs.DurationVar(&l.Timeout, outputs.FlagTimeout, l.Timeout,
		"deadline of one mesh's scan, and of its decode and export (0: none)")
	fs.Var((*byteSize)(&l.MaxOutputSize), outputs.FlagMaxOutputSize,
		"largest output file (.glb, .obj, .mtl, chunk), e.g. 1GiB; a larger one is an error (0: no limit)")
}

// byteSize is a flag value in bytes that accepts binary and decimal
// suffixes: 1048576, 1MiB, 1M (= MiB), 1MB, 2GiB.
type byteSize int64

var sizeUnits = []struct {
	suffix string
	mult   int64
}{
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
	{"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12},
	{"k", 1 << 10}, {"m", 1 << 20}, {"g", 1 << 30}, {"t", 1 << 40},
	{"b", 1},
}

func (s *byteSize) Set(v string) error {
	t := strings.ToLower(strings.TrimSpace(v))
	mult := int64(1)
	for _, u := range sizeUnits {
		if strings.HasSuffix(t, u.suffix) {
			t, mult = strings.TrimSpace(strings.TrimSuffix(t, u.suffix)), u.mult
			break
		}
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n < 0 || n > (1<<62)/mult {
		return fmt.Errorf("%q is not a size in bytes (like 1048576, 512MiB or 2GiB)", v)
	}
	*s = byteSize(n * mult)
	return nil
}

func (s *byteSize) String() string {
	n := int64(*s)
	for _, u := range []struct {
		suffix string
		mult   int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n != 0 && n%u.mult == 0 {
			return fmt.Sprintf("%d%s", n/u.mult, u.suffix)
		}
	}
	return strconv.FormatInt(n, 10)
}

func (s *byteSize) Type() string { return "size" }
