// Package luasandbox runs an untrusted Lua 5.1 data script, the kind that
// Transport Fever stores as .msh and .ani files, and returns the value of its
// data() function as plain Go values.
//
// The script gets only what a data file needs: the base library without
// anything that loads code or touches the process (load, loadstring,
// loadfile, dofile, require, module, collectgarbage, getfenv, setfenv,
// newproxy and gopher-lua's _printregs fail with a clear message; print does
// nothing), and the table, string and math libraries (without string.dump,
// the pattern functions, and math.randomseed, which would reseed the
// process's shared generator). io, os, package, debug, coroutine and channel
// are stub tables whose every field fails with "os.execute is not available
// in the sandbox" and the like, but for the data-only debug.getinfo and
// package.path, cpath and loaded (openDataOnly). `_` is the identity function, as the game
// defines it for translated strings.
//
// gopher-lua has no allocator hook, so memory is bounded by bounding what a
// script can build, deterministically (no process-wide heap sampling, which
// other goroutines would disturb):
//
//   - the script's size is capped (MaxScript), which bounds the parser and
//     every constant, and a light lexer (checkShape) rejects syntax nested
//     deeply enough to make gopher-lua's recursive compiler exhaust the Go
//     stack (a fatal error, not a panic);
//   - every VM instruction passes through a hook: gopher-lua polls the
//     context's Done method before each instruction, and the context given to
//     the state is a budget counter. It counts instructions (MaxInstructions),
//     which bounds table growth (each instruction adds at most one table slot
//     or one small value), polls the caller's context and the deadline, and
//     scans the current frame's registers: every instruction leaves at most
//     one new value in a register, so a string built by `..` is seen at the
//     next instruction, and its length is charged to MaxBytes (large strings
//     are remembered by address so re-reading one is not charged twice).
//     String doubling therefore stops within one step of the byte budget;
//   - one instruction, `a .. b .. c`, joins up to a frame's worth of
//     registers before the next hook sees the result, so the hook first
//     bounds the result by the registers' lengths (each register counted,
//     however many hold the same string) and, when that bound does not fit
//     the bytes left, checks the concatenations of the current line and
//     refuses one that would not fit before it runs;
//   - one instruction can also copy a variable number of values (a call's
//     results or `...`, up to the value stack's cap) into a table, a call or
//     a return: while such a set lies above the frame's registers, each
//     instruction costs one more instruction per value of it, and the
//     deadline is polled every 1024 instructions counted so;
//   - the library functions that could build a large string in one call are
//     replaced by bounded versions that check the size against the remaining
//     budget before allocating: string.rep, string.format (width and
//     precision at most 99, as Lua 5.1 requires) and table.concat;
//   - pattern matching (string.find, match, gmatch, gsub) is removed: it runs
//     in Go, where a backtracking pattern can spin for exponential time out of
//     the hook's reach, and data files have no use for it;
//   - the call stack and the value stack have fixed caps (lua.Options), so
//     recursion and one huge unpack end in an "overflow" error;
//   - converting the result to Go counts values (MaxValues) and the bytes of
//     its strings, keys included, each time one appears (MaxResultBytes: one
//     large string referenced from many places is built once, within
//     MaxBytes, but every reference becomes a copy in header.json), limits nesting
//     (MaxDepth, which also stops cycles) and polls the deadline.
//
// Once a limit trips, the hook fails every following instruction, so a pcall
// in the script cannot swallow the error and carry on.
//
// Measured with the defaults: a table of a million integers or of tables
// stops at the instruction limit after 30-50 MB allocated; string doubling
// stops at the byte budget after 32 MB; each hostile script of the tests
// fails in well under a second.
package luasandbox

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
	"unsafe"

	lua "github.com/yuin/gopher-lua"
)

// Limits bounds one run. Zero fields take the defaults.
type Limits struct {
	Timeout         time.Duration // wall-clock deadline for load + data() + conversion
	MaxScript       int           // bytes of source
	MaxInstructions int64         // VM instructions
	MaxBytes        int64         // bytes of strings built at run time
	MaxValues       int           // values in the returned tree
	MaxResultBytes  int64         // bytes of strings in the returned tree, counted per occurrence
	MaxDepth        int           // nesting of the returned tree
}

// Defaults: real .msh files are a few kilobytes of table constructors that
// run in a few thousand instructions; the limits leave two orders of
// magnitude of room and still keep a hostile script to tens of megabytes.
const (
	DefaultTimeout         = time.Second
	DefaultMaxScript       = 2 << 20
	DefaultMaxInstructions = 1_000_000
	DefaultMaxBytes        = 64 << 20
	DefaultMaxValues       = 1 << 20
	DefaultMaxResultBytes  = 4 << 20
	DefaultMaxDepth        = 64
)

func (l Limits) withDefaults() Limits {
	if l.Timeout <= 0 {
		l.Timeout = DefaultTimeout
	}
	if l.MaxScript <= 0 {
		l.MaxScript = DefaultMaxScript
	}
	if l.MaxInstructions <= 0 {
		l.MaxInstructions = DefaultMaxInstructions
	}
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.MaxValues <= 0 {
		l.MaxValues = DefaultMaxValues
	}
	if l.MaxResultBytes <= 0 {
		l.MaxResultBytes = DefaultMaxResultBytes
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultMaxDepth
	}
	return l
}

// Table is a Lua table: the values at keys 1..n in Seq, every other key in
// Fields under its string form (numbers formatted as Lua prints them).
type Table struct {
	Seq    []any
	Fields map[string]any
}

// Keys returns the keys of Fields in sorted order.
func (t *Table) Keys() []string {
	keys := make([]string, 0, len(t.Fields))
	for k := range t.Fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Get returns Fields[key], or nil.
func (t *Table) Get(key string) any {
	if t == nil {
		return nil
	}
	return t.Fields[key]
}

// Function stands for a Lua function found in the result; it is not called.
type Function struct{}

// Errors wrapped by Error, for errors.Is.
var (
	ErrLimit   = errors.New("sandbox limit exceeded")
	ErrTimeout = errors.New("script ran past its deadline")
	ErrScript  = errors.New("script failed")
)

// Error is a failure of a script; Kind is one of the Err values above.
type Error struct {
	Kind error
	Msg  string
}

func (e *Error) Error() string { return e.Msg }
func (e *Error) Unwrap() error { return e.Kind }

func errorf(kind error, format string, args ...any) *Error {
	return &Error{Kind: kind, Msg: fmt.Sprintf(format, args...)}
}

// Run loads script (named name in messages), calls its global data() and
// returns the converted result: nil, bool, float64, string, *Table or
// Function. The caller's ctx cancels it too.
func Run(ctx context.Context, name string, script []byte, lim Limits) (result any, err error) {
	return RunRequire(ctx, name, script, lim, nil)
}

// Loader returns the source of a module that a script requires, and the
// name to give it in messages. Module names are as written in the script
// ("dir/mod" or "dir.mod"); the loader decides where they live.
type Loader func(module string) (name string, script []byte, err error)

// maxModules bounds the modules one run may require.
const maxModules = 64

// RunRequire is Run with require: each module the script (or a module)
// requires is loaded once through load, checked like the script itself
// (size, shape), run in the same interpreter under the same budget, and
// its value returned to every require of it. A module that requires itself,
// directly or not, is an error. With a nil load, require fails as in Run.
func RunRequire(ctx context.Context, name string, script []byte, lim Limits, load Loader) (result any, err error) {
	lim = lim.withDefaults()
	if len(script) > lim.MaxScript {
		return nil, errorf(ErrLimit, "script is %d bytes, more than the limit of %d", len(script), lim.MaxScript)
	}
	if err := checkShape(script); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, lim.Timeout)
	defer cancel()

	L := lua.NewState(lua.Options{
		SkipOpenLibs:     true,
		CallStackSize:    200,
		RegistrySize:     1 << 10,
		RegistryMaxSize:  128 << 10,
		RegistryGrowStep: 16 << 10, // gopher-lua grows by this step, not by doubling

	})
	defer L.Close()
	b := &budget{parent: ctx, L: L, lim: lim}
	L.SetContext(b)

	// gopher-lua turns Lua errors into Go errors, but a Go panic deep inside
	// it (a bug, a call-stack segment overflow) must not take the process down.
	defer func() {
		if r := recover(); r != nil {
			result, err = nil, b.classify(fmt.Errorf("interpreter panic: %v", r))
		}
	}()

	if err := openLibs(L, b); err != nil {
		return nil, b.classify(err)
	}
	openDataOnly(L)
	if load != nil {
		L.G.Global.RawSetString("require", L.NewFunction(b.require(load)))
	}
	fn, err := L.Load(strings.NewReader(string(script)), name)
	if err != nil {
		return nil, errorf(ErrScript, "%v", err)
	}
	L.Push(fn)
	if err := L.PCall(0, 0, nil); err != nil {
		return nil, b.classify(err)
	}
	data := L.GetGlobal("data")
	if data.Type() != lua.LTFunction {
		return nil, errorf(ErrScript, "the script defines no function data() (data is a %s)", data.Type())
	}
	L.Push(data)
	if err := L.PCall(0, 1, nil); err != nil {
		return nil, b.classify(err)
	}
	ret := L.Get(-1)
	L.Pop(1)
	c := converter{b: b}
	v, err := c.convert(ret, 0)
	if err != nil {
		return nil, err
	}
	return v, nil
}

// classify maps an interpreter error to the limit that caused it, if any.
func (b *budget) classify(err error) error {
	if b.err != nil {
		return b.err
	}
	msg := err.Error()
	if strings.Contains(msg, "stack overflow") || strings.Contains(msg, "registry overflow") {
		return errorf(ErrLimit, "the sandbox's stack limit: %s", msg)
	}
	return errorf(ErrScript, "%s", msg)
}

// budget is the context handed to the interpreter. Its Done method runs
// before every VM instruction; it returns nil (no case ready) while the
// script is within its limits and a closed channel from the first violation on.
type budget struct {
	parent context.Context
	L      *lua.LState
	lim    Limits
	steps  int64
	bytes  int64
	err    *Error
	seen   [512]uintptr // addresses of large strings already charged
	// nextPoll is the step count at which the deadline is polled next.
	nextPoll int64
	// concats caches concatOps per function prototype.
	concats map[*lua.FunctionProto][]concatOp
}

var closed = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func (b *budget) Deadline() (time.Time, bool) { return b.parent.Deadline() }
func (b *budget) Value(key any) any           { return b.parent.Value(key) }

func (b *budget) Err() error {
	if b.err != nil {
		return b.err
	}
	return b.parent.Err()
}

func (b *budget) Done() <-chan struct{} {
	if b.err != nil {
		return closed
	}
	// An instruction copies at most a function's registers (maxScan), plus
	// a variable number of values (a call's results, `...`) lying above
	// them: the frame's top is past maxScan only while such a set is there,
	// and any instruction may copy it whole (into a table constructor, a
	// call's arguments, a return), so each is charged one instruction per
	// value of it.
	top := b.L.GetTop()
	b.steps += 1 + int64(max(0, top-maxScan))
	if b.steps > b.lim.MaxInstructions {
		b.fail(errorf(ErrLimit, "script ran more than the sandbox's limit of %d instructions", b.lim.MaxInstructions))
		return closed
	}
	if b.steps >= b.nextPoll {
		b.nextPoll = b.steps + pollEvery
		if !b.poll() {
			return closed
		}
	}
	b.scanRegisters(min(top, maxScan))
	if b.err != nil {
		return closed
	}
	return nil
}

// pollEvery is the instructions between two polls of the deadline.
const pollEvery = 1024

// poll checks the caller's context and the deadline.
func (b *budget) poll() bool {
	if b.err != nil {
		return false
	}
	select {
	case <-b.parent.Done():
		if errors.Is(b.parent.Err(), context.DeadlineExceeded) {
			b.fail(errorf(ErrTimeout, "script ran past its deadline of %v", b.lim.Timeout))
		} else {
			b.fail(errorf(ErrTimeout, "script canceled: %v", b.parent.Err()))
		}
		return false
	default:
		return true
	}
}

func (b *budget) fail(e *Error) {
	if b.err == nil {
		b.err = e
	}
}

// smallString is the length below which a string is covered by the
// instruction budget rather than charged to the byte budget.
const smallString = 64

// maxScan bounds the registers scanned per instruction: a Lua function has
// at most 250 registers.
const maxScan = 256

// scanRegisters charges the strings in the current frame's first top
// registers that were not charged yet, and checks that the next instruction
// cannot build more than the byte budget has left (concatBound).
func (b *budget) scanRegisters(top int) {
	var all int64 // bytes of a concatenation of every register
	for i := 1; i <= top; i++ {
		v := b.L.Get(i)
		all += concatCost(v)
		s, ok := v.(lua.LString)
		if !ok || len(s) < smallString {
			continue
		}
		p := uintptr(unsafe.Pointer(unsafe.StringData(string(s))))
		slot := &b.seen[(p>>4)%uintptr(len(b.seen))]
		if *slot == p {
			continue
		}
		*slot = p
		if !b.charge(int64(len(s))) {
			return
		}
	}
	if !b.room(all) {
		b.concatBound(all)
	}
}

// maxNumberText bounds the length of a number converted to a string for a
// concatenation (fmt's shortest form of a float64 or an int64: 24 bytes).
const maxNumberText = 32

// concatCost bounds the bytes v adds to a concatenation's result. Values
// other than strings and numbers are concatenated through a __concat
// metamethod, Lua code that runs under the hook like any other.
func concatCost(v lua.LValue) int64 {
	switch v := v.(type) {
	case lua.LString:
		return int64(len(v))
	case lua.LNumber:
		return maxNumberText
	}
	return 0
}

// concatOp is an OP_CONCAT instruction: its source line and the first and
// last register it joins (0-based).
type concatOp struct{ line, from, to int }

// concatBound fails the run when the instruction about to run may be a
// concatenation whose result would not fit the byte budget. gopher-lua
// joins the operands of `a .. b .. c` in one instruction, before the next
// instruction lets the hook see (and charge) the result, so the operands'
// lengths are checked first. Only the current line is known (not the
// instruction), so every concatenation of the current function on that
// line is checked, with the registers as they are: the operands of a
// concatenation are written by the instructions just before it, so they
// are in place (and below the frame's top) when the hook runs for it.
// Called only when the frame's registers together (all bytes) would not
// fit, which a data file never comes near; when the current function
// cannot be told, that bound is the one applied.
func (b *budget) concatBound(all int64) {
	dbg, ok := b.L.GetStack(0)
	var fn *lua.LFunction
	if ok {
		fv, err := b.L.GetInfo("fl", dbg, lua.LNil)
		fn, ok = fv.(*lua.LFunction)
		ok = ok && err == nil && !fn.IsG && fn.Proto != nil
	}
	if !ok {
		b.fail(errorf(ErrLimit, "the current function's registers hold %d bytes of strings, which a concatenation could join, beyond the script's limit of %d bytes of strings (%d left)",
			all, b.lim.MaxBytes, b.lim.MaxBytes-b.bytes))
		return
	}
	ops, ok := b.concats[fn.Proto]
	if !ok {
		ops = concatOps(fn.Proto)
		if b.concats == nil {
			b.concats = map[*lua.FunctionProto][]concatOp{}
		}
		b.concats[fn.Proto] = ops
	}
	for _, op := range ops {
		if op.line != dbg.CurrentLine && op.line >= 0 {
			continue
		}
		var n int64
		for r := op.from; r <= op.to; r++ {
			n += concatCost(b.L.Get(r + 1))
		}
		if !b.room(n) {
			b.fail(errorf(ErrLimit, "the concatenation at %s:%d would build up to %d bytes, beyond the script's limit of %d bytes of strings (%d left)",
				fn.Proto.SourceName, dbg.CurrentLine, n, b.lim.MaxBytes, b.lim.MaxBytes-b.bytes))
			return
		}
	}
}

// concatOps lists the concatenations of p (line -1 when p has no line
// information, so that each is checked wherever the hook runs).
func concatOps(p *lua.FunctionProto) []concatOp {
	var ops []concatOp
	for pc, inst := range p.Code {
		if int(inst>>26) != lua.OP_CONCAT {
			continue
		}
		line := -1
		if pc < len(p.DbgSourcePositions) {
			line = p.DbgSourcePositions[pc]
		}
		ops = append(ops, concatOp{line: line, from: int(inst & 0x1ff), to: int(inst>>9) & 0x1ff})
	}
	return ops
}

// charge adds n bytes to the byte budget; it reports false (and fails the
// run) when the budget is exceeded.
func (b *budget) charge(n int64) bool {
	if n < 0 || b.bytes+n > b.lim.MaxBytes || b.bytes+n < b.bytes {
		b.fail(errorf(ErrLimit, "script built more than the sandbox's limit of %d bytes of strings", b.lim.MaxBytes))
		return false
	}
	b.bytes += n
	return true
}

// room reports whether n more bytes fit the byte budget without charging.
func (b *budget) room(n int64) bool {
	return n >= 0 && b.bytes+n <= b.lim.MaxBytes && b.bytes+n >= b.bytes
}

func openLibs(L *lua.LState, b *budget) error {
	for _, lib := range []struct {
		name string
		fn   lua.LGFunction
	}{
		{lua.BaseLibName, lua.OpenBase},
		{lua.TabLibName, lua.OpenTable},
		{lua.StringLibName, lua.OpenString},
		{lua.MathLibName, lua.OpenMath},
	} {
		if err := L.CallByParam(lua.P{Fn: L.NewFunction(lib.fn), NRet: 0, Protect: true}, lua.LString(lib.name)); err != nil {
			return err
		}
	}
	g := L.G.Global
	// Removed functions and libraries stay defined as stubs that fail with
	// a message saying why, rather than "attempt to call a nil value".
	for _, name := range []string{"load", "loadstring", "loadfile", "dofile", "require", "module",
		"collectgarbage", "getfenv", "setfenv", "newproxy", "_printregs"} {
		g.RawSetString(name, unavailable(L, name))
	}
	g.RawSetString("_GOPHER_LUA_VERSION", lua.LNil)
	// print is harmless in intent (debug output) but must not reach the
	// process's stdout: it does nothing.
	g.RawSetString("print", L.NewFunction(func(*lua.LState) int { return 0 }))
	for _, lib := range []string{"os", "io", "package", "debug", "coroutine", "channel"} {
		t := L.NewTable()
		mt := L.NewTable()
		lib := lib
		mt.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
			L.RaiseError("%s.%s is not available in the sandbox: data scripts get only the base, table, string and math libraries", lib, L.ToString(2))
			return 0
		}))
		mt.RawSetString("__newindex", mt.RawGetString("__index"))
		mt.RawSetString("__metatable", lua.LFalse)
		L.SetMetatable(t, mt)
		g.RawSetString(lib, t)
	}
	g.RawSetString("_", L.NewFunction(func(L *lua.LState) int {
		L.SetTop(1)
		return 1
	}))

	str := L.GetGlobal("string").(*lua.LTable)
	// Pattern matching runs in Go and can backtrack for exponential time,
	// out of the instruction hook's reach; data files never need it.
	for _, name := range []string{"dump", "find", "match", "gmatch", "gfind", "gsub"} {
		str.RawSetString(name, unavailable(L, "string."+name))
	}
	str.RawSetString("rep", L.NewFunction(b.strRep))
	str.RawSetString("format", L.NewFunction(b.wrapFormat(str.RawGetString("format"))))
	L.GetGlobal("math").(*lua.LTable).RawSetString("randomseed", unavailable(L, "math.randomseed"))
	L.GetGlobal("table").(*lua.LTable).RawSetString("concat", L.NewFunction(b.tableConcat))
	return nil
}

func unavailable(L *lua.LState, name string) *lua.LFunction {
	return L.NewFunction(func(L *lua.LState) int {
		L.RaiseError("%s is not available in the sandbox", name)
		return 0
	})
}

// limitError raises the budget's error inside a library function.
func (b *budget) limitError(L *lua.LState, what string, n int64) int {
	b.fail(errorf(ErrLimit, "%s would build %d bytes, beyond the script's limit of %d bytes of strings", what, n, b.lim.MaxBytes))
	L.RaiseError("%s", b.err.Msg)
	return 0
}

func (b *budget) strRep(L *lua.LState) int {
	s := L.CheckString(1)
	n := L.CheckInt64(2)
	if n <= 0 || len(s) == 0 {
		L.Push(lua.LString(""))
		return 1
	}
	if n > math.MaxInt64/int64(len(s)) || !b.room(n*int64(len(s))) {
		return b.limitError(L, "string.rep", satMul(n, int64(len(s))))
	}
	// Charged here as well as when the result is seen in a register, so
	// results thrown away at once still count.
	b.charge(n * int64(len(s)))
	L.Push(lua.LString(strings.Repeat(s, int(n))))
	return 1
}

func satMul(a, b int64) int64 {
	if b != 0 && a > math.MaxInt64/b {
		return math.MaxInt64
	}
	return a * b
}

// wrapFormat checks each conversion's width and precision (at most two
// digits, as in Lua 5.1) before handing over to the library, so that
// "%999999999d" cannot allocate a gigabyte.
func (b *budget) wrapFormat(orig lua.LValue) lua.LGFunction {
	fn := orig.(*lua.LFunction)
	return func(L *lua.LState) int {
		f := L.CheckString(1)
		for i := 0; i < len(f); i++ {
			if f[i] != '%' {
				continue
			}
			i++
			for i < len(f) && strings.IndexByte("-+ #0", f[i]) >= 0 {
				i++
			}
			digits := 0
			for i < len(f) && f[i] >= '0' && f[i] <= '9' {
				i++
				digits++
			}
			if i < len(f) && f[i] == '.' {
				i++
				pd := 0
				for i < len(f) && f[i] >= '0' && f[i] <= '9' {
					i++
					pd++
				}
				digits = max(digits, pd)
			}
			if digits > 2 {
				L.RaiseError("invalid format (width or precision too long)")
				return 0
			}
		}
		// The output is bounded by the format and the arguments' string
		// forms: charge that bound before formatting.
		n := int64(len(f)) + 100*int64(strings.Count(f, "%"))
		for i := 2; i <= L.GetTop(); i++ {
			if s, ok := L.Get(i).(lua.LString); ok {
				n += int64(len(s))
			}
		}
		if !b.room(n) {
			return b.limitError(L, "string.format", n)
		}
		b.charge(n)
		return callOrig(L, fn)
	}
}

func callOrig(L *lua.LState, fn *lua.LFunction) int {
	top := L.GetTop()
	L.Push(fn)
	for i := 1; i <= top; i++ {
		L.Push(L.Get(i))
	}
	L.Call(top, lua.MultRet)
	return L.GetTop() - top
}

// tableConcat is table.concat with the output size checked before joining.
func (b *budget) tableConcat(L *lua.LState) int {
	t := L.CheckTable(1)
	sep := L.OptString(2, "")
	i := L.OptInt64(3, 1)
	j := L.OptInt64(4, int64(t.Len()))
	if i > j {
		L.Push(lua.LString(""))
		return 1
	}
	if j-i >= int64(b.lim.MaxValues) || j-i < 0 {
		return b.limitError(L, "table.concat", math.MaxInt64)
	}
	var n int64
	parts := make([]string, 0, min(j-i+1, 1024))
	for k := i; k <= j; k++ {
		v := t.RawGetInt(int(k))
		switch v.(type) {
		case lua.LString, lua.LNumber:
		default:
			L.RaiseError("invalid value (at index %d) in table for 'concat'", k)
			return 0
		}
		s := v.String()
		n += int64(len(s))
		if k > i {
			n += int64(len(sep))
		}
		if !b.room(n) {
			return b.limitError(L, "table.concat", n)
		}
		parts = append(parts, s)
	}
	b.charge(n)
	L.Push(lua.LString(strings.Join(parts, sep)))
	return 1
}

// checkShape rejects sources whose syntax would nest deeper than the
// parser and compiler should recurse. gopher-lua's compiler recurses once per
// level of the syntax tree, so "x = - - - ... 1" or "1+1+...+1" with a
// million operators would grow the Go stack by hundreds of megabytes (or past
// its limit, which is fatal, not a recoverable panic). A syntax tree is no
// deeper than the tokens of one expression plus the brackets and blocks
// around it, so a light lexer bounds that: the tokens since the last
// separator (",", ";", "=", a keyword that starts or ends a statement) at
// each open bracket or block level, summed over the levels. Data files are
// table constructors whose expressions are a token or two, far below it.
func checkShape(src []byte) error {
	const maxNest, maxScore = 200, 4000
	type level struct{ closer byte } // ')', '}', ']', or 'e' (end/until)
	stack := []level{}
	runs := []int{0} // tokens of the current expression at each level
	score := 0       // sum of runs
	fail := func(i int, what string) error {
		return errorf(ErrLimit, "the script nests %s too deeply at byte %d", what, i)
	}
	push := func(closer byte, i int) error {
		stack = append(stack, level{closer})
		runs = append(runs, 0)
		if len(stack) > maxNest {
			return fail(i, "brackets or blocks")
		}
		return nil
	}
	pop := func() {
		if len(stack) > 0 {
			stack = stack[:len(stack)-1]
			score -= runs[len(runs)-1]
			runs = runs[:len(runs)-1]
		}
	}
	token := func(i int) error {
		runs[len(runs)-1]++
		score++
		if score > maxScore {
			return fail(i, "expressions")
		}
		return nil
	}
	reset := func() {
		score -= runs[len(runs)-1]
		runs[len(runs)-1] = 0
	}
	// longBracket returns the end of a long string or comment starting at
	// i ("[[", "[==["), or -1 when src[i:] does not open one.
	longBracket := func(i int) int {
		j := i + 1
		for j < len(src) && src[j] == '=' {
			j++
		}
		if j >= len(src) || src[j] != '[' {
			return -1
		}
		closer := "]" + strings.Repeat("=", j-i-1) + "]"
		k := strings.Index(string(src[j+1:]), closer)
		if k < 0 {
			return len(src)
		}
		return j + 1 + k + len(closer)
	}
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '-' && i+1 < len(src) && src[i+1] == '-':
			if i+2 < len(src) && src[i+2] == '[' {
				if end := longBracket(i + 2); end >= 0 {
					i = end
					continue
				}
			}
			for i < len(src) && src[i] != '\n' {
				i++
			}
		case c == '[' && longBracket(i) >= 0:
			i = longBracket(i)
			if err := token(i); err != nil {
				return err
			}
		case c == '"' || c == '\'':
			for i++; i < len(src) && src[i] != c && src[i] != '\n'; i++ {
				if src[i] == '\\' {
					i++
				}
			}
			i++
			if err := token(i); err != nil {
				return err
			}
		case c == '(' || c == '{' || c == '[':
			if err := token(i); err != nil {
				return err
			}
			if err := push(map[byte]byte{'(': ')', '{': '}', '[': ']'}[c], i); err != nil {
				return err
			}
			i++
		case c == ')' || c == '}' || c == ']':
			pop()
			i++
		case c == ',' || c == ';' || (c == '=' && (i+1 >= len(src) || src[i+1] != '=')):
			reset()
			i++
		case c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z':
			j := i
			for j < len(src) && (src[j] == '_' || src[j] >= 'a' && src[j] <= 'z' || src[j] >= 'A' && src[j] <= 'Z' || src[j] >= '0' && src[j] <= '9') {
				j++
			}
			switch string(src[i:j]) {
			case "function", "do", "then", "repeat":
				reset()
				if err := push('e', i); err != nil {
					return err
				}
			case "end", "until", "elseif":
				pop()
				reset()
			case "local", "return", "if", "while", "for", "else", "in", "break":
				reset()
			default:
				if err := token(i); err != nil {
					return err
				}
			}
			i = j
		default:
			// numbers and operators: one token per byte is conservative
			if err := token(i); err != nil {
				return err
			}
			i++
		}
	}
	return nil
}

// converter turns the result into Go values.
type converter struct {
	b     *budget
	count int
	bytes int64 // of strings and keys so far
}

// text charges one occurrence of a string of the result.
func (c *converter) text(s lua.LString) error {
	c.bytes += int64(len(s))
	if c.bytes > c.b.lim.MaxResultBytes {
		return errorf(ErrLimit, "data() returned more than the sandbox's limit of %d bytes of strings (each reference counted)", c.b.lim.MaxResultBytes)
	}
	return nil
}

func (c *converter) convert(v lua.LValue, depth int) (any, error) {
	c.count++
	if c.count > c.b.lim.MaxValues {
		return nil, errorf(ErrLimit, "data() returned more than the sandbox's limit of %d values", c.b.lim.MaxValues)
	}
	if c.count&1023 == 0 && !c.b.poll() {
		return nil, c.b.err
	}
	switch v := v.(type) {
	case *lua.LNilType:
		return nil, nil
	case lua.LBool:
		return bool(v), nil
	case lua.LNumber:
		return float64(v), nil
	case lua.LString:
		if err := c.text(v); err != nil {
			return nil, err
		}
		return string(v), nil
	case *lua.LFunction:
		return Function{}, nil
	case *lua.LTable:
		if depth >= c.b.lim.MaxDepth {
			return nil, errorf(ErrLimit, "data() returned tables nested deeper than %d (or a cycle)", c.b.lim.MaxDepth)
		}
		return c.table(v, depth)
	default:
		return nil, errorf(ErrScript, "data() returned a %s, which a data file cannot hold", v.Type())
	}
}

func (c *converter) table(t *lua.LTable, depth int) (*Table, error) {
	out := &Table{}
	n := 0
	for ; ; n++ {
		if t.RawGetInt(n+1) == lua.LNil {
			break
		}
		if n >= c.b.lim.MaxValues {
			return nil, errorf(ErrLimit, "data() returned more than the sandbox's limit of %d values", c.b.lim.MaxValues)
		}
	}
	if n > 0 {
		out.Seq = make([]any, 0, n)
		for i := 1; i <= n; i++ {
			v, err := c.convert(t.RawGetInt(i), depth+1)
			if err != nil {
				return nil, err
			}
			out.Seq = append(out.Seq, v)
		}
	}
	var err error
	t.ForEach(func(k, v lua.LValue) {
		if err != nil {
			return
		}
		var key string
		switch k := k.(type) {
		case lua.LString:
			if err = c.text(k); err != nil {
				return
			}
			key = string(k)
		case lua.LNumber:
			if f := float64(k); f == math.Trunc(f) && f >= 1 && f <= float64(n) {
				return // in Seq
			}
			key = formatNumber(float64(k))
		case lua.LBool:
			key = strconv.FormatBool(bool(k))
		default:
			err = errorf(ErrScript, "data() returned a table with a %s key", k.Type())
			return
		}
		var gv any
		gv, err = c.convert(v, depth+1)
		if err != nil {
			return
		}
		if out.Fields == nil {
			out.Fields = map[string]any{}
		}
		out.Fields[key] = gv
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func formatNumber(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e15 {
		return strconv.FormatInt(int64(f), 10)
	}
	return strconv.FormatFloat(f, 'g', 14, 64)
}

// require returns the sandbox's require function for modules from load.
func (b *budget) require(load Loader) lua.LGFunction {
	loaded := map[string]lua.LValue{}
	loading := map[string]bool{}
	return func(L *lua.LState) int {
		mod := L.CheckString(1)
		if v, ok := loaded[mod]; ok {
			L.Push(v)
			return 1
		}
		if loading[mod] {
			L.RaiseError("require %q: the module requires itself", mod)
		}
		if len(loaded)+len(loading) >= maxModules {
			L.RaiseError("require %q: more than %d modules", mod, maxModules)
		}
		name, src, err := load(mod)
		if err != nil {
			L.RaiseError("require %q: %v", mod, err)
		}
		if len(src) > b.lim.MaxScript {
			L.RaiseError("require %q: %s is %d bytes, more than the limit of %d", mod, name, len(src), b.lim.MaxScript)
		}
		if err := checkShape(src); err != nil {
			L.RaiseError("require %q: %s: %v", mod, name, err)
		}
		fn, err := L.Load(strings.NewReader(string(src)), name)
		if err != nil {
			L.RaiseError("require %q: %v", mod, err)
		}
		loading[mod] = true
		L.Push(fn)
		L.Call(0, 1)
		delete(loading, mod)
		v := L.Get(-1)
		L.Pop(1)
		if v == lua.LNil {
			v = lua.LTrue
		}
		loaded[mod] = v
		L.Push(v)
		return 1
	}
}
