package luasandbox

import (
	lua "github.com/yuin/gopher-lua"
)

// ScriptPath is package.path as the sandbox gives it: modules are looked
// up under res/scripts/, as the game does (the Loader decides where they
// really come from; the string is data for scripts that read or extend it).
const ScriptPath = "res/scripts/?.lua"

// openDataOnly gives the debug and package stubs the fields real mod
// scripts read, as data only: debug.getinfo (a script's own chunk name,
// the idiom mods use to find their folder) and package.path, cpath and
// loaded. Nothing here reaches a file, the process or the interpreter's
// internals: getinfo returns only source, short_src, currentline and what;
// every other field of the two tables still fails as a stub. A script may
// assign package.path (scripts extend it before requiring), which changes
// nothing but the string.
func openDataOnly(L *lua.LState) {
	g := L.G.Global
	if dbg, ok := g.RawGetString("debug").(*lua.LTable); ok {
		dbg.RawSetString("getinfo", L.NewFunction(debugGetInfo))
	}
	if pkg, ok := g.RawGetString("package").(*lua.LTable); ok {
		pkg.RawSetString("path", lua.LString(ScriptPath))
		pkg.RawSetString("cpath", lua.LString(""))
		loaded := L.NewTable()
		for _, lib := range []string{"_G", "string", "table", "math"} {
			if lib == "_G" {
				loaded.RawSetString(lib, g)
				continue
			}
			loaded.RawSetString(lib, g.RawGetString(lib))
		}
		pkg.RawSetString("loaded", loaded)
	}
}

// debugGetInfo is debug.getinfo(level | function [, what]) reduced to
// data: a table of source ("@" and the chunk's name, as Lua 5.1 names a
// chunk loaded from a file; "=[C]" for a library function), short_src
// (the chunk's name), currentline (-1 when unknown) and what ("main" for
// a chunk, "Lua" for a function, "C" for a library function); nil for a
// level beyond the stack. what is accepted and ignored: the four fields
// are always given.
func debugGetInfo(L *lua.LState) int {
	var fn *lua.LFunction
	line := -1
	main := false
	switch v := L.Get(1).(type) {
	case lua.LNumber:
		dbg, ok := L.GetStack(int(v))
		if !ok {
			L.Push(lua.LNil)
			return 1
		}
		f, err := L.GetInfo("fl", dbg, lua.LNil)
		if err != nil {
			L.Push(lua.LNil)
			return 1
		}
		fn, _ = f.(*lua.LFunction)
		line = dbg.CurrentLine
	case *lua.LFunction:
		fn = v
	default:
		L.ArgError(1, "function or level expected")
	}
	t := L.NewTable()
	switch {
	case fn == nil || fn.IsG:
		t.RawSetString("source", lua.LString("=[C]"))
		t.RawSetString("short_src", lua.LString("[C]"))
		t.RawSetString("what", lua.LString("C"))
		line = -1
	default:
		main = fn.Proto.LineDefined == 0
		t.RawSetString("source", lua.LString("@"+fn.Proto.SourceName))
		t.RawSetString("short_src", lua.LString(fn.Proto.SourceName))
		if main {
			t.RawSetString("what", lua.LString("main"))
		} else {
			t.RawSetString("what", lua.LString("Lua"))
		}
	}
	t.RawSetString("currentline", lua.LNumber(line))
	L.Push(t)
	return 1
}
