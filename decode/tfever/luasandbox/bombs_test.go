package luasandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/meshfs/meshfs/decode/decodetest"
)

// concatOf is a script whose one statement joins n copies of a string of
// size bytes.
func concatOf(size, n int) string {
	return fmt.Sprintf(`local s = string.rep("x", %d) local y = s%s`, size, strings.Repeat("..s", n-1))
}

// unpackLoop builds a table of n values and copies it whole, in one
// instruction, again and again.
func unpackLoop(n int) string {
	return fmt.Sprintf(`local t = {} for i = 1, %d do t[i] = i end for i = 1, 1e9 do local u = {unpack(t)} end`, n)
}

// varargLoop is unpackLoop with the copy made by `...`.
func varargLoop(n int) string {
	return fmt.Sprintf(`local t = {} for i = 1, %d do t[i] = i end
local function f(...) for i = 1, 1e9 do local u = {...} end end f(unpack(t))`, n)
}

// TestByteLimit holds the byte budget to what it alone can stop: scripts
// that build (and keep) a few tens of megabytes of strings within the
// instruction budget and the deadline, under a budget of one megabyte.
// Without the byte limit they succeed, so the test fails, in a second.
func TestByteLimit(t *testing.T) {
	lim := Limits{MaxBytes: 1 << 20, Timeout: 10 * time.Second}
	for name, src := range map[string]string{
		"doubling":     `local s = "x" for i = 1, 25 do s = s .. s end function data() return #s end`,
		"concat":       concatOf(100_000, 100) + ` function data() return #y end`,
		"rep":          `local s = string.rep("x", 4e6) function data() return #s end`,
		"table.concat": `local t = {} for i = 1, 100 do t[i] = string.rep("z", 40000) end local s = table.concat(t) function data() return #s end`,
		"format":       `local s = string.rep("x", 400000) for i = 1, 5 do s = string.format("%s%s", s, s) end function data() return #s end`,
	} {
		_, err := run(t, src, lim)
		if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "bytes") {
			t.Errorf("%s: err %v, want the byte limit", name, err)
		}
	}
}

// TestConcatCheckedFirst: a concatenation whose result would not fit the
// byte budget fails before it is built, naming the line, rather than at the
// next instruction after allocating it.
func TestConcatCheckedFirst(t *testing.T) {
	const size, n = 1 << 20, 100 // a 100 MB result
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := run(t, "\n"+concatOf(size, n), Limits{MaxBytes: 8 << 20})
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "concatenation at test.lua:2") {
		t.Fatalf("err %v, want the concatenation's bound", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 32<<20 {
		t.Errorf("the run allocated %d MB, for a budget of 8 MB", got>>20)
	}
	// Within the budget, a concatenation of the same shape succeeds.
	v, err := run(t, concatOf(1000, n)+` function data() return #y end`, Limits{MaxBytes: 8 << 20})
	if err != nil || v != float64(1000*n) {
		t.Fatalf("small concatenation: %v %v", v, err)
	}
}

// bombs are the scripts of issue #26 that took the daemon down: each built
// gigabytes in a few instructions, out of reach of the per-instruction hook.
var bombs = map[string]string{
	"concat 30":   concatOf(32<<20, 30),
	"concat 100":  concatOf(32<<20, 100),
	"unpack loop": unpackLoop(130_000),
	"vararg loop": varargLoop(60_000),
	"doubling":    `local s = "x" while true do s = s .. s end`,
	"rep":         `local t = {} for i = 1, 1e9 do t[i] = string.rep("y", 6e7) end`,
}

// TestBombs runs each bomb in a child process under a 4 GiB address-space
// limit, where building what the bomb asks for ends in a fatal "out of
// memory": each must end in a limit error within the default deadline plus
// two seconds (times slowdown), and the child must exit cleanly. The
// deadline is five seconds (times slowdown), so that a limit, not the
// deadline, must stop each.
func TestBombs(t *testing.T) {
	for name, src := range bombs {
		if inChild("bomb " + name) {
			start := time.Now()
			_, err := Run(context.Background(), "bomb.lua", []byte(src), Limits{Timeout: 5 * slowdown * time.Second})
			d := time.Since(start)
			if !errors.Is(err, ErrLimit) {
				t.Fatalf("err %v, want a limit (not the deadline)", err)
			}
			if d > slowdown*(DefaultTimeout+2*time.Second) {
				t.Fatalf("took %v (%v)", d, err)
			}
			fmt.Printf("bomb ended in %v: %v\n", d.Round(time.Millisecond), err)
			return
		}
	}
	if os.Getenv(childEnv) != "" {
		t.Skip("a child for another test")
	}
	for name := range bombs {
		t.Run(name, func(t *testing.T) {
			out := isolated(t, "^TestBombs$", "bomb "+name)
			if i := strings.Index(out, "bomb ended in"); i >= 0 {
				line, _, _ := strings.Cut(out[i:], "\n")
				t.Log(line)
			}
		})
	}
}

// childEnv names the test (and case) a child process of isolated runs.
const childEnv = "MESHFS_LUASANDBOX_CHILD"

// inChild reports whether this process is isolated's child for what.
func inChild(what string) bool { return os.Getenv(childEnv) == what }

// isolated runs the tests matching run in a child test process under a
// 4 GiB address-space limit (ulimit -v), with childEnv set to what, and
// fails t unless the child passes. A limit the sandbox lost then ends in
// the child's "out of memory" within seconds, rather than in tens of
// gigabytes of the test binary's heap. It returns the child's output.
func isolated(t *testing.T, run, what string) string {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := decodetest.UnderAddressLimit(decodetest.FourGiB, exe, "-test.run="+run, "-test.count=1", "-test.v")
	cmd.Env = append(os.Environ(), childEnv+"="+what)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "\nPASS") {
		t.Fatalf("child process for %s: %v\n%s", what, err, tail(out, 3000))
	}
	return string(out)
}

func tail(b []byte, n int) []byte {
	if len(b) > n {
		return b[len(b)-n:]
	}
	return b
}
