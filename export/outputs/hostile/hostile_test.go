package hostile

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/formats"
	"github.com/meshfs/meshfs/export/outputs"
)

// The heap bound: the bytes each conversion of a mesh's folder allocates
// (the scan with header.json and chunks/; NAME.glb, NAME.obj, the preview,
// each made on its own as the mount makes them: produce) stay within
//
//	heapMultiple × size + binaryConstant   (GEM, UNIGINE)
//	heapMultiple × size + luaConstant      (Transport Fever .msh, .ani)
//
// where size is the bytes of the variant's files plus what a lying size
// claims. Allocation is measured as the TotalAlloc difference around each
// conversion, run one at a time; it bounds the peak heap the conversion
// adds from above (the peak cannot exceed what was allocated).
//
// Measured over the full corpus (MESHFS_HOSTILE=full, about 53 000
// variants): the worst multiple is 21.3× (the 1.2 MiB BPLY map whose
// submesh count became 2^31: 25.3 MiB allocated, mostly the whole-file
// read and the vertex table it still builds); a binary file's fixed cost is
// under 0.5 MiB. Lua's constant is the sandbox's budget: a script may build
// 64 MiB of strings and 1M instructions' worth of tables and return 4 MiB
// of strings, and a .msh runs twice (Scan and Decode). After the fixes the
// corpus led to (testdata/regress), the worst seen is 239 MiB for a 4 KiB
// script that fills 100 000 small tables: the interpreter's own cost, twice,
// before the decoder refuses the result (tfever.MaxRegions). Scripts cut by
// the sandbox's one-second deadline get further on faster machines, which
// the constant leaves twice that room for.
//
// NAME.preview.png adds a fixed cost per mesh, bounded by the preview's
// side, not the source: previewBytes at the default 256² (the picture, its
// z-buffer and the PNG's buffers, with room).
const (
	heapMultiple   = 32
	binaryConstant = 4 << 20
	luaConstant    = 512 << 20
	previewBytes   = 16 * outputs.DefaultPreviewSize * outputs.DefaultPreviewSize
)

// bound is the most v's conversion may allocate.
func bound(v *variant) uint64 {
	c := uint64(binaryConstant)
	if isLua(v.format) {
		c = luaConstant
	}
	return heapMultiple*uint64(v.size()) + c
}

// hangAfter is how long a conversion may run before it counts as hung; each
// runs under a deadline (Limits.Timeout) shorter than that.
const (
	hangAfter = 5 * time.Second
	deadline  = 4 * time.Second
)

func full() bool { return os.Getenv("MESHFS_HOSTILE") == "full" }

// outcome is what one conversion did.
type outcome struct {
	panicked any
	stack    []byte
	hung     bool
	alloc    uint64
	took     time.Duration
	errs     []error
	problems []string
}

func (o *outcome) failed() bool { return o.panicked != nil || o.hung || len(o.problems) > 0 }

func (o *outcome) String() string {
	switch {
	case o.panicked != nil:
		return fmt.Sprintf("panic: %v\n%s", o.panicked, o.stack)
	case o.hung:
		return fmt.Sprintf("no result after %v", hangAfter)
	}
	return strings.Join(o.problems, "; ")
}

// convert runs v through produce (the store's functions), checking every
// output as it comes, and measures the allocation of each of its
// conversions (the largest counts).
func convert(v *variant) *outcome {
	m := v.mesh()
	m.Limits.Timeout = deadline
	o := &outcome{}
	var mu sync.Mutex // problems are added by the conversion goroutine
	problem := func(format string, args ...any) {
		mu.Lock()
		o.problems = append(o.problems, fmt.Sprintf(format, args...))
		mu.Unlock()
	}
	seen := map[string]bool{}
	fixed := map[string]bool{outputs.ChunksDir + "/": true}
	for _, e := range m.Entries() { // the folder table: a model's LOD files too
		if !e.Dir {
			fixed[e.Name] = true
		}
	}
	emit := func(name string, b []byte) error {
		if seen[name] {
			problem("%q produced twice (two chunks whose names sanitise alike?)", name)
		}
		seen[name] = true
		if c, ok := strings.CutPrefix(name, outputs.ChunksDir+"/"); ok && c != "" {
			if c != decode.SafeName(c) || strings.ContainsAny(c, "/\x00") {
				problem("chunk name %q is not a safe path element", c)
			}
		} else if !fixed[name] {
			problem("unexpected output %q", name)
		}
		switch {
		case name == outputs.HeaderName && !json.Valid(b):
			problem("header.json is not JSON")
		case name == m.GLBName() && (len(b) < 12 || string(b[:4]) != "glTF" || binary.LittleEndian.Uint32(b[8:]) != uint32(len(b))):
			problem(".glb has no valid GLB header")
		}
		return nil
	}

	start := time.Now()
	done := make(chan error, 1)
	go func() {
		defer func() {
			if r := recover(); r != nil {
				o.panicked, o.stack = r, debug.Stack()
				done <- nil
			}
		}()
		most, _, err := produce(context.Background(), m, emit)
		o.alloc = most
		done <- err
	}()
	select {
	case err := <-done:
		o.took = time.Since(start)
		o.errs = flatten(err)
	case <-time.After(hangAfter):
		o.hung = true
		return o
	}
	if !seen[outputs.HeaderName] {
		problem("no header.json")
	}
	if len(o.errs) > 0 && !seen[outputs.ErrorName] {
		problem("errors without error.txt")
	}
	for _, err := range o.errs {
		// Every error names the file (or its companion, whose name
		// starts with the file's).
		if !strings.Contains(err.Error(), v.main) {
			problem("error does not name the file: %.300s", err)
		}
	}
	if lim := bound(v); o.alloc > lim {
		problem("allocated %d bytes for %d bytes of input, beyond the bound of %d", o.alloc, v.size(), lim)
	}
	return o
}

// flatten lists the errors errors.Join joined.
func flatten(err error) []error {
	if err == nil {
		return nil
	}
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// saveDir is where failing variants are written, made on first use.
var saveDir = sync.OnceValues(func() (string, error) {
	if d := os.Getenv("MESHFS_HOSTILE_SAVE"); d != "" {
		return d, os.MkdirAll(d, 0o755)
	}
	return os.MkdirTemp("", "meshfs-hostile-")
})

// save writes v as a regression fixture folder: its files and variant.txt.
func save(t testing.TB, v *variant) string {
	dir, err := saveDir()
	if err != nil {
		t.Log(err)
		return ""
	}
	d := filepath.Join(dir, v.format.Name()+"-"+hash8(v))
	os.MkdirAll(d, 0o755)
	for name, b := range v.files {
		os.WriteFile(filepath.Join(d, name), b, 0o644)
	}
	meta := fmt.Sprintf("desc: %s\nformat: %s\nmain: %s\nlie: %d\n", oneLine(v.desc), v.format.Name(), v.main, v.lie)
	os.WriteFile(filepath.Join(d, "variant.txt"), []byte(meta), 0o644)
	return d
}

func oneLine(s string) string {
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "?"), "\n", " ")
}

// stats gathers what the report shows.
type stats struct {
	variants, failed, errored map[string]int
	worstRatio                struct {
		ratio       float64
		alloc, size uint64
		desc        string
	}
	worstAlloc struct {
		alloc, size uint64
		desc        string
	}
	slowest struct {
		took time.Duration
		desc string
	}
	// per format: the largest allocation, and the largest excess over
	// heapMultiple × size (the constant the bound needs).
	maxAlloc, maxExcess map[string]int64
}

func newStats() *stats {
	return &stats{variants: map[string]int{}, failed: map[string]int{}, errored: map[string]int{},
		maxAlloc: map[string]int64{}, maxExcess: map[string]int64{}}
}

func (s *stats) add(v *variant, o *outcome) {
	f := v.format.Name()
	s.variants[f]++
	if o.failed() {
		s.failed[f]++
	}
	if len(o.errs) > 0 {
		s.errored[f]++
	}
	if o.hung || o.panicked != nil {
		return
	}
	size := uint64(v.size())
	s.maxAlloc[f] = max(s.maxAlloc[f], int64(o.alloc))
	s.maxExcess[f] = max(s.maxExcess[f], int64(o.alloc)-heapMultiple*int64(size))
	// The multiple is judged on inputs large enough for it to show over
	// the fixed cost of a conversion.
	if r := float64(o.alloc) / float64(size); size >= 16<<10 && r > s.worstRatio.ratio {
		s.worstRatio.ratio, s.worstRatio.alloc, s.worstRatio.size, s.worstRatio.desc = r, o.alloc, size, v.desc
	}
	if o.alloc > s.worstAlloc.alloc {
		s.worstAlloc.alloc, s.worstAlloc.size, s.worstAlloc.desc = o.alloc, size, v.desc
	}
	if o.took > s.slowest.took {
		s.slowest.took, s.slowest.desc = o.took, v.desc
	}
}

func (s *stats) report(t *testing.T, seed uint64, elapsed time.Duration) {
	names := slices.Sorted(func(yield func(string) bool) {
		for k := range s.variants {
			if !yield(k) {
				return
			}
		}
	})
	total := 0
	var b strings.Builder
	for _, n := range names {
		total += s.variants[n]
		fmt.Fprintf(&b, "  %-22s %6d variants, %6d with error.txt, %d failed; largest allocation %.1f MiB, largest excess over %d × size %.1f MiB\n",
			n, s.variants[n], s.errored[n], s.failed[n], float64(s.maxAlloc[n])/(1<<20), heapMultiple, float64(s.maxExcess[n])/(1<<20))
	}
	t.Logf("hostile corpus: %d variants, seed %d, in %v (panics and hangs count as failed)\n%s"+
		"  worst allocation multiple (inputs ≥ 16 KiB): %.1f× (%d bytes for %d): %s\n"+
		"  largest allocation: %d bytes (%.1f MiB) for %d bytes: %s\n"+
		"  slowest: %v: %s\n  bound: %d × size + %d MiB (GEM, UNIGINE) or %d MiB (Lua)",
		total, seed, elapsed.Round(time.Millisecond), b.String(),
		s.worstRatio.ratio, s.worstRatio.alloc, s.worstRatio.size, oneLine(s.worstRatio.desc),
		s.worstAlloc.alloc, float64(s.worstAlloc.alloc)/(1<<20), s.worstAlloc.size, oneLine(s.worstAlloc.desc),
		s.slowest.took.Round(time.Millisecond), oneLine(s.slowest.desc),
		heapMultiple, binaryConstant>>20, luaConstant>>20)
}

// sample picks at most n of vs, deterministically for a given rng.
func sample(rng *rand.Rand, vs []variant, n int) []variant {
	if len(vs) <= n {
		return vs
	}
	rng.Shuffle(len(vs), func(i, j int) { vs[i], vs[j] = vs[j], vs[i] })
	return vs[:n]
}

func seedOf(s string) uint64 {
	h := fnv.New64a()
	h.Write([]byte(s))
	return h.Sum64()
}

// TestHostile converts the hostile corpus. By default it tries a fixed
// sample sized for CI; MESHFS_HOSTILE=full tries every variant, with more
// random points and a seed from MESHFS_HOSTILE_SEED (or the clock).
func TestHostile(t *testing.T) {
	var base uint64 = 1
	rounds := 24
	if full() {
		rounds = 200
		base = uint64(time.Now().UnixNano())
		if s := os.Getenv("MESHFS_HOSTILE_SEED"); s != "" {
			var err error
			if base, err = strconv.ParseUint(s, 10, 64); err != nil {
				t.Fatalf("MESHFS_HOSTILE_SEED: %v", err)
			}
		}
	}
	t.Logf("seed %d, %d rounds per seed file, full run %v", base, rounds, full())
	marker := filepath.Join(t.TempDir(), "pwned")

	var all []variant
	for _, s := range seeds(t) {
		rng := rand.New(rand.NewPCG(base, seedOf(s.rel)))
		vs := s.gen(rng, rounds)
		if !full() {
			// A budget of bytes converted per seed keeps the run short:
			// small files get up to 100 variants, the largest a few.
			n := int(min(100, max(6, (2<<20)/int64(len(s.files[s.main])+1))))
			vs = sample(rng, vs, n)
		}
		all = append(all, vs...)
	}
	all = append(all, luaVariants(t, marker)...)

	st := newStats()
	start := time.Now()
	failures := 0
	for i := range all {
		v := &all[i]
		o := convert(v)
		st.add(v, o)
		if o.failed() {
			failures++
			if failures <= 50 {
				t.Errorf("%s: %s (saved in %s)", oneLine(v.desc), o, save(t, v))
			}
		}
		if o.hung {
			buf := make([]byte, 1<<20)
			t.Fatalf("%s: stopping after a hang: a stuck conversion disturbs the rest; goroutines:\n%s", oneLine(v.desc), buf[:runtime.Stack(buf, true)])
		}
	}
	st.report(t, base, time.Since(start))
	if len(all) < 1000 {
		t.Errorf("only %d variants: the corpus must have at least 1000", len(all))
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a script created %s: %v", marker, err)
	}
}

// TestRegressions converts the variants that once failed (testdata/regress,
// each a folder of files and a variant.txt).
func TestRegressions(t *testing.T) {
	dirs, err := filepath.Glob(filepath.Join("testdata", "regress", "*"))
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) == 0 {
		t.Fatal("no regression fixtures under testdata/regress")
	}
	sort.Strings(dirs)
	for _, d := range dirs {
		v, err := loadVariant(d)
		if err != nil {
			t.Errorf("%s: %v", d, err)
			continue
		}
		if o := convert(v); o.failed() {
			t.Errorf("%s (%s): %s", d, v.desc, o)
		}
	}
	t.Logf("%d regression fixtures", len(dirs))
}

func loadVariant(dir string) (*variant, error) {
	meta, err := os.ReadFile(filepath.Join(dir, "variant.txt"))
	if err != nil {
		return nil, err
	}
	v := &variant{files: map[string][]byte{}}
	for _, line := range strings.Split(string(meta), "\n") {
		k, val, _ := strings.Cut(line, ": ")
		switch k {
		case "desc":
			v.desc = val
		case "main":
			v.main = val
		case "lie":
			v.lie, _ = strconv.ParseInt(val, 10, 64)
		case "format":
			for _, f := range formats.All {
				if f.Name() == val {
					v.format = f
				}
			}
		}
	}
	if v.format == nil || v.main == "" {
		return nil, fmt.Errorf("variant.txt names no known format and main file")
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		if e.Name() != "variant.txt" {
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				return nil, err
			}
			v.files[e.Name()] = b
		}
	}
	if _, ok := v.files[v.main]; !ok && !bytes.Contains(meta, []byte("missing")) {
		return nil, fmt.Errorf("no %s", v.main)
	}
	return v, nil
}
