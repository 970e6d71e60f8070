package main

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/meshfs/meshfs/export/outputs"
)

func TestByteSize(t *testing.T) {
	for in, want := range map[string]int64{
		"0": 0, "1048576": 1 << 20, "512MiB": 512 << 20, "2GiB": 2 << 30, "1M": 1 << 20,
		"1MB": 1e6, "3 KiB": 3 << 10, "10b": 10, "1tib": 1 << 40,
	} {
		var s byteSize
		if err := s.Set(in); err != nil || int64(s) != want {
			t.Errorf("Set(%q) = %d, %v; want %d", in, s, err, want)
		}
	}
	for _, in := range []string{"", "-1", "1.5GiB", "12QB", "9999999999999TiB", "MiB"} {
		var s byteSize
		if err := s.Set(in); err == nil {
			t.Errorf("Set(%q) accepted as %d", in, s)
		}
	}
	for v, want := range map[int64]string{0: "0", 256 << 20: "256MiB", 1 << 30: "1GiB", 1000: "1000", 3 << 10: "3KiB"} {
		s := byteSize(v)
		if s.String() != want {
			t.Errorf("String(%d) = %q, want %q", v, s.String(), want)
		}
	}
}

// TestConvertLimitFlags: the flags reach the conversion, and the defaults
// are outputs.DefaultLimits.
func TestConvertLimitFlags(t *testing.T) {
	cmd := newConvertCmd()
	for flag, want := range map[string]string{
		outputs.FlagMaxSourceSize: "256MiB", outputs.FlagTimeout: outputs.DefaultTimeout.String(), outputs.FlagMaxOutputSize: "1GiB",
	} {
		if f := cmd.Flags().Lookup(flag); f == nil || f.DefValue != want {
			t.Errorf("--%s: %+v, want default %s", flag, f, want)
		}
	}

	src := filepath.Join("..", "..", "testdata", "gem", "pm01_gem3.ply")
	fi, err := os.Stat(src)
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	var stderr bytes.Buffer
	root := newRootCmd()
	root.SetArgs([]string{"convert", "-o", out, "--max-source-size", "1KiB", "--timeout", "1m", src})
	root.SetErr(&stderr)
	err = root.Execute()
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != 1 {
		t.Fatalf("a file over --max-source-size: %v (want exit status 1)", err)
	}
	msg, err := os.ReadFile(filepath.Join(out, filepath.Base(src), outputs.ErrorName))
	if err != nil || !strings.Contains(string(msg), outputs.FlagMaxSourceSize) {
		t.Errorf("error.txt %q (%v) does not name the limit (file of %d bytes)", msg, err, fi.Size())
	}

	// Without the limit it converts.
	root = newRootCmd()
	root.SetArgs([]string{"convert", "-o", t.TempDir(), "--max-source-size", "0", "--timeout", (10 * time.Second).String(), src})
	root.SetErr(&stderr)
	if err := root.Execute(); err != nil {
		t.Errorf("convert: %v\n%s", err, stderr.String())
	}
}
