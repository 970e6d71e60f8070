package luasandbox

import (
	"context"
	"strings"
	"testing"
)

// TestGetInfo: the idiom mods use to find their own folder works, in the
// script and in a required module, and gives the chunk's own name.
func TestGetInfo(t *testing.T) {
	load, _ := mods(map[string]string{
		"lib/where": `local info = debug.getinfo(1, "S")
return { source = info.source, short = info.short_src, what = info.what,
	line = debug.getinfo(1, "l").currentline }`,
	})
	script := `local w = require "lib/where"
local src = debug.getinfo(1, "S").source
local dir = src:sub(2, #src - #"car.mdl")
local function f() return debug.getinfo(1).what, debug.getinfo(1).currentline end
function data()
	local what, line = f()
	return { src = src, dir = dir, mod = w, fwhat = what, fline = line,
		top = debug.getinfo(1).what, c = debug.getinfo(print).what,
		deep = debug.getinfo(50) == nil, path = package.path,
		hasString = package.loaded.string == string }
end`
	v, err := RunRequire(context.Background(), "mymod_1/res/models/model/car.mdl", []byte(script), Limits{}, load)
	if err != nil {
		t.Fatal(err)
	}
	tab := v.(*Table)
	want := map[string]any{
		"src": "@mymod_1/res/models/model/car.mdl", "dir": "mymod_1/res/models/model/",
		"fwhat": "Lua", "fline": 4.0, "c": "C", "deep": true, "path": ScriptPath, "hasString": true,
	}
	for k, w := range want {
		if got := tab.Get(k); got != w {
			t.Errorf("%s = %#v, want %#v", k, got, w)
		}
	}
	mod := tab.Get("mod").(*Table)
	if mod.Get("source") != "@lib/where.lua" || mod.Get("short") != "lib/where.lua" || mod.Get("what") != "main" || mod.Get("line") != 3.0 {
		t.Errorf("module's getinfo: %v", mod.Fields)
	}
}

// TestDataOnlyStubs: the rest of debug and package still fail, and
// getinfo gives no function, locals or upvalues.
func TestDataOnlyStubs(t *testing.T) {
	for _, script := range []string{
		`local x = debug.getlocal(1, 1); function data() end`,
		`debug.sethook(); function data() end`,
		`local x = package.loadlib("a", "b"); function data() end`,
		`package.preload.x = 1; function data() end`,
		`local f = debug.getinfo(1, "f").func; f(); function data() end`,
		`local x = debug.getinfo({}); function data() end`,
	} {
		_, err := Run(context.Background(), "x.mdl", []byte(script), Limits{})
		if err == nil {
			t.Errorf("%s: no error", script)
			continue
		}
		if !strings.Contains(err.Error(), "not available") && !strings.Contains(err.Error(), "attempt to call") &&
			!strings.Contains(err.Error(), "expected") && !strings.Contains(err.Error(), "nil") {
			t.Errorf("%s: %v", script, err)
		}
	}
	// Extending package.path, as scripts do before requiring, is allowed.
	v, err := Run(context.Background(), "x.mdl", []byte(`package.path = package.path .. ";x/?.lua"
function data() return package.path end`), Limits{})
	if err != nil || v != ScriptPath+";x/?.lua" {
		t.Errorf("package.path extended: %v, %v", v, err)
	}
}
