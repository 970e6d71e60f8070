package requests

import (
	"slices"
	"sync"
	"testing"
	"time"
)

// recorder is a Release that remembers what it released.
type recorder struct {
	mu  sync.Mutex
	got []int
}

func (r *recorder) release(h int) {
	r.mu.Lock()
	r.got = append(r.got, h)
	r.mu.Unlock()
}

func (r *recorder) released() []int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Sorted(slices.Values(r.got))
}

func TestHeld(t *testing.T) {
	var r recorder
	h := &Held[int]{Idle: time.Hour, Release: r.release}
	h.Keep(1, 10, 100)
	if _, ok := h.Take(1, 11); ok {
		t.Fatal("took a handle at another offset")
	}
	if v, ok := h.Take(1, 10); !ok || v != 100 || h.Len() != 0 {
		t.Fatalf("take: %v %v, %d left", v, ok, h.Len())
	}
	// One handle per place: a second one is released at once.
	h.Keep(1, 20, 101)
	h.Keep(1, 20, 102)
	h.Keep(2, 20, 103)
	h.Keep(1, 30, 104)
	if got := r.released(); !slices.Equal(got, []int{102}) {
		t.Fatalf("released %v, want [102]", got)
	}
	h.Drop(1)
	if got := r.released(); !slices.Equal(got, []int{101, 102, 104}) || h.Len() != 1 {
		t.Fatalf("after Drop(1): released %v, %d held", got, h.Len())
	}
	h.Close()
	h.Keep(3, 0, 105)
	if got := r.released(); !slices.Equal(got, []int{101, 102, 103, 104, 105}) || h.Len() != 0 {
		t.Fatalf("after Close: released %v, %d held", got, h.Len())
	}
}

func TestHeldIdle(t *testing.T) {
	var r recorder
	h := &Held[int]{Idle: 10 * time.Millisecond, Release: r.release}
	h.Keep(1, 1, 7)
	deadline := time.Now().Add(5 * time.Second)
	for h.Len() != 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if got := r.released(); !slices.Equal(got, []int{7}) {
		t.Fatalf("idle handle: released %v, want [7]", got)
	}
	if _, ok := h.Take(1, 1); ok {
		t.Fatal("took a released handle")
	}
}

func TestListing(t *testing.T) {
	ended := 0
	l := &Listing[string]{List: []string{"a", "b"}, AtEnd: func() { ended++ }}
	var got []string
	e, first, ok := l.Next()
	if !first || !ok {
		t.Fatal("first entry")
	}
	got = append(got, e)
	for {
		e, first, ok := l.Next()
		if first {
			t.Fatal("first again")
		}
		if !ok {
			break
		}
		got = append(got, e)
	}
	if !slices.Equal(got, []string{"a", "b"}) || ended != 0 {
		t.Fatalf("got %v, ended %d", got, ended)
	}
	l.Seek(1)
	if e, _, ok := l.Next(); !ok || e != "b" {
		t.Fatalf("after Seek(1): %q %v", e, ok)
	}
	l.Next()
	l.Next()
	if ended != 1 {
		t.Fatalf("AtEnd ran %d times, want once at the second end", ended)
	}
	l.Seek(99)
	if _, _, ok := l.Next(); ok {
		t.Fatal("an entry past the end")
	}
}

func TestSnapshot(t *testing.T) {
	n := 0
	s := &Snapshot{Render: func() []byte { n++; return []byte{byte(n)} }}
	if s.Last() != nil {
		t.Fatal("a rendering before any")
	}
	a, _ := s.Take(false)
	b, _ := s.Take(false)
	c, _ := s.Take(true)
	if a[0] != 1 || b[0] != 1 || c[0] != 2 || s.Last()[0] != 2 {
		t.Fatalf("renderings %v %v %v", a, b, c)
	}
}

// A listing read in requests without a handle: one handle opened, held
// between its requests at the offset each ends at, released at its end; an
// open that fails holds nothing, a read that fails releases.
func TestHeldServe(t *testing.T) {
	rec := &recorder{}
	h := &Held[int]{Idle: time.Minute, Release: rec.release}
	opens := 0
	open := func() (int, bool) { opens++; return opens, true }
	read := func(next uint64, ok bool) func(int) (uint64, bool) {
		return func(int) (uint64, bool) { return next, ok }
	}
	h.Serve(1, 0, open, read(10, true))
	h.Serve(1, 10, open, read(20, true))
	if opens != 1 || h.Len() != 1 {
		t.Fatalf("%d opens, %d held: one handle serves the listing", opens, h.Len())
	}
	h.Serve(1, 20, open, read(20, true)) // the end
	if h.Len() != 0 || !slices.Equal(rec.released(), []int{1}) {
		t.Fatalf("at the end: %d held, released %v", h.Len(), rec.released())
	}
	h.Serve(2, 0, func() (int, bool) { return 0, false }, read(5, true))
	h.Serve(3, 0, open, read(0, false))
	if h.Len() != 0 || !slices.Equal(rec.released(), []int{1, 2}) {
		t.Fatalf("after errors: %d held, released %v", h.Len(), rec.released())
	}
}

func TestPanicLine(t *testing.T) {
	if got := PanicLine("boom\ngoroutine 1 [running]:\n..."); got != "boom […]" {
		t.Fatalf("%q", got)
	}
	if got := PanicLine(42); got != "42" {
		t.Fatalf("%q", got)
	}
}
