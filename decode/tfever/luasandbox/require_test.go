package luasandbox

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

func mods(m map[string]string) (Loader, *int) {
	calls := 0
	return func(mod string) (string, []byte, error) {
		calls++
		s, ok := m[mod]
		if !ok {
			return "", nil, fmt.Errorf("no module %s", mod)
		}
		return mod + ".lua", []byte(s), nil
	}, &calls
}

func TestRequire(t *testing.T) {
	load, calls := mods(map[string]string{
		"lib/mat": `local base = require "lib/base"
return { make = function(n) return { fileName = base.dir .. n } end }`,
		"lib/base": `return { dir = "models/" }`,
	})
	v, err := RunRequire(context.Background(), "x.mtl", []byte(`local m = require "lib/mat"
local again = require "lib/mat"
function data() return again.make("a.dds") end`), Limits{}, load)
	if err != nil {
		t.Fatal(err)
	}
	tab, ok := v.(*Table)
	if !ok || tab.Get("fileName") != "models/a.dds" {
		t.Fatalf("result %#v", v)
	}
	if *calls != 2 {
		t.Errorf("loader called %d times, want once per module (2)", *calls)
	}
}

func TestRequireErrors(t *testing.T) {
	for _, tc := range []struct {
		mods   map[string]string
		script string
		want   string
	}{
		{nil, `require "nope"; function data() end`, `require "nope": no module nope`},
		{map[string]string{"a": `require "b"`, "b": `require "a"`}, `require "a"; function data() end`, "requires itself"},
		{map[string]string{"a": `while true do end`}, `require "a"; function data() end`, "instruction"},
		{map[string]string{"a": `return os.execute("x")`}, `require "a"; function data() end`, "not available"},
		{map[string]string{"a": strings.Repeat("(", 300)}, `require "a"; function data() end`, "nests"},
	} {
		load, _ := mods(tc.mods)
		// A deadline beyond the instruction limit's reach: the looping
		// module must meet the limit.
		_, err := RunRequire(context.Background(), "x.mtl", []byte(tc.script), Limits{Timeout: 5 * slowdown * time.Second}, load)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.script, err, tc.want)
		}
	}
	// Without a loader, require is refused as before.
	_, err := Run(context.Background(), "x.msh", []byte(`require "a"; function data() end`), Limits{})
	if err == nil || !strings.Contains(err.Error(), "not available") {
		t.Errorf("Run with require: %v", err)
	}
	if e := (*Error)(nil); !errors.As(err, &e) {
		t.Errorf("Run with require: %T is not a sandbox *Error", err)
	}
}
