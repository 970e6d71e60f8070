package hostile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/meshfs/meshfs/decode/tfever"
)

// bombs are whole scripts that attack the sandbox: endless loops,
// recursion, huge strings and tables, and reaches for the process. Each
// runs as a .msh (beside a real blob) and as a .ani.
func bombs(marker string) map[string]string {
	q := func(s string) string { return strings.ReplaceAll(s, `\`, `\\`) }
	return map[string]string{
		"loop":             `while true do end`,
		"loop in data":     `function data() local i = 0 while true do i = i + 1 end end`,
		"pcall loop":       `function data() while true do pcall(function() while true do end end) end end`,
		"recursion":        `local function f() return 1 + f() end function data() return f() end`,
		"mutual recursion": `local g local function f(n) return g(n) + 1 end g = function(n) return f(n) end function data() return { x = f(1) } end`,
		// Doubling to 256 MiB, four times the sandbox's byte budget, and no
		// further: without the byte limit the variant fails the allocation
		// bound instead of exhausting the test's memory (luasandbox tests
		// the endless form, in a child process under ulimit -v).
		"string doubling":  `function data() local s = "x" for i = 1, 28 do s = s .. s end end`,
		"string.rep":       `function data() return { s = string.rep("x", 1e12) } end`,
		"rep method":       `function data() return { s = ("x"):rep(6e7) } end`,
		"table bomb":       `function data() local t = {} for i = 1, 1e12 do t[i] = i end return t end`,
		"nested tables":    `function data() local t = {} for i = 1, 1e12 do t = {t, t} end return t end`,
		"shared subtables": `function data() local t = {} for i = 1, 40 do t = {t, t} end return t end`,
		"cycle":            `function data() local t = {} t.t = t return t end`,
		"unpack bomb":      `local t = {} for i = 1, 2e5 do t[i] = i end local function f(...) return select('#', ...) end function data() return { n = f(unpack(t)) } end`,
		"concat bomb":      `function data() local t = {} for i = 1, 100000 do t[i] = string.rep("z", 1000) end return { s = table.concat(t) } end`,
		// One instruction joining 30 copies of 32 MiB, and one copying 130 000
		// values again and again (issue #26).
		"concat operands":  `function data() local s = string.rep("x", 32 * 1024 * 1024) return { s = s` + strings.Repeat("..s", 29) + ` } end`,
		"unpack loop":      `function data() local t = { string.byte(string.rep("u", 130000), 1, -1) } for i = 1, 1e9 do local u = { unpack(t) } end end`,
		"format width":     `function data() return { s = string.format("%99d", 1):rep(1e7) } end`,
		"os.execute":       `os.execute("touch ` + q(marker) + `") function data() return {} end`,
		"io.open":          `function data() io.open("` + q(marker) + `", "w"):write("x") return {} end`,
		"io.lines":         `function data() for l in io.lines("/etc/passwd") do return { l = l } end end`,
		"require":          `local os = require("os") function data() os.exit(1) end`,
		"os.exit":          `os.exit(0)`,
		"dofile":           `dofile("/etc/passwd")`,
		"loadstring":       `function data() return loadstring("return {}")() end`,
		"string metatable": `function data() return ("").os.execute("touch ` + q(marker) + `") end`,
		"getmetatable":     `function data() local m = getmetatable("") m.__index = function() while true do end end return { x = ("").y } end`,
		"coroutine":        `function data() local c = coroutine.create(function() while true do coroutine.yield() end end) while true do coroutine.resume(c) end end`,
		"debug":            `function data() debug.sethook() return {} end`,
		"deep brackets":    "function data() return " + strings.Repeat("{", 100000) + strings.Repeat("}", 100000) + " end",
		"deep parens":      "x = " + strings.Repeat("(", 100000) + "1" + strings.Repeat(")", 100000),
		"long chain":       "x = 1" + strings.Repeat(" + 1", 200000),
		"huge error":       `function data() error(string.rep("e", 6e7)) end`,
		"huge error value": `function data() error({ string.rep("e", 6e7) }) end`,
		"not a table":      `function data() return "x" end`,
		"nil":              `function data() return nil end`,
		"function":         `function data() return function() end end`,
		"no data":          `x = 1`,
		"syntax":           `function data( return end`,
		"binary junk":      "function data() return {\x01\x02} end",
		"nul":              "function data() return { a = \"\x00\" } end\x00",
	}
}

// amplifiers are .msh scripts shaped like the Train Fever fixture whose
// data tables claim far more than their size: one large string referenced
// many times, lying counts, offsets and component counts, and one index
// list shared by many submeshes. Each is (old, new): the fixture's text old
// is replaced by new.
var amplifiers = map[string][2]string{
	"metadata reuses a 1 MB string": {`metadata = { author = "meshfs", version = 2, },`,
		`metadata = (function() local s = string.rep("m", 1e6) local t = {} for i = 1, 100000 do t[i] = s end return t end)(),`},
	"metadata key reuses a 1 MB string": {`metadata = { author = "meshfs", version = 2, },`,
		`metadata = (function() local s = string.rep("m", 1e6) local t = {} for i = 1, 100000 do t[i] = { [s] = s } end return t end)(),`},
	"materials reuse a 1 MB string": {`"vehicle/train/door.mtl", `,
		`(function() return string.rep("m", 1e6) end)(), (function() return string.rep("n", 1e6) end)(), `},
	"materials list reuses a 1 MB string": {`materials = {
				"vehicle/train/door.mtl", 
			},`, `materials = (function() local s = string.rep("m", 1e6) local t = {} for i = 1, 100000 do t[i] = s end return t end)(),`},
	"keyframe bomb": {`origin = { 0.5, -0.5, 0, },`,
		`origin = { 0.5, -0.5, 0, }, keyframes = (function() local t = {} local k = { rot = {1, 2, 3}, time = 1, transl = {0, 0, 0} } for i = 1, 200000 do t[i] = k end return t end)(),`},
	// Within the instruction limit, and valid: as many keyframes as a
	// script can make, under a 1 MB animation name (whose every keyframe's
	// field path once repeated it).
	"keyframes under a 1 MB name": {`open = {
			params = {
				keyframes = {`, `[string.rep("o", 1e6)] = {
			params = {
				keyframes = (function() local t = {} local r, z = {1, 2, 3}, {0, 0, 0} for i = 1, 150000 do t[i] = { rot = r, time = i, transl = z } end return t end)(), x = {`},
	"keyframes to the instruction limit": {`origin = { 0.5, -0.5, 0, },`,
		`origin = { 0.5, -0.5, 0, }, keyframes = (function() local t = {} local r, z = {1, 2, 3}, {0, 0, 0} for i = 1, 1e7 do t[i] = { rot = r, time = i, transl = z } end return t end)(),`},
	"animation name 1 MB": {`open = {`, `[string.rep("o", 1e6)] = {`},
	"position count 2^31-1": {`position = {
					count = 48,`, `position = {
					count = 2147483647,`},
	"many submeshes share the index lists": {`	subMeshes = {`, `	subMeshes = (function() local t = {} local s = {
			indices = {
				position = { count = 48, offset = 368, }, normal = { count = 48, offset = 984, },
			},
			materials = { "a.mtl" },
		} for i = 1, 100000 do t[i] = s end return t end)(), unused = {`},
	"many attributes": {`	subMeshes = {`, `	vertexAttr = (function() local t = {} for i = 1, 100000 do t["a" .. i] = { count = 4, numComp = 1, offset = 0 } end return t end)(),
	subMeshes = {`},
	"many index lists": {`				color0 = {
					count = 48,
					offset = 496,
				},`, `				(function() local t = {} for i = 1, 100000 do t["i" .. i] = { count = 12, offset = 0 } end return t end)(),`},
	"many animations": {`	animations = {`, `	animations = (function() local t = {} local k = { params = { keyframes = { { rot = {1, 2, 3}, time = 0, transl = {0, 0, 0} } } }, type = "KEYFRAME" } for i = 1, 100000 do t["n" .. i] = k end return t end)(), x = {`},
	"matConfigs bomb": {`matConfigs = {`, `matConfigs = (function() local r = {} for i = 1, 100000 do r[i] = 0 end local t = {} for i = 1, 1000 do t[i] = r end return t end)(), x = {`},
}

// luaVariants are the bombs as .msh and .ani, and the amplifiers.
func luaVariants(t testing.TB, marker string) []variant {
	dir := filepath.Join(repoRoot(t), "testdata", "tfever")
	script, err := os.ReadFile(filepath.Join(dir, "trainfever_door.msh"))
	if err != nil {
		t.Fatal(err)
	}
	blob, err := os.ReadFile(filepath.Join(dir, "trainfever_door.msh.blob"))
	if err != nil {
		t.Fatal(err)
	}
	msh := func(desc, src string) variant {
		return variant{desc: "lua: " + desc, format: tfever.Msh{}, main: "door.msh",
			files: map[string][]byte{"door.msh": []byte(src), "door.msh.blob": blob}}
	}
	var out []variant
	for name, src := range bombs(marker) {
		out = append(out, msh(name+" (.msh)", src),
			variant{desc: "lua: " + name + " (.ani)", format: tfever.Ani{}, main: "walk.ani", files: map[string][]byte{"walk.ani": []byte(src)}})
	}
	for name, r := range amplifiers {
		if !strings.Contains(string(script), r[0]) {
			t.Fatalf("amplifier %q: the fixture no longer contains %q", name, r[0])
		}
		out = append(out, msh(name, strings.Replace(string(script), r[0], r[1], 1)))
	}
	ani, err := os.ReadFile(filepath.Join(dir, "walk.ani"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range [][2]string{
		{"times = {", `times = (function() local t = {} for i = 1, 300000 do t[i] = i end return t end)(), x = {`},
		{"transfs = {", `transfs = (function() local m = { 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1 } local t = {} for i = 1, 300000 do t[i] = m end return t end)(), x = {`},
		{"transfs = {", `transfs = (function() local m = { 0/0, 1/0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1 } local t = {} for i = 1, 5 do t[i] = m end return t end)(), x = {`},
	} {
		out = append(out, variant{desc: fmt.Sprintf("lua: .ani %.60s", r[1]), format: tfever.Ani{}, main: "walk.ani",
			files: map[string][]byte{"walk.ani": []byte(strings.Replace(string(ani), r[0], r[1], 1))}})
	}
	return out
}
