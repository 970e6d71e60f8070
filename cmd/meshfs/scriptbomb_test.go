package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/meshfs/meshfs/decode/decodetest"
)

// scriptBombs are .mdl scripts of issue #26 that each built gigabytes in a
// few instructions: one concatenation of 100 copies of a 32 MiB string,
// and a set of 130 000 values copied into a new table again and again.
var scriptBombs = map[string]string{
	"concat.mdl": `local s = string.rep("x", 32 * 1024 * 1024)
local y = s` + strings.Repeat("..s", 99) + `
function data() return {} end
`,
	"unpack.mdl": `local t = { string.byte(string.rep("u", 130000), 1, -1) }
for i = 1, 1e9 do local u = { unpack(t) } end
function data() return {} end
`,
}

// TestScriptBombsMount: under a 4 GiB address-space limit (ulimit -v), a
// mount whose tree holds the bombs lists each as a broken model (error.txt
// naming the file and the limit) within --timeout + 2 s and stays up; a
// remount on the same disk cache shows them broken without running either
// script again.
func TestScriptBombsMount(t *testing.T) {
	canMount(t)
	src, cacheDir := t.TempDir(), t.TempDir()
	models := filepath.Join(src, "mod", "res", "models", "model")
	if err := os.MkdirAll(models, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, script := range scriptBombs {
		if err := os.WriteFile(filepath.Join(models, name), []byte(script), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	const timeout = 5 * time.Second
	mount := func() (*daemon, string) {
		mnt := mountDir(t)
		cmd := decodetest.UnderAddressLimit(decodetest.FourGiB, meshfsBin, "mount",
			"--cache-dir", cacheDir, "--timeout", timeout.String(), src, mnt)
		return startMountCmd(t, cmd), mnt
	}
	scans := func(mnt string) int64 {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(mnt, ".meshfs", "stats.json"))
		var st struct {
			Scans map[string]int64 `json:"scans"`
		}
		if err == nil {
			err = json.Unmarshal(b, &st)
		}
		if err != nil {
			t.Fatalf("stats.json: %v\n%s", err, b)
		}
		var n int64
		for _, c := range st.Scans {
			n += c
		}
		return n
	}
	broken := func(mnt string) {
		t.Helper()
		for name := range scriptBombs {
			start := time.Now()
			dir := filepath.Join(mnt, "mod", "res", "models", "model", name)
			e, err := os.ReadFile(filepath.Join(dir, "error.txt"))
			if d := time.Since(start); d > timeout+2*time.Second {
				t.Errorf("%s: error.txt after %v", name, d)
			}
			if err != nil || !strings.Contains(string(e), name) || !strings.Contains(string(e), "limit") {
				t.Fatalf("%s/error.txt %q, %v: want the file and the limit", name, e, err)
			}
			if _, err := os.Stat(filepath.Join(dir, strings.TrimSuffix(name, ".mdl")+".glb")); err == nil {
				t.Errorf("%s lists a .glb", name)
			}
		}
	}

	d, mnt := mount()
	broken(mnt)
	if n := scans(mnt); n < int64(len(scriptBombs)) {
		t.Fatalf("%d scans for %d models", n, len(scriptBombs))
	}
	if err := d.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("the daemon exited with %v after the bombs\n%s", err, d.stderr)
	}

	d, mnt = mount()
	broken(mnt)
	if n := scans(mnt); n != 0 {
		t.Errorf("the remount scanned %d times: a script ran again", n)
	}
	if err := d.stop(t, syscall.SIGTERM); err != nil {
		t.Fatalf("the daemon exited with %v\n%s", err, d.stderr)
	}
}
