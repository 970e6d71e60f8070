package fs

import (
	"slices"
	"testing"
	"time"
)

func TestDropOrder(t *testing.T) {
	held, neg := dropOrder([]string{"header.json", "m.glb", "chunks"}, []string{"header.json", "chunks", "m.glb", "m.obj", "error.txt"}, "header.json")
	if len(held) != 3 || held[2] != "header.json" || !slices.Contains(held, "m.glb") || !slices.Contains(held, "chunks") {
		t.Fatalf("held %v: header.json must come last", held)
	}
	if !slices.Equal(neg, []string{"m.obj", "error.txt"}) {
		t.Fatalf("negative %v", neg)
	}
	if held, neg := dropOrder(nil, nil, "header.json"); len(held) != 0 || len(neg) != 0 {
		t.Fatalf("empty folder: %v %v", held, neg)
	}
}

func TestBeside(t *testing.T) {
	order := make(chan string, 2)
	beside(func() { order <- "first" }, func() { order <- "rest" })
	if got := <-order; got != "first" {
		t.Fatalf("%s ran first", got)
	}
	if got := <-order; got != "rest" {
		t.Fatalf("then %s", got)
	}
	// A first notification that waits: the caller goes on after notifyWait.
	block, done := make(chan struct{}), make(chan struct{})
	start := time.Now()
	beside(func() { <-block }, func() { close(done) })
	if d := time.Since(start); d < notifyWait || d > 10*notifyWait {
		t.Fatalf("returned after %v, want about %v", d, notifyWait)
	}
	close(block)
	<-done
}
