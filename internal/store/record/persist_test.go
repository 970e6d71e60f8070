package record

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/tfever/luasandbox"
)

// TestPersistableScriptLimits: a sandbox budget's failure belongs to the
// files (persisted), its deadline's does not, whatever else wraps them.
func TestPersistableScriptLimits(t *testing.T) {
	budget := &luasandbox.Error{Kind: luasandbox.ErrLimit, Msg: "script ran more than 1000000 instructions"}
	late := &luasandbox.Error{Kind: luasandbox.ErrTimeout, Msg: "script ran past its deadline of 1s"}
	for _, c := range []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("x.mdl: %w", errors.Join(budget, decode.ErrLimit)), true},
		{fmt.Errorf("x.mdl: %w", errors.Join(late, decode.ErrLimit)), false},
		{fmt.Errorf("x.mdl: %w", errors.Join(budget, context.DeadlineExceeded)), false},
		{fmt.Errorf("x.ply: %w", decode.ErrLimit), false},
	} {
		if got := Persistable(c.err); got != c.want {
			t.Errorf("Persistable(%v) = %v, want %v", c.err, got, c.want)
		}
	}
}
