// Package diskcache keeps converted outputs on disk between mounts, bounded in
// bytes, with a small index of their exact sizes so that a remounted tree can
// be listed and stat'ed without converting anything. It knows nothing of FUSE
// or of file formats.
//
// Layout of a cache folder:
//
//	lock        flock(2)ed by the one process using the folder
//	index       append-only log: "put NAME CRC SIZE,SIZE…", "use NAME", "del NAME",
//	            "meta NAME CRC SIZE,SIZE… MCRC :BLOB" (an entry with a metadata blob)
//	data/NAME   an entry's parts, concatenated
//	tmp/        entries being written (renamed into data/ when complete)
//
// NAME is a hash of the key (source path, its dev, ino, size and mtime, the
// output) and of the cache's version string (converter version and options),
// so a changed source, converter or option simply misses. Writes are atomic
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
// while the entry's parts stay on disk until asked for. The blob counts
// against the budget with the parts, and is evicted with them.
package diskcache

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
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
)

// layoutVersion changes when the folder layout or index syntax changes; a
// folder of another layout is emptied on Open.
const layoutVersion = "meshfs-diskcache 1"

// ErrLocked is returned by Open when another process uses the folder.
var ErrLocked = errors.New("cache folder is in use by another meshfs process")

// ErrTooBig is returned by Put for an entry that cannot fit in the budget
// (bigger than it, or the rest of the budget is pinned).
var ErrTooBig = errors.New("entry does not fit in the disk cache")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// MaxMeta bounds an entry's metadata blob: PutMeta refuses a bigger one
// (ErrTooBig), and the index loader skips a longer line without buffering
// it, so a hostile index cannot make Open allocate more than its records
// justify.
const MaxMeta = 1 << 20

// maxLine is the longest index line the loader reads: a "meta" line of
// MaxMeta bytes of blob, with room for its other fields.
const maxLine = MaxMeta/3*4 + 8 + 256

// Key names one output of one version of one source file.
type Key struct {
	Path     string
	Dev, Ino uint64
	Size     int64
	MtimeNs  int64
	// Gen is the caller's generation of the files the source depends on.
	Gen    uint64
	Output string
}

type entry struct {
	name  string
	sizes []int64
	total int64 // bytes of the data file
	sum   uint32
	// meta is the entry's metadata blob (nil without one); never modified
	// once set, so it is handed out without copying.
	meta []byte
	pins int
	elem *list.Element
}

// cost is what the entry counts against the budget.
func (e *entry) cost() int64 { return e.total + int64(len(e.meta)) }

// Cache is one open cache folder. Its methods are safe for concurrent use.
type Cache struct {
	dir     string
	max     int64
	version string
	lockf   *os.File

	mu      sync.Mutex
	ents    map[string]*entry
	lru     *list.List // of *entry, most recently used first
	total   int64
	idx     *os.File
	records int
	closed  bool

	hits, misses, damaged, evictions, puts atomic.Int64
}

// Open opens (creating it if need be) the cache folder dir, holding at most
// maxBytes of entries, for outputs made by converter version (and options)
// version. It fails with ErrLocked when another process holds the folder.
func Open(dir string, maxBytes int64, version string) (*Cache, error) {
	if maxBytes <= 0 {
		return nil, fmt.Errorf("disk cache size must be positive, got %d", maxBytes)
	}
	for _, d := range []string{dir, filepath.Join(dir, "data"), filepath.Join(dir, "tmp")} {
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
	c := &Cache{dir: dir, max: maxBytes, version: version, lockf: lf, ents: map[string]*entry{}, lru: list.New()}
	if err := c.load(); err != nil {
		lf.Close()
		return nil, err
	}
	return c, nil
}

// load replays the index, drops what it does not describe (leftover
// temporary files, files of entries never indexed) and rewrites it compactly.
func (c *Cache) load() error {
	ip := filepath.Join(c.dir, "index")
	if f, err := os.Open(ip); err == nil {
		c.replay(f)
		f.Close()
	}
	// Temporary files are never complete entries once no process holds
	// the lock.
	if ents, err := os.ReadDir(filepath.Join(c.dir, "tmp")); err == nil {
		for _, e := range ents {
			os.Remove(filepath.Join(c.dir, "tmp", e.Name()))
		}
	}
	present := map[string]bool{}
	if ents, err := os.ReadDir(filepath.Join(c.dir, "data")); err == nil {
		for _, e := range ents {
			if _, ok := c.ents[e.Name()]; !ok {
				os.Remove(filepath.Join(c.dir, "data", e.Name()))
				continue
			}
			present[e.Name()] = true
		}
	}
	for name, e := range c.ents {
		if !present[name] {
			c.drop(e)
		}
	}
	// A budget smaller than last time: evict down to it now.
	for c.total > c.max && c.lru.Len() > 0 {
		e := c.lru.Back().Value.(*entry)
		os.Remove(c.path(e.name))
		c.drop(e)
	}
	return c.rewriteIndex()
}

// replay reads the index line by line (never more than maxLine bytes at
// once: a longer line is skipped unread) and applies each valid record; an
// invalid one (unknown, malformed, or failing its checksum) is skipped.
func (c *Cache) replay(r io.Reader) {
	br := bufio.NewReaderSize(r, 1<<16)
	first := true
	var long []byte // a line longer than the reader's buffer, assembled
	skip := false   // the current line is longer than maxLine
	for {
		chunk, err := br.ReadSlice('\n')
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
			return
		}
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
				return
			}
			first = false
			continue
		}
		if ln != nil {
			c.apply(ln)
		}
	}
}

// apply replays one index line.
func (c *Cache) apply(ln []byte) {
	f := strings.Fields(string(ln))
	if len(f) < 2 || !validName(f[1]) {
		return
	}
	switch {
	case f[0] == "put" && len(f) == 4:
		sum, err := strconv.ParseUint(f[2], 16, 32)
		if err != nil {
			return
		}
		sizes, total, ok := parseSizes(f[3])
		if !ok {
			return
		}
		c.insert(&entry{name: f[1], sizes: sizes, total: total, sum: uint32(sum)})
	case f[0] == "meta" && len(f) == 6:
		sum, err := strconv.ParseUint(f[2], 16, 32)
		if err != nil {
			return
		}
		sizes, total, ok := parseSizes(f[3])
		if !ok {
			return
		}
		msum, err := strconv.ParseUint(f[4], 16, 32)
		b64, ok := strings.CutPrefix(f[5], ":")
		if err != nil || !ok || base64.RawURLEncoding.DecodedLen(len(b64)) > MaxMeta {
			return
		}
		meta, err := base64.RawURLEncoding.DecodeString(b64)
		if err != nil || crc32.Checksum(meta, castagnoli) != uint32(msum) {
			return // a damaged line: never served
		}
		c.insert(&entry{name: f[1], sizes: sizes, total: total, sum: uint32(sum), meta: meta})
	case f[0] == "use":
		if e := c.ents[f[1]]; e != nil {
			c.lru.MoveToFront(e.elem)
		}
	case f[0] == "del":
		if e := c.ents[f[1]]; e != nil {
			c.drop(e)
		}
	}
}

// parseSizes parses "SIZE,SIZE…" (each non-negative, the sum not
// overflowing).
func parseSizes(s string) ([]int64, int64, bool) {
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
// or not yet shared).
func (c *Cache) insert(e *entry) {
	if old := c.ents[e.name]; old != nil {
		c.drop(old)
	}
	e.elem = c.lru.PushFront(e)
	c.ents[e.name] = e
	c.total += e.cost()
}

func validName(s string) bool {
	if len(s) != 40 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil
}

// rewriteIndex writes the index afresh (least recently used first, so a
// replay restores the order) and opens it for appending.
func (c *Cache) rewriteIndex() error {
	var buf bytes.Buffer
	buf.WriteString(layoutVersion + "\n")
	for el := c.lru.Back(); el != nil; el = el.Prev() {
		buf.WriteString(putRecord(el.Value.(*entry)))
	}
	tmp := filepath.Join(c.dir, "index.tmp")
	if err := os.WriteFile(tmp, buf.Bytes(), 0o600); err != nil {
		return fmt.Errorf("disk cache index: %w", err)
	}
	ip := filepath.Join(c.dir, "index")
	if err := os.Rename(tmp, ip); err != nil {
		return fmt.Errorf("disk cache index: %w", err)
	}
	if c.idx != nil {
		c.idx.Close()
	}
	f, err := os.OpenFile(ip, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return fmt.Errorf("disk cache index: %w", err)
	}
	c.idx, c.records = f, c.lru.Len()
	return nil
}

func putRecord(e *entry) string {
	var sb strings.Builder
	kind := "put"
	if e.meta != nil {
		kind = "meta"
	}
	fmt.Fprintf(&sb, "%s %s %08x ", kind, e.name, e.sum)
	for i, s := range e.sizes {
		if i > 0 {
			sb.WriteByte(',')
		}
		sb.WriteString(strconv.FormatInt(s, 10))
	}
	if e.meta != nil {
		// The blob's field starts with ':' so that an empty blob is still
		// a field.
		fmt.Fprintf(&sb, " %08x :", crc32.Checksum(e.meta, castagnoli))
		sb.WriteString(base64.RawURLEncoding.EncodeToString(e.meta))
	}
	sb.WriteByte('\n')
	return sb.String()
}

// record appends one line to the index (c.mu held). A failed append only
// costs the entry's recency or presence after a remount.
func (c *Cache) record(line string) {
	if c.idx == nil {
		return
	}
	c.idx.WriteString(line)
	c.records++
	if c.records > 2*c.lru.Len()+1024 {
		c.rewriteIndex()
	}
}

// drop forgets e (c.mu held); the caller removes its file.
func (c *Cache) drop(e *entry) {
	if c.ents[e.name] != e {
		return
	}
	delete(c.ents, e.name)
	c.lru.Remove(e.elem)
	c.total -= e.cost()
}

func (c *Cache) path(name string) string { return filepath.Join(c.dir, "data", name) }

// name hashes a key with the cache's version.
func (c *Cache) name(k Key) string {
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
	u(k.Gen)
	w(k.Output)
	return hex.EncodeToString(h.Sum(nil)[:20])
}

// Sizes returns the sizes of an entry's parts from the index, without
// reading it.
func (c *Cache) Sizes(k Key) ([]int64, bool) {
	name := c.name(k)
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.ents[name]
	if e == nil {
		return nil, false
	}
	return append([]int64(nil), e.sizes...), true
}

// Meta returns an entry's metadata blob (which the caller must not modify)
// and part sizes from memory, without reading any file; ok is false when
// the key has no entry, or one stored without a blob. The entry becomes the
// most recently used, in memory only: the order reaches the index when it
// is next rewritten (at Close), which spares a remount that looks up
// thousands of blobs as many index appends.
func (c *Cache) Meta(k Key) (meta []byte, sizes []int64, ok bool) {
	name := c.name(k)
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.ents[name]
	if e == nil || e.meta == nil || c.closed {
		return nil, nil, false
	}
	c.lru.MoveToFront(e.elem)
	return e.meta, append([]int64(nil), e.sizes...), true
}

// Get returns an entry's parts, read whole and checked against the index. A
// damaged entry (short, long, or failing its checksum) is removed and
// reported as a miss.
func (c *Cache) Get(k Key) ([][]byte, bool) {
	h, ok := c.Pin(k)
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

// Handle is an entry's open file, pinned (never evicted) until Close. Its
// bytes are not verified: Get is the checked read.
type Handle struct {
	*os.File
	c *Cache
	e *entry
}

// Sizes are the entry's part sizes.
func (h *Handle) Sizes() []int64 { return h.e.sizes }

// Close unpins the entry and closes the file.
func (h *Handle) Close() error {
	h.c.mu.Lock()
	h.e.pins--
	h.c.mu.Unlock()
	return h.File.Close()
}

// Pin opens an entry and pins it until the handle is closed.
func (c *Cache) Pin(k Key) (*Handle, bool) {
	name := c.name(k)
	c.mu.Lock()
	defer c.mu.Unlock()
	e := c.ents[name]
	if e == nil || c.closed {
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
	return &Handle{File: f, c: c, e: e}, true
}

func (c *Cache) discard(e *entry) {
	c.damaged.Add(1)
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ents[e.name] == e {
		os.Remove(c.path(e.name))
		c.drop(e)
		c.record("del " + e.name + "\n")
	}
}

// Put stores an entry's parts, replacing any previous entry of the key, and
// evicts least recently used entries until the cache is within its budget.
func (c *Cache) Put(k Key, parts [][]byte) error { return c.put(k, parts, nil) }

// PutMeta is Put for an entry that also carries the metadata blob meta
// (at most MaxMeta bytes; nil is an empty blob), which Meta returns from
// memory. The caller must not modify meta afterwards.
func (c *Cache) PutMeta(k Key, parts [][]byte, meta []byte) error {
	if len(meta) > MaxMeta {
		return ErrTooBig
	}
	if meta == nil {
		meta = []byte{}
	}
	return c.put(k, parts, meta)
}

func (c *Cache) put(k Key, parts [][]byte, meta []byte) error {
	name := c.name(k)
	var total int64
	sum := uint32(0)
	sizes := make([]int64, len(parts))
	for i, p := range parts {
		sizes[i] = int64(len(p))
		total += int64(len(p))
		sum = crc32.Update(sum, castagnoli, p)
	}
	if total+int64(len(meta)) > c.max {
		return ErrTooBig
	}
	f, err := os.CreateTemp(filepath.Join(c.dir, "tmp"), name+".*")
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<16)
	for _, p := range parts {
		w.Write(p)
	}
	err = w.Flush()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return err
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		os.Remove(f.Name())
		return errors.New("disk cache closed")
	}
	// Make room first, never evicting a pinned entry (nor the one replaced:
	// its file is renamed over, which open handles survive).
	old := c.ents[name]
	need := c.total + total + int64(len(meta))
	if old != nil {
		need -= old.cost()
	}
	var victims []*entry
	for el := c.lru.Back(); el != nil && need > c.max; el = el.Prev() {
		e := el.Value.(*entry)
		if e.pins > 0 || e == old {
			continue
		}
		victims = append(victims, e)
		need -= e.cost()
	}
	if need > c.max {
		os.Remove(f.Name())
		return ErrTooBig
	}
	for _, e := range victims {
		os.Remove(c.path(e.name))
		c.drop(e)
		c.record("del " + e.name + "\n")
		c.evictions.Add(1)
	}
	if err := os.Rename(f.Name(), c.path(name)); err != nil {
		os.Remove(f.Name())
		return err
	}
	e := &entry{name: name, sizes: sizes, total: total, sum: sum, meta: meta}
	if old != nil {
		e.pins = old.pins // the handles' Close unpins the newest entry
		c.drop(old)
	}
	e.elem = c.lru.PushFront(e)
	c.ents[name] = e
	c.total += e.cost()
	c.record(putRecord(e))
	c.puts.Add(1)
	return nil
}

// Remove drops an entry (a pinned one's open handles keep reading it).
func (c *Cache) Remove(k Key) {
	name := c.name(k)
	c.mu.Lock()
	defer c.mu.Unlock()
	if e := c.ents[name]; e != nil {
		os.Remove(c.path(name))
		c.drop(e)
		c.record("del " + name + "\n")
	}
}

// Stats is a snapshot of the cache's counters.
type Stats struct {
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

// Stats returns the counters.
func (c *Cache) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return Stats{Dir: c.dir, Budget: c.max, Bytes: c.total, Entries: len(c.ents),
		Hits: c.hits.Load(), Misses: c.misses.Load(), Puts: c.puts.Load(),
		Evictions: c.evictions.Load(), Damaged: c.damaged.Load()}
}

// Close compacts the index and releases the folder.
func (c *Cache) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil
	}
	c.closed = true
	err := c.rewriteIndex()
	if c.idx != nil {
		c.idx.Close()
		c.idx = nil
	}
	c.lockf.Close() // releases the flock
	return err
}
