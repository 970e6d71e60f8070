package store

import (
	"runtime"
	"strings"
	"time"

	"github.com/meshfs/meshfs/internal/store/stats"
)

// Stats returns the statistics of the mount of the store's tree now: the store's,
// and m's.
func (s *Store) Stats(m stats.MountCounts) stats.Stats {
	cs := s.cache.Stats()
	st := stats.Stats{
		Source:      s.tree,
		UptimeS:     time.Since(m.Start).Seconds(),
		Conversions: map[string]int64{},
		Scans:       map[string]int64{},
		ChunkLoads:  map[string]int64{},
		DiskLoads:   map[string]int64{},
		ErrorsBy:    cs.Failed,
		Errors:      cs.Failures,
	}
	for label, n := range cs.Loads {
		switch {
		case strings.HasSuffix(label, DiskSuffix):
			st.DiskLoads[strings.TrimSuffix(label, DiskSuffix)] = n
		case IsConversion(label):
			st.Conversions[label] = n
		case label == LabelPNG:
			st.TexturePNGs = n
		case strings.HasSuffix(label, "/"+OutScan):
			st.Scans[label] = n
		default:
			st.ChunkLoads[label] = n
		}
	}
	st.Failing = []string{}
	st.Broken = s.failed.Current(s.tree)
	for _, fl := range st.Broken {
		if fl.Scan {
			st.ScanFailures++
		} else {
			st.ConversionFailures++
		}
		if len(st.Failing) < stats.FailingMax {
			st.Failing = append(st.Failing, fl.Rel)
		}
	}
	c := &st.Cache
	c.Hits, c.Misses = cs.Hits, cs.Misses
	c.BytesCached, c.Budget, c.Entries = cs.BytesCached, cs.Budget, cs.Entries
	c.Held, c.HeldOutside, c.HoldWaits, c.HoldsReleased = cs.Held, cs.HeldOutside, cs.HoldWaits, cs.HoldsReleased
	s.mu.Lock()
	st.ConversionLatency = s.convLatency.Summary()
	s.mu.Unlock()
	st.Goroutines = runtime.NumGoroutine()
	st.OpenHandles, st.PassthroughOpens, st.Passthrough = m.OpenHandles.Load(), m.PassthroughOpens.Load(), m.Passthrough
	st.OpenMode = "handles"
	if m.NoOpen {
		st.OpenMode = "no_open"
	}
	st.Requests, st.RequestMillis = m.Requests, m.RequestMillis
	st.Sniffs, st.ScansAhead, st.SniffsAhead, st.HeaderPushes = m.Sniffs, m.ScansAhead, m.SniffsAhead, m.HeaderPushes.Load()
	st.DiskSavesPending = s.disk.Pending()
	st.OnePass = s.onePass.Load()
	st.Notifications, st.WatchErrors = m.Notifications.Load(), m.WatchErrors.Load()
	st.DiskCache = s.disk.Stats()
	if w := s.warmer(); w != nil {
		st.Prewarm = w.progress()
	}
	// A disk entry found damaged after its load was labelled a disk load
	// is converted after all: count it as the conversion it was.
	for label, n := range s.disk.Fallbacks() {
		st.Conversions[label] += n
		st.DiskLoads[label] -= n
	}
	return st
}
