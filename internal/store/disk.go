package store

// The disk cache (DiskCache) keeps converted outputs on disk between mounts, bounded in
// bytes, with a small index of their exact sizes so that a remounted tree can
// be listed and stat'ed without converting anything. It knows nothing of FUSE
// or of file formats.
//
// Layout of a cache folder (see PrepareCacheDir: the folder is meshfs's own):
//
//	meshfs-cache   the marker ("meshfs-cache 1"); CACHEDIR.TAG beside it
//	lock           flock(2)ed by the one process using the folder
//	index          append-only log: "put NAME CRC SIZE,SIZE…", "use NAME", "del NAME",
//	               "meta NAME CRC SIZE,SIZE… MCRC :BLOB [:DATA]" (an entry with a
//	               metadata blob, and its parts inline when small)
//	data/NAME      an entry's parts, concatenated (unless inline)
//	tmp/NAME.N     entries being written (renamed into data/ when complete)
//
// NAME is a hash of the key (source path, its dev, ino, size and mtime, the
// output) and of the cache's version string (converter version and options),
// in two halves: the source version's, then the output's (Cache.name), so a
// changed source, converter or option simply misses. Writes are atomic
// (temporary file, then rename) and not fsynced: a crash may leave a short or
// zeroed file, which the size and CRC-32C checks recorded in the index
// discard on its next read. Entries are evicted least recently used first,
// on insert, so the folder never holds more than its budget; an entry that is
// pinned (being read, or held open by a caller) is never evicted.
//
// An entry may carry a small metadata blob (PutMeta) kept in memory and
// inline in its index line, base64url-encoded with its own CRC-32C: a caller
// answers questions about a source version from it without reading any file
// (the mount keeps its structure scans there: chunk tables, scan errors),
// while the entry's parts stay on disk until asked for. The parts of such an
// entry, when small (MaxInline), are inline in the index line too (the DATA
// field, base64url, checked against CRC on every Get like a data file):
// one append to the index instead of a file created and renamed, which on
// ext4 costs 0.4 ms per entry, and the bytes are read back by offset, never
// held in memory. The blob counts against the budget with the parts, and
// is evicted with them.

import (
	"bufio"
	"bytes"
	"container/list"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/meshfs/meshfs/internal/source"
	"github.com/meshfs/meshfs/internal/store/stats"
)

// layoutVersion changes when the folder layout, index syntax or naming
// changes; a folder of another layout has its entries (only those) dropped
// on Open. 2: names in two halves (Cache.name).
const layoutVersion = "meshfs-diskcache 2"

// ErrLocked is returned by Open when another process uses the folder.
var ErrLocked = errors.New("cache folder is in use by another meshfs process")

// errTooBig is returned by Put for an entry that cannot fit in the budget
// (bigger than it, or the rest of the budget is pinned).
var errTooBig = errors.New("entry does not fit in the disk cache")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// maxMeta bounds an entry's metadata blob: PutMeta refuses a bigger one
// (ErrTooBig), and the index loader skips a longer line without buffering
// it, so a hostile index cannot make Open allocate more than its records
// justify.
const maxMeta = 1 << 20

// maxInline bounds the parts PutMeta stores inline in the index line;
// bigger ones go to a data file.
const maxInline = 64 << 10

// maxLine is the longest index line the loader reads: a "meta" line of
// MaxMeta bytes of blob and MaxInline of parts, with room for its other
// fields.
const maxLine = (maxMeta+maxInline)/3*4 + 8 + 512

// diskKey names one output of one version of its sources: the path of the
// file it is named after, that version (whose Deps is the digest of the
// other files read, source.Set.Sum: it outlives the process) and the
// output.
type diskKey struct {
	Path string
	source.Version
	Output string
}

type diskEntry struct {
	name  string
	sizes []int64
	total int64 // bytes of the data file
	sum   uint32
	// meta is the entry's metadata blob (nil without one); never modified
	// once set, so it is handed out without copying.
	meta []byte
	// inline entries have no data file: their parts are the base64url
	// text at byte off of the index file.
	inline bool
	off    int64
	pins   int
	elem   *list.Element
}

// cost is what the entry counts against the budget.
func (e *diskEntry) cost() int64 { return e.total + int64(len(e.meta)) }

// DiskCache is one open cache folder. Its methods are safe for concurrent use.
type DiskCache struct {
	dir     string
	max     int64
	version string
	lockf   *os.File

	mu      sync.Mutex
	ents    map[string]*diskEntry
	lru     *list.List // of *entry, most recently used first
	total   int64
	idx     *os.File // the index, open for appending
	rd      *os.File // the index, open for reading inline parts
	idxSize int64    // the index's size: where the next append lands
	records int
	// changed is set by anything the index does not show yet (an append,
	// an order changed in memory): Close rewrites it then.
	changed bool
	closed  bool

	hits, misses, damaged, evictions, puts atomic.Int64

	// names memoizes name, and folders and outputs its two halves: a
	// listing asks about every output of one source version within a
	// moment (its scan, each output's size and failure, the listing's
	// finality), some several times, and a SHA-256 with its hex string
	// costs more than the rest of the lookup. Each is bounded by emptying
	// it when full.
	namesMu sync.Mutex
	names   map[diskKey]string
	folders map[folderKey]string
	outputs map[string]string
}

// folderKey is what the name of a key shares with the other outputs of its
// source version: the path and the version.
type folderKey struct {
	Path string
	source.Version
}

// maxNames bounds each memo of names and name halves (about 200 bytes a
// name, 150 a folder, 50 an output).
const maxNames = 4096

// OpenDiskCache opens the cache folder dir (made or adopted by Prepare first),
// holding at most maxBytes of entries, for outputs made by converter
// version (and options) version. It fails with ErrLocked when another
// process holds the folder, and with ErrNotCache for a folder meshfs did
// not make.
func OpenDiskCache(dir string, maxBytes int64, version string) (*DiskCache, error) {
	if maxBytes <= 0 {
		return nil, fmt.Errorf("disk cache size must be positive, got %d", maxBytes)
	}
	if err := PrepareCacheDir(dir); err != nil {
		return nil, err
	}
	for _, d := range []string{filepath.Join(dir, "data"), filepath.Join(dir, "tmp")} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("disk cache: %w", err)
		}
	}
	lf, err := os.OpenFile(filepath.Join(dir, "lock"), os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("disk cache: %w", err)
	}
	if err := syscall.Flock(int(lf.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		lf.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, fmt.Errorf("disk cache %s: %w", dir, ErrLocked)
		}
		return nil, fmt.Errorf("disk cache %s: lock: %w", dir, err)
	}
	c := &DiskCache{dir: dir, max: maxBytes, version: version, lockf: lf, ents: map[string]*diskEntry{}, lru: list.New()}
	if err := c.load(); err != nil {
		lf.Close()
		return nil, err
	}
	return c, nil
}

// load replays the index, drops what it does not describe (leftover
// temporary files, files of entries never indexed) and rewrites it compactly
// unless it already is. Only names of the cache's own patterns are removed:
// anything else in data/ or tmp/ is left as it is, and never served.
func (c *DiskCache) load() error {
	ip := filepath.Join(c.dir, "index")
	compact := false
	if f, err := os.Open(ip); err == nil {
		var end int64
		end, compact = c.replay(f)
		if fi, err := f.Stat(); err != nil || fi.Size() != end {
			compact = false // a torn last line: appending would extend it
		}
		c.rd, c.idxSize = f, end
	}
	// Temporary files are never complete entries once no process holds
	// the lock.
	if ents, err := os.ReadDir(filepath.Join(c.dir, "tmp")); err == nil {
		for _, e := range ents {
			if e.Type().IsRegular() && isTempName(e.Name()) {
				os.Remove(filepath.Join(c.dir, "tmp", e.Name()))
			}
		}
	}
	present := map[string]bool{}
	if ents, err := os.ReadDir(filepath.Join(c.dir, "data")); err == nil {
		for _, e := range ents {
			if !e.Type().IsRegular() || !validName(e.Name()) {
				continue // not an entry file: not ours to remove or serve
			}
			if _, ok := c.ents[e.Name()]; !ok {
				os.Remove(filepath.Join(c.dir, "data", e.Name()))
				continue
			}
			present[e.Name()] = true
		}
	}
	for name, e := range c.ents {
		if !present[name] && !e.inline {
			c.drop(e)
			compact = false
		}
		if present[name] && e.inline {
			os.Remove(c.path(name)) // left by an older entry of the name
		}
	}
	// A budget smaller than last time: evict down to it now.
	for c.total > c.max && c.lru.Len() > 0 {
		e := c.lru.Back().Value.(*diskEntry)
		os.Remove(c.path(e.name))
		c.drop(e)
		compact = false
	}
	if compact {
		// Nothing to drop: append to the index as it is (rewriting an
		// index of inline entries copies all of it).
		f, err := os.OpenFile(ip, os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			return fmt.Errorf("disk cache index: %w", err)
		}
		c.idx, c.records = f, c.lru.Len()
		return nil
	}
	return c.rewriteIndex()
}

// replay reads the index line by line (never more than maxLine bytes at
// once: a longer line is skipped unread) and applies each valid record; an
// invalid one (unknown, malformed, or failing its checksum) is skipped. It
// returns the offset after the last whole line, and whether every line was
// the first valid record of its entry (the index is compact).
func (c *DiskCache) replay(r io.Reader) (end int64, compact bool) {
	br := bufio.NewReaderSize(r, 1<<16)
	first := true
	compact = true
	var pos int64   // offset of the current line
	var long []byte // a line longer than the reader's buffer, assembled
	skip := false   // the current line is longer than maxLine
	n := 0          // bytes of the current line so far
	for {
		chunk, err := br.ReadSlice('\n')
		n += len(chunk)
		if err == bufio.ErrBufferFull {
			if !skip && len(long)+len(chunk) > maxLine {
				long, skip = nil, true
			}
			if !skip {
				long = append(long, chunk...)
			}
			continue
		}
		if err != nil {
			// The last line may be torn (a crash mid-append): it has no
			// newline after it and is ignored.
			return pos, compact
		}
		start := pos
		pos += int64(n)
		n = 0
		ln := chunk[:len(chunk)-1]
		if long != nil {
			ln = append(long, ln...)
			long = nil
		}
		if skip || len(ln) > maxLine {
			skip, ln = false, nil
		}
		if first {
			if string(ln) != layoutVersion {
				return 0, false
			}
			first = false
			continue
		}
		if ln == nil || !c.apply(ln, start) {
			compact = false
		}
	}
}

// apply replays one index line, which starts at offset start of the index.
// It reports whether the line was the first valid record of an entry.
// Fields are split by single spaces (as written) without copying the line:
// an inline entry's parts, most of its line, are neither copied nor kept.
func (c *DiskCache) apply(ln []byte, start int64) bool {
	f := bytes.SplitN(ln, []byte{' '}, 8)
	if len(f) < 2 || !validName(string(f[1])) {
		return false
	}
	name := string(f[1])
	// put and meta lines start with the entry's CRC and part sizes.
	entryFields := func() (sum uint32, sizes []int64, total int64, ok bool) {
		s, err := strconv.ParseUint(string(f[2]), 16, 32)
		if err != nil {
			return 0, nil, 0, false
		}
		sizes, total, ok = parseSizes(string(f[3]))
		return uint32(s), sizes, total, ok
	}
	switch kind := string(f[0]); {
	case kind == "put" && len(f) == 4:
		sum, sizes, total, ok := entryFields()
		if !ok {
			return false
		}
		return c.insert(&diskEntry{name: name, sizes: sizes, total: total, sum: sum})
	case kind == "meta" && (len(f) == 6 || len(f) == 7):
		sum, sizes, total, ok := entryFields()
		if !ok {
			return false
		}
		msum, err := strconv.ParseUint(string(f[4]), 16, 32)
		b64, ok := bytes.CutPrefix(f[5], []byte{':'})
		if err != nil || !ok || base64.RawURLEncoding.DecodedLen(len(b64)) > maxMeta {
			return false
		}
		meta := make([]byte, base64.RawURLEncoding.DecodedLen(len(b64)))
		n, err := base64.RawURLEncoding.Decode(meta, b64)
		if err != nil || crc32.Checksum(meta[:n], castagnoli) != uint32(msum) {
			return false // a damaged line: never served
		}
		e := &diskEntry{name: name, sizes: sizes, total: total, sum: sum, meta: meta[:n:n]}
		if len(f) == 7 {
			// Inline parts: checked against sum when read (Get), as a
			// data file is; here only their length.
			data, ok := bytes.CutPrefix(f[6], []byte{':'})
			if !ok || total > maxInline || int64(len(data)) != int64(base64.RawURLEncoding.EncodedLen(int(total))) {
				return false
			}
			e.inline, e.off = true, start+int64(len(ln)-len(data))
		}
		return c.insert(e)
	case kind == "use" && len(f) == 2:
		if e := c.ents[name]; e != nil {
			c.lru.MoveToFront(e.elem)
		}
	case kind == "del" && len(f) == 2:
		if e := c.ents[name]; e != nil {
			c.drop(e)
		}
	}
	return false
}

// noParts is the sizes field of an entry without parts (a blob alone).
const noParts = "-"

// parseSizes parses "SIZE,SIZE…" (each non-negative, the sum not
// overflowing), or noParts.
func parseSizes(s string) ([]int64, int64, bool) {
	if s == noParts {
		return []int64{}, 0, true
	}
	var sizes []int64
	var total int64
	for _, s := range strings.Split(s, ",") {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n < 0 || total+n < total {
			return nil, 0, false
		}
		sizes = append(sizes, n)
		total += n
	}
	return sizes, total, true
}

// insert adds a replayed entry, replacing one of the same name (c.mu held
// or not yet shared); it reports whether there was none.
func (c *DiskCache) insert(e *diskEntry) bool {
	old := c.ents[e.name]
	if old != nil {
		c.drop(old)
	}
	e.elem = c.lru.PushFront(e)
	c.ents[e.name] = e
	c.total += e.cost()
	return old == nil
}

func validName(s string) bool {
	if len(s) != 40 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// rewriteIndex writes the index afresh (least recently used first, so a
// replay restores the order) and opens it for appending. Inline parts are
// copied from the current index; an entry whose parts cannot be read is
// dropped.
func (c *DiskCache) rewriteIndex() error {
	tmp := filepath.Join(c.dir, "index.tmp")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return fmt.Errorf("disk cache index: %w", err)
	}
	w := bufio.NewWriterSize(f, 1<<16)
	pos := int64(len(layoutVersion) + 1)
	w.WriteString(layoutVersion + "\n")
	offs := map[*diskEntry]int64{}
	var lost []*diskEntry
	var text []byte
	for el := c.lru.Back(); el != nil; el = el.Prev() {
		e := el.Value.(*diskEntry)
		ln := recordLine(e)
		if !e.inline {
			w.WriteString(ln + "\n")
			pos += int64(len(ln)) + 1
			continue
		}
		text = slices.Grow(text[:0], base64.RawURLEncoding.EncodedLen(int(e.total)))[:base64.RawURLEncoding.EncodedLen(int(e.total))]
		if c.rd == nil {
			lost = append(lost, e)
			continue
		}
		if _, err := c.rd.ReadAt(text, e.off); err != nil {
			lost = append(lost, e)
			continue
		}
		w.WriteString(ln + " :")
		pos += int64(len(ln)) + 2
		offs[e] = pos
		w.Write(text)
		w.WriteByte('\n')
		pos += int64(len(text)) + 1
	}
	err = w.Flush()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("disk cache index: %w", err)
	}
	ip := filepath.Join(c.dir, "index")
	if err := os.Rename(tmp, ip); err != nil {
		return fmt.Errorf("disk cache index: %w", err)
	}
	if c.idx != nil {
		c.idx.Close()
		c.idx = nil
	}
	if c.rd != nil {
		c.rd.Close()
		c.rd = nil
	}
	for _, e := range lost {
		c.drop(e)
	}
	for e, off := range offs {
		e.off = off
	}
	c.idxSize, c.records, c.changed = pos, c.lru.Len(), false
	if c.rd, err = os.Open(ip); err != nil {
		// Inline entries cannot be read back: forget them.
		for _, e := range slices.Collect(maps.Values(c.ents)) {
			if e.inline {
				c.drop(e)
			}
		}
		return fmt.Errorf("disk cache index: %w", err)
	}
	f, err = os.OpenFile(ip, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("disk cache index: %w", err)
	}
	c.idx = f
	return nil
}

// recordLine is an entry's index line without its inline parts (the DATA
// field) and newline.
func recordLine(e *diskEntry) string { return string(appendRecord(nil, e)) }

// appendRecord appends recordLine's text to b. Built by hand (no fmt, no
// intermediate strings): a cold walk saves one line per mesh.
func appendRecord(b []byte, e *diskEntry) []byte {
	if e.meta != nil {
		b = append(b, "meta "...)
	} else {
		b = append(b, "put "...)
	}
	b = append(b, e.name...)
	b = append(b, ' ')
	b = appendHex8(b, e.sum)
	b = append(b, ' ')
	if len(e.sizes) == 0 {
		b = append(b, noParts...)
	}
	for i, s := range e.sizes {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, s, 10)
	}
	if e.meta != nil {
		// The blob's field starts with ':' so that an empty blob is still
		// a field.
		b = append(b, ' ')
		b = appendHex8(b, crc32.Checksum(e.meta, castagnoli))
		b = append(b, " :"...)
		b = base64.RawURLEncoding.AppendEncode(b, e.meta)
	}
	return b
}

// appendHex8 appends v as 8 lowercase hex digits (fmt's %08x).
func appendHex8(b []byte, v uint32) []byte {
	const digits = "0123456789abcdef"
	for shift := 28; shift >= 0; shift -= 4 {
		b = append(b, digits[v>>uint(shift)&0xf])
	}
	return b
}

// record appends one line to the index (c.mu held) and reports whether it
// was written whole. A failed append only costs the entry's recency or
// presence after a remount, except for an inline entry, whose parts the
// line is.
func (c *DiskCache) record(line string) bool {
	if c.idx == nil {
		return false
	}
	n, err := c.idx.WriteString(line)
	c.idxSize += int64(n)
	c.records++
	c.changed = true
	if err != nil {
		// Where the next append lands is unknown now: rewrite.
		c.rewriteIndex()
		return false
	}
	if c.records > 2*c.lru.Len()+1024 {
		c.rewriteIndex()
	}
	return true
}

// drop forgets e (c.mu held); the caller removes its file.
func (c *DiskCache) drop(e *diskEntry) {
	if c.ents[e.name] != e {
		return
	}
	delete(c.ents, e.name)
	c.lru.Remove(e.elem)
	c.total -= e.cost()
}

func (c *DiskCache) path(name string) string { return filepath.Join(c.dir, "data", name) }

// name is the entry name of a key: 20 hex digits naming its source
// version (the path, its dev, ino, size, mtime and Deps) with the cache's
// layout and version, then 20 naming its output, each a truncated SHA-256
// (80 bits: a collision among a million source versions, or among the
// outputs' names, has odds below 10^-12). The halves are remembered apart,
// so that the outputs of one source version hash it once: a remount's
// listing of a mesh folder looks up its scan and each output's size and
// failure, five keys or more, and a tree of 10 000 meshes would outgrow a
// memo of whole names.
func (c *DiskCache) name(k diskKey) string {
	c.namesMu.Lock()
	n, ok := c.names[k]
	c.namesMu.Unlock()
	if ok {
		return n
	}
	fk := folderKey{k.Path, k.Version}
	c.namesMu.Lock()
	f, fok := c.folders[fk]
	o, ook := c.outputs[k.Output]
	c.namesMu.Unlock()
	if !fok {
		f = c.folderHash(fk)
	}
	if !ook {
		o = outputHash(k.Output)
	}
	n = f + o
	c.namesMu.Lock()
	defer c.namesMu.Unlock()
	if c.names = bounded(c.names); !fok {
		c.folders = bounded(c.folders)
		c.folders[fk] = f
	}
	if !ook {
		c.outputs = bounded(c.outputs)
		c.outputs[k.Output] = o
	}
	c.names[k] = n
	return n
}

// bounded is memo m, emptied (or made) when it holds maxNames entries or
// none.
func bounded[K comparable](m map[K]string) map[K]string {
	if m == nil || len(m) >= maxNames {
		return make(map[K]string, 64)
	}
	return m
}

// hashName is name without the memos.
func (c *DiskCache) hashName(k diskKey) string {
	return c.folderHash(folderKey{k.Path, k.Version}) + outputHash(k.Output)
}

// folderHash is the first half of a name: the source version's.
func (c *DiskCache) folderHash(k folderKey) string {
	h := sha256.New()
	var num [8]byte
	w := func(s string) {
		binary.LittleEndian.PutUint64(num[:], uint64(len(s)))
		h.Write(num[:])
		io.WriteString(h, s)
	}
	u := func(v uint64) {
		binary.LittleEndian.PutUint64(num[:], v)
		h.Write(num[:])
	}
	w(layoutVersion)
	w(c.version)
	w(k.Path)
	u(k.Dev)
	u(k.Ino)
	u(uint64(k.Size))
	u(uint64(k.MtimeNs))
	u(k.Deps)
	return hex.EncodeToString(h.Sum(nil)[:10])
}

// outputHash is the second half of a name: the output's.
func outputHash(output string) string {
	h := sha256.Sum256([]byte("output\x00" + output))
	return hex.EncodeToString(h[:10])
}

// sizes returns the sizes of an entry's parts from the index, without
// reading it.
func (c *DiskCache) sizes(k diskKey) ([]int64, bool) {
	name := c.name(k)
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.ents[name]
	if e == nil {
		return nil, false
	}
	return append([]int64(nil), e.sizes...), true
}

// meta returns an entry's metadata blob (which the caller must not modify)
// and part sizes from memory, without reading any file; ok is false when
// the key has no entry, or one stored without a blob. The entry becomes the
// most recently used, in memory only: the order reaches the index when it
// is next rewritten (at Close), which spares a remount that looks up
// thousands of blobs as many index appends.
func (c *DiskCache) meta(k diskKey) (meta []byte, sizes []int64, ok bool) {
	name := c.name(k)
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.ents[name]
	if e == nil || e.meta == nil || c.closed {
		return nil, nil, false
	}
	if c.lru.Front() != e.elem {
		c.lru.MoveToFront(e.elem)
		c.changed = true
	}
	return e.meta, append([]int64(nil), e.sizes...), true
}

// get returns an entry's parts, read whole and checked against the index. A
// damaged entry (short, long, or failing its checksum) is removed and
// reported as a miss.
func (c *DiskCache) get(k diskKey) ([][]byte, bool) {
	if parts, inline, ok := c.getInline(k); inline {
		return parts, ok
	}
	h, ok := c.pin(k)
	if !ok {
		return nil, false
	}
	defer h.Close()
	// Check the length before allocating: the file may be short (a crash
	// before its data reached the disk) or not what the index says.
	fi, err := h.Stat()
	if err != nil || fi.Size() != h.e.total {
		c.discard(h.e)
		c.hits.Add(-1)
		c.misses.Add(1)
		return nil, false
	}
	buf := make([]byte, h.e.total+1)
	n, err := io.ReadFull(h.File, buf)
	if err != io.ErrUnexpectedEOF || int64(n) != h.e.total || crc32.Checksum(buf[:n], castagnoli) != h.e.sum {
		c.discard(h.e)
		c.hits.Add(-1)
		c.misses.Add(1)
		return nil, false
	}
	parts := make([][]byte, len(h.e.sizes))
	off := int64(0)
	for i, s := range h.e.sizes {
		parts[i] = buf[off : off+s : off+s]
		off += s
	}
	return parts, true
}

// getInline is Get of an inline entry (inline false: the key has none).
// The parts are read from the index and checked as a data file's are.
func (c *DiskCache) getInline(k diskKey) (parts [][]byte, inline, ok bool) {
	name := c.name(k)
	c.mu.Lock()
	e := c.ents[name]
	if e == nil || !e.inline || c.closed {
		c.mu.Unlock()
		return nil, false, false
	}
	text := make([]byte, base64.RawURLEncoding.EncodedLen(int(e.total)))
	_, err := c.rd.ReadAt(text, e.off)
	c.lru.MoveToFront(e.elem)
	c.changed = true
	c.mu.Unlock()
	buf := make([]byte, e.total)
	if err == nil {
		var n int
		n, err = base64.RawURLEncoding.Decode(buf, text)
		if err == nil && int64(n) != e.total {
			err = io.ErrUnexpectedEOF
		}
	}
	if err != nil || crc32.Checksum(buf, castagnoli) != e.sum {
		c.discard(e)
		c.misses.Add(1)
		return nil, true, false
	}
	c.hits.Add(1)
	parts = make([][]byte, len(e.sizes))
	off := int64(0)
	for i, s := range e.sizes {
		parts[i] = buf[off : off+s : off+s]
		off += s
	}
	return parts, true, true
}

// diskHandle is an entry's open file, pinned (never evicted) until Close. Its
// bytes are not verified: Get is the checked read.
type diskHandle struct {
	*os.File
	c *DiskCache
	e *diskEntry
}

// Sizes are the entry's part sizes.
func (h *diskHandle) Sizes() []int64 { return h.e.sizes }

// Close unpins the entry and closes the file.
func (h *diskHandle) Close() error {
	h.c.mu.Lock()
	h.e.pins--
	h.c.mu.Unlock()
	return h.File.Close()
}

// pin opens an entry and pins it until the handle is closed. An inline
// entry has no file of its own: pin misses (Get reads it).
func (c *DiskCache) pin(k diskKey) (*diskHandle, bool) {
	name := c.name(k)
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.ents[name]
	if e == nil || e.inline || c.closed {
		c.misses.Add(1)
		return nil, false
	}
	f, err := os.Open(c.path(name))
	if err != nil {
		c.drop(e)
		c.record("del " + name + "\n")
		c.misses.Add(1)
		return nil, false
	}
	e.pins++
	c.lru.MoveToFront(e.elem)
	c.record("use " + name + "\n")
	c.hits.Add(1)
	return &diskHandle{File: f, c: c, e: e}, true
}

func (c *DiskCache) discard(e *diskEntry) {
	c.damaged.Add(1)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ents[e.name] == e {
		os.Remove(c.path(e.name))
		c.drop(e)
		c.record("del " + e.name + "\n")
	}
}

// putParts stores an entry's parts, replacing any previous entry of the key, and
// evicts least recently used entries until the cache is within its budget.
func (c *DiskCache) putParts(k diskKey, parts [][]byte) error { return c.put(k, parts, nil) }

// putMeta is Put for an entry that also carries the metadata blob meta
// (at most MaxMeta bytes; nil is an empty blob), which Meta returns from
// memory. The caller must not modify meta afterwards.
func (c *DiskCache) putMeta(k diskKey, parts [][]byte, meta []byte) error {
	if len(meta) > maxMeta {
		return errTooBig
	}
	if meta == nil {
		meta = []byte{}
	}
	return c.put(k, parts, meta)
}

// parallelSum is the entry size from which put checksums beside the write.
const parallelSum = 4 << 20

func (c *DiskCache) put(k diskKey, parts [][]byte, meta []byte) error {
	name := c.name(k)
	var total int64
	sizes := make([]int64, len(parts))
	for i, p := range parts {
		sizes[i] = int64(len(p))
		total += int64(len(p))
	}
	if total+int64(len(meta)) > c.max {
		return errTooBig
	}
	checksum := func() uint32 {
		sum := uint32(0)
		for _, p := range parts {
			sum = crc32.Update(sum, castagnoli, p)
		}
		return sum
	}
	e := &diskEntry{name: name, sizes: sizes, total: total, meta: meta}
	var f *os.File
	var line string
	e.inline = meta != nil && total <= maxInline
	if !e.inline && total >= parallelSum {
		// A big entry (a .glb about to be passed through, waited for by
		// its first reader): checksum on another CPU while this one writes.
		sumc := make(chan uint32, 1)
		go func() { sumc <- checksum() }()
		var err error
		f, err = c.writeTemp(name, parts)
		e.sum = <-sumc
		if err != nil {
			return err
		}
	} else {
		e.sum = checksum()
	}
	if e.inline {
		data := make([]byte, 0, total)
		for _, p := range parts {
			data = append(data, p...)
		}
		enc := base64.RawURLEncoding
		b := make([]byte, 0, 128+len(e.name)+enc.EncodedLen(len(meta))+enc.EncodedLen(len(data)))
		b = appendRecord(b, e)
		b = append(b, " :"...)
		b = enc.AppendEncode(b, data)
		line = string(append(b, '\n'))
	} else if f == nil {
		var err error
		if f, err = c.writeTemp(name, parts); err != nil {
			return err
		}
	}
	removeTemp := func() {
		if f != nil {
			os.Remove(f.Name())
		}
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		removeTemp()
		return errors.New("disk cache closed")
	}
	// Make room first, never evicting a pinned entry (nor the one replaced:
	// its file is renamed over, which open handles survive).
	old := c.ents[name]
	need := c.total + total + int64(len(meta))
	if old != nil {
		need -= old.cost()
	}
	var victims []*diskEntry
	for el := c.lru.Back(); el != nil && need > c.max; el = el.Prev() {
		e := el.Value.(*diskEntry)
		if e.pins > 0 || e == old {
			continue
		}
		victims = append(victims, e)
		need -= e.cost()
	}
	if need > c.max {
		removeTemp()
		return errTooBig
	}
	for _, v := range victims {
		if !v.inline {
			os.Remove(c.path(v.name))
		}
		c.drop(v)
		c.record("del " + v.name + "\n")
		c.evictions.Add(1)
	}
	if f != nil {
		if err := os.Rename(f.Name(), c.path(name)); err != nil {
			removeTemp()
			return err
		}
	} else if old != nil && !old.inline {
		os.Remove(c.path(name)) // open handles keep reading it
	}
	if old != nil {
		e.pins = old.pins // the handles' Close unpins the newest entry
		c.drop(old)
	}
	e.elem = c.lru.PushFront(e)
	c.ents[name] = e
	c.total += e.cost()
	if !e.inline {
		c.record(recordLine(e) + "\n")
		c.puts.Add(1)
		return nil
	}
	// The line is the entry: its parts start after the other fields.
	e.off = c.idxSize + int64(strings.LastIndexByte(line, ':')+1)
	if !c.record(line) {
		c.drop(e)
		return errors.New("disk cache: index append failed")
	}
	c.puts.Add(1)
	return nil
}

// writeTemp writes parts to a new temporary file (writeParts), closed.
func (c *DiskCache) writeTemp(name string, parts [][]byte) (*os.File, error) {
	f, err := os.CreateTemp(filepath.Join(c.dir, "tmp"), name+tempSuffix)
	if err != nil {
		return nil, err
	}
	err = writeParts(f, parts)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return nil, err
	}
	return f, nil
}

// remove drops an entry (a pinned one's open handles keep reading it).
func (c *DiskCache) remove(k diskKey) {
	name := c.name(k)
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.ents[name]; e != nil {
		os.Remove(c.path(name))
		c.drop(e)
		c.record("del " + name + "\n")
	}
}

// stats returns the counters.
func (c *DiskCache) stats() stats.Disk {
	c.mu.Lock()
	defer c.mu.Unlock()
	return stats.Disk{Dir: c.dir, Budget: c.max, Bytes: c.total, Entries: len(c.ents),
		Hits: c.hits.Load(), Misses: c.misses.Load(), Puts: c.puts.Load(),
		Evictions: c.evictions.Load(), Damaged: c.damaged.Load()}
}

// Close compacts the index and releases the folder.
func (c *DiskCache) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	var err error
	if c.changed {
		err = c.rewriteIndex()
	}
	if c.idx != nil {
		c.idx.Close()
		c.idx = nil
	}
	if c.rd != nil {
		c.rd.Close()
		c.rd = nil
	}
	c.lockf.Close() // releases the flock
	return err
}
