package store

import (
	"runtime/debug"
	"testing"
)

// TestPacer: GOGC is the pacer's while at least one big conversion runs
// and the process's own again after the last ends; small conversions and a
// pacer without a setting leave it alone, and an end called twice counts once.
func TestPacer(t *testing.T) {
	orig := debug.SetGCPercent(400)
	defer debug.SetGCPercent(orig)
	gogc := func() int { v := debug.SetGCPercent(-1); debug.SetGCPercent(v); return v }

	p := newPacer(100)
	small := p.Begin(bigConversionSize - 1)
	if got := gogc(); got != 400 {
		t.Fatalf("a small conversion set GOGC %d", got)
	}
	a := p.Begin(bigConversionSize)
	b := p.Begin(64 << 20)
	if got := gogc(); got != 100 {
		t.Fatalf("GOGC %d during big conversions, want 100", got)
	}
	a()
	a()
	if got := gogc(); got != 100 {
		t.Fatalf("GOGC %d while one big conversion still runs, want 100", got)
	}
	b()
	small()
	if got := gogc(); got != 400 {
		t.Fatalf("GOGC %d after the big conversions, want 400 again", got)
	}

	off := newPacer(0)
	off.Begin(64 << 20)()
	if got := gogc(); got != 400 {
		t.Fatalf("a pacer without a setting changed GOGC to %d", got)
	}
}
