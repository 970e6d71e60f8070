package main

import (
	"bytes"
	"errors"
	"image/png"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/meshfs/meshfs/export/outputs"
)

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

// TestConvertPreviewSize: --preview-size draws NAME.preview.png that many
// pixels a side (256 by default); 0 leaves it out; a size past
// preview.MaxSize is a usage error.
func TestConvertPreviewSize(t *testing.T) {
	if f := newConvertCmd().Flags().Lookup(outputs.FlagPreviewSize); f == nil || f.DefValue != "256" {
		t.Fatalf("--%s: %+v, want default 256", outputs.FlagPreviewSize, f)
	}
	src := filepath.Join("..", "..", "testdata", "gem", "pm01_gem3.ply")
	thumb := filepath.Join(filepath.Base(src), "pm01_gem3.preview.png")
	for _, size := range []int{64, 0} {
		out := t.TempDir()
		var stderr bytes.Buffer
		root := newRootCmd()
		root.SetArgs([]string{"convert", "-o", out, "--preview-size", strconv.Itoa(size), src})
		root.SetErr(&stderr)
		if err := root.Execute(); err != nil {
			t.Fatalf("convert --preview-size %d: %v\n%s", size, err, stderr.String())
		}
		b, err := os.ReadFile(filepath.Join(out, thumb))
		if size == 0 {
			if !errors.Is(err, os.ErrNotExist) {
				t.Errorf("--preview-size 0 wrote %s (%v)", thumb, err)
			}
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := png.DecodeConfig(bytes.NewReader(b))
		if err != nil || cfg.Width != size || cfg.Height != size {
			t.Errorf("--preview-size %d: %dx%d (%v)", size, cfg.Width, cfg.Height, err)
		}
	}
	root := newRootCmd()
	root.SetArgs([]string{"convert", "-o", t.TempDir(), "--preview-size", "5000", src})
	root.SetErr(&bytes.Buffer{})
	if err := root.Execute(); err == nil {
		t.Error("--preview-size 5000 accepted")
	}
}
