package fs

import (
	"testing"
	"time"

	"github.com/meshfs/meshfs/internal/source"
)

func ver(size int64) source.Version {
	return source.Version{Ident: source.Ident{File: source.File{Dev: 1, Ino: 2}, Size: size}}
}

// dropped returns a drop function and a channel it signals.
func dropped() (func(), chan struct{}) {
	ch := make(chan struct{}, 4)
	return func() { ch <- struct{}{} }, ch
}

func wantDrop(t *testing.T, ch chan struct{}, want bool) {
	t.Helper()
	select {
	case <-ch:
		if !want {
			t.Fatal("dropped the kernel's view of a version it holds")
		}
	case <-time.After(50 * time.Millisecond):
		if want {
			t.Fatal("the kernel's view of another version was not dropped")
		}
	}
}

func TestPinnedNodeStandsForOneVersion(t *testing.T) {
	k := &kernelView{Pinned: true}
	a, b := ver(1), ver(2)
	if !k.MayTell(b) || !k.Tell(a) {
		t.Fatal("a node told nothing refused a version")
	}
	if !k.Tell(a) || !k.MayTell(a) {
		t.Fatal("refused the version it stands for")
	}
	if k.MayTell(b) || k.Tell(b) {
		t.Fatal("a pinned node told another version's size")
	}
	if !k.Told().Same(a) {
		t.Fatalf("told %+v, want %+v", k.Told(), a)
	}
	k.Retell(b)
	if !k.Told().Same(b) {
		t.Fatal("Retell did not record")
	}
}

func TestHandleNodeTellsAnyVersion(t *testing.T) {
	k := &kernelView{}
	a, b := ver(1), ver(2)
	if !k.Tell(a) || !k.Tell(b) || !k.Told().Same(b) {
		t.Fatal("per-handle node refused a new version")
	}
}

func TestOpenedKeepsPagesOfTheSameVersionOnly(t *testing.T) {
	k := &kernelView{}
	a, b := ver(1), ver(2)
	drop, ch := dropped()
	if k.Opened(a, drop) {
		t.Fatal("first open kept pages the kernel never got")
	}
	wantDrop(t, ch, false)
	if !k.Opened(a, drop) {
		t.Fatal("second open of the same version dropped its pages")
	}
	wantDrop(t, ch, false)
	if k.Opened(b, drop) {
		t.Fatal("open of a new version kept the old pages")
	}
	wantDrop(t, ch, true)
	k.Served(a)
	if k.Opened(b, drop) {
		t.Fatal("pages served of another version kept")
	}
}

func TestStoreUnasked(t *testing.T) {
	k := &kernelView{Pinned: true}
	a, b := ver(1), ver(2)
	drop, ch := dropped()
	if !k.WantsPages(a) {
		t.Fatal("a fresh node refused pages")
	}
	k.Stored(a, a, drop)
	wantDrop(t, ch, false)
	if k.WantsPages(a) {
		t.Fatal("pages stored twice")
	}
	if k.WantsPages(b) {
		t.Fatal("pages of another version stored in a node told a")
	}
	// Changed while storing: the kernel must drop what was stored.
	k2 := &kernelView{Pinned: true}
	k2.Stored(a, b, drop)
	wantDrop(t, ch, true)
}

func TestPassthroughOneBackingFile(t *testing.T) {
	var p passState
	a, b := ver(1), ver(2)
	for range 2 {
		if !p.Try(a) {
			t.Fatal("passthrough opens of one version refused")
		}
	}
	if p.Try(b) || !p.BusyOther(b) || p.BusyOther(a) {
		t.Fatal("another version's backing file allowed while a's is open")
	}
	if stale, _ := p.Fallback(a); !stale {
		t.Fatal("a page-cached open allowed beside passthrough opens")
	}
	p.Release()
	p.Release()
	stale, done := p.Fallback(b)
	if stale {
		t.Fatal("page-cached open refused on an idle node")
	}
	if p.Try(b) {
		t.Fatal("passthrough allowed beside a page-cached open")
	}
	done()
	done()
	if !p.Try(b) {
		t.Fatal("passthrough refused once the page-cached open ended")
	}
}
