package luasandbox

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func run(t *testing.T, src string, lim Limits) (any, error) {
	t.Helper()
	return Run(context.Background(), "test.lua", []byte(src), lim)
}

func TestDataTable(t *testing.T) {
	v, err := run(t, `
-- a comment
local base = "vehicle/"
function data()
return {
	materials = { base .. "a.mtl", _("b.mtl"), },
	count = 12, numComp = 3.5,
	flag = true,
	[7] = "seven",
	f = function() end,
}
end`, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	tb, ok := v.(*Table)
	if !ok {
		t.Fatalf("got %T", v)
	}
	if got := strings.Join(tb.Keys(), ","); got != "7,count,f,flag,materials,numComp" {
		t.Errorf("keys %s", got)
	}
	mats := tb.Get("materials").(*Table)
	if len(mats.Seq) != 2 || mats.Seq[0] != "vehicle/a.mtl" || mats.Seq[1] != "b.mtl" {
		t.Errorf("materials %#v", mats.Seq)
	}
	if tb.Get("count") != 12.0 || tb.Get("numComp") != 3.5 || tb.Get("flag") != true || tb.Get("7") != "seven" {
		t.Errorf("fields %#v", tb.Fields)
	}
	if _, ok := tb.Get("f").(Function); !ok {
		t.Errorf("f is %T", tb.Get("f"))
	}
}

func TestNoData(t *testing.T) {
	_, err := run(t, `x = 1`, Limits{})
	if !errors.Is(err, ErrScript) || !strings.Contains(err.Error(), "data()") {
		t.Fatalf("err %v", err)
	}
	_, err = run(t, `function data( return end`, Limits{})
	if !errors.Is(err, ErrScript) {
		t.Fatalf("syntax: err %v", err)
	}
}

// hostile runs a script that must fail with kind, within two seconds (as
// the issue demands; times slowdown). Its deadline is five seconds, beyond
// those two, so each script is stopped by the limit it names, and fails
// the test if that limit is gone (TestDeadline tests the deadline).
func hostile(t *testing.T, name, src string, kind error, msg string) {
	t.Run(name, func(t *testing.T) {
		start := time.Now()
		_, err := run(t, src, Limits{Timeout: 5 * slowdown * time.Second})
		if err == nil {
			t.Fatal("script succeeded")
		}
		if !errors.Is(err, kind) || !strings.Contains(err.Error(), msg) {
			t.Fatalf("err %v, want %v containing %q", err, kind, msg)
		}
		if d := time.Since(start); d > 2*slowdown*time.Second {
			t.Fatalf("took %v", d)
		}
	})
}

// TestHostile runs in a child process (isolated), so that a limit that
// went missing fails the test instead of exhausting the machine's memory.
func TestHostile(t *testing.T) {
	if !inChild("hostile") {
		isolated(t, "^TestHostile$", "hostile")
		return
	}
	dir := t.TempDir()
	marker := filepath.Join(dir, "pwned")
	q := func(s string) string { return strings.ReplaceAll(s, `\`, `\\`) }
	hostile(t, "endless loop", `while true do end`, ErrLimit, "instructions")
	hostile(t, "endless loop in data", `function data() local i = 0 while true do i = i + 1 end end`, ErrLimit, "instructions")
	hostile(t, "pcall swallowing", `function data() while true do pcall(function() while true do end end) end end`, ErrLimit, "instructions")
	hostile(t, "string doubling", `local s = "x" while true do s = s .. s end`, ErrLimit, "bytes of strings")
	hostile(t, "string.rep", `local s = string.rep("x", 1e12)`, ErrLimit, "string.rep")
	hostile(t, "string.rep many", `local t = {} for i = 1, 1e9 do t[i] = string.rep("y", 1e6) end`, ErrLimit, "bytes")
	hostile(t, "string.rep discarded", `for i = 1, 1e9 do string.rep("x", 6e7) end`, ErrLimit, "string.rep")
	hostile(t, "format width", `local s = string.format("%999999999d", 1)`, ErrScript, "too long")
	hostile(t, "gsub", `local s = string.rep("a", 4000) s = s:gsub(".", s)`, ErrScript, "string.gsub is not available")
	hostile(t, "backtracking", `local s = string.rep("a", 4000) string.find(s, ".-.-.-.-.-.-b")`, ErrScript, "string.find is not available")
	hostile(t, "concat", `local t = {} for i = 1, 100000 do t[i] = string.rep("z", 1000) end local s = table.concat(t)`, ErrLimit, "bytes")
	hostile(t, "table bomb", `local t = {} for i = 1, 1e12 do t[i] = i end`, ErrLimit, "instructions")
	hostile(t, "nested tables", `function data() local t = {} for i = 1, 1e12 do t = {t, t} end return t end`, ErrLimit, "instructions")
	hostile(t, "shared subtables", `function data() local t = {} for i = 1, 40 do t = {t, t} end return t end`, ErrLimit, "values")
	// One string built once, referenced many times: every reference would be a
	// copy in header.json (found by the hostile corpus, export/outputs/hostile).
	hostile(t, "shared string", `function data() local s = string.rep("m", 1e6) local t = {} for i = 1, 100000 do t[i] = s end return t end`, ErrLimit, "returned more than")
	hostile(t, "shared string keys", `function data() local s = string.rep("k", 1e6) local t = {} for i = 1, 100 do t[i] = { [s] = 1 } end return t end`, ErrLimit, "returned more than")
	// One instruction copying a large set of values, again and again.
	hostile(t, "unpack loop", unpackLoop(100_000), ErrLimit, "instructions")
	hostile(t, "vararg loop", varargLoop(60_000), ErrLimit, "instructions")
	// One instruction joining 100 MB: refused before it is built.
	hostile(t, "concat operands", concatOf(1<<20, 100), ErrLimit, "concatenation at test.lua:1")
	hostile(t, "cycle", `function data() local t = {} t.t = t return t end`, ErrLimit, "nested deeper")
	hostile(t, "recursion", `local function f() return 1 + f() end f()`, ErrLimit, "overflow")
	hostile(t, "unpack bomb", `local t = {} for i = 1, 2e5 do t[i] = i end local function f(...) return select('#', ...) end f(unpack(t))`, ErrLimit, "overflow")
	hostile(t, "os.execute", `os.execute("touch `+q(marker)+`")`, ErrScript, "os.execute is not available")
	hostile(t, "io.open", `io.open("`+q(marker)+`", "w"):write("x")`, ErrScript, "io.open is not available")
	hostile(t, "require", `require("os")`, ErrScript, "require is not available")
	hostile(t, "dofile", `dofile("/etc/passwd")`, ErrScript, "dofile is not available")
	hostile(t, "loadstring", `loadstring("return 1")()`, ErrScript, "loadstring is not available")
	hostile(t, "load", `load(function() return nil end)`, ErrScript, "load is not available")
	hostile(t, "getfenv", `getfenv(0).x = 1`, ErrScript, "getfenv is not available")
	hostile(t, "string metatable", `("").os.execute("touch `+q(marker)+`")`, ErrScript, "")
	hostile(t, "deep brackets", "x = "+strings.Repeat("(", 100000)+"1"+strings.Repeat(")", 100000), ErrLimit, "nest")
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a script touched %s: %v", marker, err)
	}
}

func TestDeadline(t *testing.T) {
	_, err := run(t, `while true do end`, Limits{Timeout: 20 * time.Millisecond, MaxInstructions: 1 << 62})
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = Run(ctx, "x", []byte(`while true do end`), Limits{MaxInstructions: 1 << 62})
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "canceled") {
		t.Fatalf("canceled ctx: err %v", err)
	}
}

func TestScriptSize(t *testing.T) {
	_, err := run(t, "function data() return {} end "+strings.Repeat(" ", 100), Limits{MaxScript: 64})
	if !errors.Is(err, ErrLimit) || !strings.Contains(err.Error(), "bytes") {
		t.Fatalf("err %v", err)
	}
}

// TestLegitLibraries checks that the bounded replacements still behave like
// the originals for the sizes data files use.
func TestLegitLibraries(t *testing.T) {
	v, err := run(t, `function data() return {
		string.rep("ab", 3), string.format("%5.2f|%s", 1.5, "x"), ("a.b.c"):upper(),
		table.concat({1, "b", 3}, ","), math.floor(2.5), #string.rep("x", 100)
	} end`, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	want := []any{"ababab", " 1.50|x", "A.B.C", "1,b,3", 2.0, 100.0}
	got := v.(*Table).Seq
	if len(got) != len(want) {
		t.Fatalf("got %#v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%d: got %#v want %#v", i, got[i], want[i])
		}
	}
}

func TestPrintIsSilent(t *testing.T) {
	v, err := run(t, `print("hello") function data() return { ok = true } end`, Limits{})
	if err != nil || v.(*Table).Get("ok") != true {
		t.Fatalf("%v %v", v, err)
	}
}
