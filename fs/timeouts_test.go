package fs

import (
	"testing"
	"time"
)

func TestKernelTimeouts(t *testing.T) {
	if e, a, n := (timeouts{Watched: true}).Kernel(); e != watchedTimeout || a != watchedTimeout || n != defaultTimeout {
		t.Fatalf("defaults: %v %v %v", e, a, n)
	}
	if e, a, n := (timeouts{Entry: -1, Attr: 2 * time.Second, Negative: -1}).Kernel(); e != 0 || a != 2*time.Second || n != 0 {
		t.Fatalf("configured: %v %v %v", e, a, n)
	}
}

func TestTimeouts(t *testing.T) {
	for _, c := range []struct {
		t                   timeouts
		entry, attr, uE, uA time.Duration
	}{
		{timeouts{Watched: true}, watchedTimeout, watchedTimeout, defaultTimeout, defaultTimeout},
		{timeouts{}, defaultTimeout, defaultTimeout, 0, 0},
		{timeouts{Attr: 3 * time.Second, Watched: true}, watchedTimeout, 3 * time.Second, defaultTimeout, 0},
		{timeouts{Entry: -1, Attr: -1}, -1, -1, 0, 0},
	} {
		e, a := c.t.Effective()
		ue, ua := c.t.Unwatched()
		if shown := c.t.UnwatchedAttr(); shown != c.uA && (c.uA != 0 || shown != c.attr) {
			t.Errorf("%+v: a change under a failed watch shows after %v", c.t, shown)
		}
		if e != c.entry || a != c.attr || ue != c.uE || ua != c.uA {
			t.Errorf("%+v: effective %v %v, unwatched %v %v; want %v %v, %v %v", c.t, e, a, ue, ua, c.entry, c.attr, c.uE, c.uA)
		}
	}
}
