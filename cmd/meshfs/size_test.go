package main

import (
	"testing"

	"github.com/spf13/cobra"

	"github.com/meshfs/meshfs/export/outputs"
)

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{
		"0": 0, "1048576": 1 << 20, "512MiB": 512 << 20, "2GiB": 2 << 30, "1M": 1 << 20,
		"1MB": 1 << 20, "512mb": 512 << 20, "3 KiB": 3 << 10, "3kb": 3 << 10, "10b": 10, "1tib": 1 << 40, "1TB": 1 << 40,
		"1.5GiB": 3 << 29, "0.5k": 512, "1.5": 1,
	} {
		got, err := parseSize(in)
		if err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "-1", "12QB", "9999999999999TiB", "MiB", "1e3", "inf", "0x10", "1.", ".5G", "1,5G", "+1M"} {
		if got, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q) accepted as %d", in, got)
		}
	}
	for v, want := range map[int64]string{0: "0", 256 << 20: "256MiB", 1 << 30: "1GiB", 1000: "1000", 3 << 10: "3KiB", 2 << 40: "2TiB"} {
		s := byteSize(v)
		if s.String() != want {
			t.Errorf("String(%d) = %q, want %q", v, s.String(), want)
		}
	}
}

// Every size flag of every command reads a size the same way: "512MB"
// is 512 MiB for the memory cache and for the output limit alike.
func TestSizeFlagsAgree(t *testing.T) {
	sizeFlags := map[string]func() *cobra.Command{
		"cache-size":                           newMountCmd,
		"disk-cache-size":                      newMountCmd,
		outputs.FlagMaxSourceSize:              newMountCmd,
		outputs.FlagMaxOutputSize:              newMountCmd,
		"convert " + outputs.FlagMaxSourceSize: newConvertCmd,
		"convert " + outputs.FlagMaxOutputSize: newConvertCmd,
	}
	for name, mk := range sizeFlags {
		cmd := mk()
		flag := name
		if cmd.Name() == "convert" {
			flag = name[len("convert "):]
		}
		for in, want := range map[string]string{"512MB": "512MiB", "512MiB": "512MiB", "1g": "1GiB", "1536M": "1536MiB"} {
			if err := cmd.Flags().Set(flag, in); err != nil {
				t.Fatalf("%s %s: %v", name, in, err)
			}
			if got := cmd.Flags().Lookup(flag).Value.String(); got != want {
				t.Errorf("--%s %s reads as %s, want %s", name, in, got, want)
			}
		}
		if err := cmd.Flags().Set(flag, "12 parsecs"); err == nil {
			t.Errorf("--%s took a bad size", name)
		}
	}
	// -o cache_size too.
	o := &mountOpts{options: []string{"cache_size=512MB"}}
	if err := o.parseOptions(); err != nil || o.cacheSize != 512<<20 {
		t.Errorf("-o cache_size=512MB: %d, %v", o.cacheSize, err)
	}
}
