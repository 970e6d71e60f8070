// Package stats is what the mount's .meshfs folder shows: stats.json (a
// store's figures beside the mount's counters) and errors.txt (the broken
// meshes), their names and owner.
package stats

import (
	"encoding/json"
	"os"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/meshfs/meshfs/internal/store/failures"
)

// Stats is the contents of .meshfs/stats.json.
type Stats struct {
	Source  string  `json:"source"`
	UptimeS float64 `json:"uptime_s"`
	// Conversions counts geometry conversions by "format/output" (glb, obj;
	// obj also makes the mtl).
	Conversions map[string]int64 `json:"conversions"`
	// Scans and ChunkLoads count structure scans and decompressed chunks.
	Scans      map[string]int64 `json:"scans"`
	ChunkLoads map[string]int64 `json:"chunk_loads"`
	// Errors counts failed scans, conversions and chunk loads; ErrorsBy
	// splits them by "format/output".
	Errors   int64            `json:"errors"`
	ErrorsBy map[string]int64 `json:"errors_by"`
	// ScanFailures and ConversionFailures count the meshes known to be
	// broken (their present version), by what failed: the structure scan,
	// or the conversion (the scan succeeded). Failing lists them, relative
	// to the source, in order, the first 100 of them;
	// .meshfs/errors.txt lists all, with each one's error. Known means
	// failed in this mount (a reader, a listing, the pre-warmer) or in an
	// earlier one for a mesh listed in this one (the disk cache's records).
	ScanFailures       int      `json:"scan_failures"`
	ConversionFailures int      `json:"conversion_failures"`
	Failing            []string `json:"failing"`
	Cache              struct {
		Hits        int64 `json:"hits"`
		Misses      int64 `json:"misses"`
		BytesCached int64 `json:"bytes_cached"`
		Budget      int64 `json:"budget_bytes"`
		Entries     int   `json:"entries"`
		// Held counts the outputs held for their readers whatever the
		// budget, HeldOutside the bytes of those the budget does not
		// keep; HoldWaits counts loads that waited for room among them
		// and HoldsReleased the holds let go early to make it.
		Held          int   `json:"held"`
		HeldOutside   int64 `json:"held_outside_bytes"`
		HoldWaits     int64 `json:"hold_waits"`
		HoldsReleased int64 `json:"holds_released"`
	} `json:"cache"`
	ConversionLatency Latency `json:"conversion_latency"`
	// OpenHandles counts files open through the daemon; under no_open
	// (OpenMode "no_open") the kernel opens files without asking, so it
	// stays 0 and means nothing.
	OpenHandles int64  `json:"open_handles"`
	OpenMode    string `json:"open_mode"`
	// PassthroughOpens counts opens handed to the kernel's passthrough (the
	// open-handles mode, as root, Linux ≥ 6.9); Passthrough is false once
	// the kernel was seen not to take them.
	PassthroughOpens int64 `json:"passthrough_opens"`
	Passthrough      bool  `json:"passthrough"`
	// Requests counts FUSE requests by kind since the mount (FORGET needs
	// no answer; the others are round trips).
	Requests map[string]int64 `json:"fuse_requests,omitempty"`
	// RequestMillis is the time the daemon spent answering them, by kind
	// (from dispatch to reply; requests answered at once overlap).
	RequestMillis map[string]float64 `json:"fuse_request_ms,omitempty"`
	Sniffs        int64              `json:"sniffs"`
	// ScansAhead counts scans made in the background ahead of a walker
	// (part of scans or disk_loads' "format/scan").
	ScansAhead int64 `json:"scans_ahead"`
	// SniffsAhead counts sniffs made in the background for the folders a
	// walker enters next (ahead.go).
	SniffsAhead int64 `json:"sniffs_ahead"`
	// HeaderPushes counts header.json files stored in the kernel's page
	// cache with their folder's listing, so a reader's first read needs
	// no request (dircache.go pushHeader).
	HeaderPushes int64 `json:"header_pushes"`
	// DiskSavesPending counts converted outputs still being saved to the
	// disk cache (a big one waits for the readers to pause).
	DiskSavesPending int64 `json:"disk_saves_pending"`
	// OnePass counts first .glb conversions whose scan was made in the
	// same pass as the decoding (formats that can: UNIGINE).
	OnePass       int64 `json:"one_pass_scans"`
	Notifications int64 `json:"kernel_notifications"`
	WatchErrors   int64 `json:"watch_errors"`
	// DiskLoads counts geometry outputs loaded from the disk cache (not
	// conversions), by "format/output", structure scans an earlier mount
	// persisted there ("format/scan": not scans) and textures' PNGs
	// ("texture/png": not texture_pngs).
	DiskLoads map[string]int64 `json:"disk_loads"`
	// TexturePNGs counts textures decoded and PNG-encoded: once per
	// texture version for NAME.EXT.png and every .glb embedding it.
	TexturePNGs int64 `json:"texture_pngs"`
	// DiskCache is the persistent cache's state (absent without one).
	DiskCache *Disk `json:"disk_cache,omitempty"`
	// Goroutines is the daemon's number of goroutines (the leak tests
	// compare it before and after many opens).
	Goroutines int `json:"goroutines"`
	// Prewarm is the background pre-warmer's progress (absent without it).
	Prewarm *Prewarm `json:"prewarm,omitempty"`
	// Broken is every mesh known broken, for errors.txt.
	Broken []failures.Failure `json:"-"`
}

// FailingMax bounds Stats.Failing (errors.txt has them all).
const FailingMax = 100

// Counts are the mount's counters: files open through the daemon, opens
// handed to passthrough, header.json files pushed with their listing,
// kernel notifications, watcher errors, and (for tests) listings made for
// the kernel and FLUSH requests on outputs.
type Counts struct {
	OpenHandles, PassthroughOpens, HeaderPushes atomic.Int64
	Notifications, WatchErrors                  atomic.Int64
	Listings, Flushes                           atomic.Int64
}

// MountCounts is what the FUSE layer counts, which Stats reports beside
// the store's own figures.
type MountCounts struct {
	*Counts
	Start                           time.Time
	NoOpen, Passthrough             bool
	Sniffs, ScansAhead, SniffsAhead int64
	Requests                        map[string]int64
	RequestMillis                   map[string]float64
}

// The files of the mount's .meshfs folder, in listing order: the
// statistics, and one line per broken mesh (Failures).
const (
	StatsName  = "stats.json"
	ErrorsName = "errors.txt"
)

// MetaNames are the files of .meshfs.
func MetaNames() []string { return []string{StatsName, ErrorsName} }

// MetaOwner is the owner, group and mode of .meshfs (dir) or of a file in
// it: the daemon's user and group, readable by that user alone, since
// errors.txt and stats.json name broken meshes anywhere in the source and
// quote their errors (bytes of the file among them), which users who may
// not read those files must not see.
func MetaOwner(dir bool) (uid, gid, mode uint32) {
	mode = syscall.S_IFREG | 0o400
	if dir {
		mode = syscall.S_IFDIR | 0o500
	}
	return uint32(os.Geteuid()), uint32(os.Getegid()), mode
}

// MetaFile returns the renderer of .meshfs/name: stats.json of stats, or
// errors.txt of the failures known now.
func MetaFile(name string, stats func() Stats) (func() []byte, bool) {
	switch name {
	case StatsName:
		return func() []byte {
			b, err := json.MarshalIndent(stats(), "", "  ")
			if err != nil {
				return []byte("{}\n")
			}
			return append(b, '\n')
		}, true
	case ErrorsName:
		return func() []byte { st := stats(); return failures.ErrorsText(st.Source, st.Broken) }, true
	}
	return nil, false
}

// Latency summarises the recent load durations of one label.
type Latency struct {
	Count int64   `json:"count"`
	P50Ms float64 `json:"p50_ms"`
	P99Ms float64 `json:"p99_ms"`
	MaxMs float64 `json:"max_ms"`
}

// Disk is a snapshot of the disk cache's counters.
type Disk struct {
	Dir       string `json:"dir"`
	Budget    int64  `json:"budget_bytes"`
	Bytes     int64  `json:"bytes"`
	Entries   int    `json:"entries"`
	Hits      int64  `json:"hits"`
	Misses    int64  `json:"misses"`
	Puts      int64  `json:"puts"`
	Evictions int64  `json:"evictions"`
	Damaged   int64  `json:"damaged"`
}

// Prewarm is the pre-warmer's progress in stats.json.
type Prewarm struct {
	Running bool `json:"running"`
	// Meshes found so far (the walk runs ahead of the conversions).
	Found int64 `json:"found"`
	// Done meshes were converted (or already cached); Failed ones failed.
	Done   int64 `json:"done"`
	Cached int64 `json:"already_cached"`
	Failed int64 `json:"failed"`
	// Waits counts the times it stood aside for a reader.
	Waits int64 `json:"waits"`
}
