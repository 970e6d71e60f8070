package hostile

import (
	"context"
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/decodetest"
	"github.com/meshfs/meshfs/decode/tfever"
	"github.com/meshfs/meshfs/export/outputs"
)

// seed is one well-formed source file (with its companions) that variants
// are made from.
type seed struct {
	rel    string // path shown in messages ("testdata/gem/x.ply")
	format decode.Format
	main   string            // base name of the mesh file
	files  map[string][]byte // the mesh file and its companions by base name
	chunks []decode.Chunk    // the original's chunk table (Scan)
}

// variant is one file set to convert.
type variant struct {
	desc   string // how it was made, for messages and saved fixtures
	format decode.Format
	main   string
	files  map[string][]byte
	lie    int64 // added to the mesh file's Size as decoders see it
}

// size is what the heap bound is measured against: every byte the
// decoders may read, including what a lying Size claims.
func (v *variant) size() int64 {
	var n int64
	for _, b := range v.files {
		n += int64(len(b))
	}
	return n + max(v.lie, 0)
}

// liar reports the mesh file's size off by delta, as a file that is
// rewritten between stat and read does.
type liar struct {
	decode.Format
	delta int64
}

func (l liar) lie(src *decode.Source) *decode.Source {
	c := *src
	c.Size = max(c.Size+l.delta, 0)
	return &c
}

func (l liar) Scan(ctx context.Context, src *decode.Source) (*decode.Structure, error) {
	return l.Format.Scan(ctx, l.lie(src))
}

func (l liar) Decode(ctx context.Context, src *decode.Source) (*decode.Scene, error) {
	return l.Format.Decode(ctx, l.lie(src))
}

func (v *variant) mesh() *outputs.Mesh {
	f := v.format
	if v.lie != 0 {
		f = liar{f, v.lie}
	}
	return outputs.NewMemory(v.main, f, v.files)
}

// repoRoot is the module root, found from this file's path.
func repoRoot(t testing.TB) string {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("no caller information")
	}
	return filepath.Clean(filepath.Join(filepath.Dir(file), "..", "..", ".."))
}

// seeds loads every file a decoder claims under the fixture tree and the
// real files (when present).
func seeds(t testing.TB) []*seed {
	root := repoRoot(t)
	dirs := []string{filepath.Join(root, "testdata")}
	if real, ok := decodetest.RealData(t, ""); ok {
		dirs = append(dirs, real)
	}
	var out []*seed
	for _, dir := range dirs {
		err := filepath.WalkDir(dir, func(path string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			m, err := outputs.Open(path)
			if err != nil || m == nil {
				return err
			}
			s := &seed{format: m.Format, main: filepath.Base(path), files: map[string][]byte{}}
			s.rel, _ = filepath.Rel(filepath.Dir(dir), path)
			for _, p := range []string{path, path + ".blob"} {
				if b, err := os.ReadFile(p); err == nil {
					s.files[filepath.Base(p)] = b
				}
			}
			st, _ := outputs.NewMemory(s.main, s.format, s.files).Scan(context.Background())
			if st != nil {
				s.chunks = st.Chunks
			}
			out = append(out, s)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// with returns the seed's files with name replaced by b (removed when b is
// nil).
func (s *seed) with(name string, b []byte) map[string][]byte {
	files := maps.Clone(s.files)
	if b == nil {
		delete(files, name)
	} else {
		files[name] = b
	}
	return files
}

func (s *seed) variant(desc, name string, b []byte) variant {
	return variant{desc: s.rel + ": " + desc, format: s.format, main: s.main, files: s.with(name, b)}
}

// blobName is the companion a .msh's chunks (other than data.lua) point
// into, or "" for formats whose chunks are in the mesh file.
func (s *seed) blobName() string {
	if _, ok := s.format.(tfever.Msh); ok {
		return s.main + ".blob"
	}
	return ""
}

// The values written over counts and offsets: 0, −1 (= 2^32−1 as a u32),
// 2^31−1, and 2^31 (−2^31 as an i32).
var wordValues = []uint32{0, 0xffffffff, 0x7fffffff, 0x80000000}

// The non-finite float32 values written over aligned words: a quiet NaN,
// a negative NaN, +Inf and −Inf.
var nonFinite = []uint32{0x7fc00000, 0xffc00001, 0x7f800000, 0xff800000}

// gen makes every variant of s. rounds sets how many random points each
// random kind tries.
func (s *seed) gen(rng *rand.Rand, rounds int) []variant {
	var out []variant
	main := s.files[s.main]
	blob := s.blobName()

	// Where each chunk starts and ends, and a byte or a word either side.
	type cut struct {
		file string
		at   int
	}
	var cuts []cut
	for _, c := range s.chunks {
		file := s.main
		if blob != "" && c.Name != "data.lua" {
			file = blob
		}
		for _, at := range []int64{c.Offset, c.Offset + 1, c.Offset + 4, c.Offset + c.Length - 1, c.Offset + c.Length} {
			cuts = append(cuts, cut{file, int(at)})
		}
	}
	// Random points, in the mesh file and its companion.
	for name, b := range s.files {
		for range rounds {
			if len(b) > 1 {
				cuts = append(cuts, cut{name, 1 + rng.IntN(len(b)-1)})
			}
		}
	}
	seen := map[cut]bool{}
	for _, c := range cuts {
		b := s.files[c.file]
		if seen[c] || c.at <= 0 || c.at >= len(b) {
			continue
		}
		seen[c] = true
		out = append(out, s.variant(fmt.Sprintf("%s truncated at 0x%x", c.file, c.at), c.file, b[:c.at:c.at]))
	}

	// Byte flips anywhere, and bytes set to 0x00 or 0xff.
	for name, b := range s.files {
		for range 2 * rounds {
			if len(b) == 0 {
				break
			}
			i := rng.IntN(len(b))
			nb := slices.Clone(b)
			var how string
			switch rng.IntN(3) {
			case 0:
				nb[i] ^= byte(1 + rng.IntN(255))
				how = "flipped"
			case 1:
				nb[i] = 0
				how = "zeroed"
			default:
				nb[i] = 0xff
				how = "set to 0xff"
			}
			out = append(out, s.variant(fmt.Sprintf("%s byte 0x%x %s", name, i, how), name, nb))
		}
	}

	// Non-finite floats, which decoders repair (decode.Scene.Repair):
	// aligned words of the binary files set to a NaN or an infinity.
	for name, b := range s.files {
		if name == s.main && s.isLua() {
			continue
		}
		for range rounds {
			if len(b) < 4 {
				break
			}
			i := 4 * rng.IntN(len(b)/4)
			v := nonFinite[rng.IntN(len(nonFinite))]
			nb := slices.Clone(b)
			binary.LittleEndian.PutUint32(nb[i:], v)
			out = append(out, s.variant(fmt.Sprintf("%s float at 0x%x = 0x%08x", name, i, v), name, nb))
		}
	}

	// Counts and offsets: every aligned word of the first 256 bytes, and
	// the words after each chunk's start (where binary formats keep a
	// chunk's counts and sizes), at each odd value. Lua scripts have their
	// numbers replaced instead (below).
	if !s.isLua() {
		words := map[int]bool{}
		for i := 0; i+4 <= min(len(main), 256); i += 4 {
			words[i] = true
		}
		for _, c := range s.chunks {
			if c.Load != nil && blob != "" {
				continue
			}
			for k := int64(0); k < 32 && k+4 <= c.Length; k += 2 {
				words[int(c.Offset+k)] = true
			}
		}
		for _, i := range sortedKeys(words) {
			for _, v := range wordValues {
				if i+4 > len(main) || binary.LittleEndian.Uint32(main[i:]) == v {
					continue
				}
				nb := slices.Clone(main)
				binary.LittleEndian.PutUint32(nb[i:], v)
				out = append(out, s.variant(fmt.Sprintf("u32 at 0x%x = 0x%x", i, v), s.main, nb))
			}
			if i%8 == 0 && i+8 <= len(main) {
				nb := slices.Clone(main)
				binary.LittleEndian.PutUint64(nb[i:], ^uint64(0))
				out = append(out, s.variant(fmt.Sprintf("u64 at 0x%x = -1", i), s.main, nb))
			}
		}
	} else {
		out = append(out, s.luaNumbers(rng, rounds)...)
	}

	// Sizes that lie: the file changed between stat and read.
	for _, d := range []int64{-1, 1, int64(len(main)), -int64(len(main) / 2), 1 << 20} {
		v := s.variant("size off by "+fmt.Sprint(d), s.main, main)
		v.lie = d
		out = append(out, v)
	}

	// Companions that lie: missing, empty, cut, doubled, all 0xff (NaN).
	if blob != "" {
		b := s.files[blob]
		ff := make([]byte, len(b))
		for i := range ff {
			ff[i] = 0xff
		}
		out = append(out,
			s.variant("blob missing", blob, nil),
			s.variant("blob empty", blob, []byte{}),
			s.variant("blob halved", blob, b[:len(b)/2]),
			s.variant("blob doubled", blob, append(slices.Clone(b), b...)),
			s.variant("blob all 0xff", blob, ff),
			s.variant("blob all zero", blob, make([]byte, len(b))))
	}
	return out
}

// isLua reports whether the mesh file is a Transport Fever Lua script.
func (s *seed) isLua() bool { return isLua(s.format) }

func isLua(f decode.Format) bool {
	switch f.(type) {
	case tfever.Msh, tfever.Ani:
		return true
	}
	return false
}

func sortedKeys(m map[int]bool) []int {
	k := slices.Collect(maps.Keys(m))
	sort.Ints(k)
	return k
}

// luaNumber matches a number literal of a Lua script that is not part of a
// name ("uv0").
var luaNumber = regexp.MustCompile(`(^|[^\w.])(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)`)

// luaValues replace a script's numbers: the odd integers, and the values
// only a script can give (NaN, infinities, fractions, 2^53+1).
var luaValues = []string{"0", "-1", "2147483647", "4294967295", "2147483648", "1e308", "(0/0)", "(1/0)", "(-1/0)", "0.5", "9007199254740993", "-2147483648"}

// luaNumbers replaces the numbers of a .msh or .ani script: every number
// that is a count, offset or numComp with every odd value, and random other
// numbers with a random one.
func (s *seed) luaNumbers(rng *rand.Rand, rounds int) []variant {
	script := string(s.files[s.main])
	locs := luaNumber.FindAllStringSubmatchIndex(script, -1)
	var out []variant
	for _, l := range locs {
		start, end := l[4], l[5]
		before := script[max(0, start-12):start]
		key := regexp.MustCompile(`(count|offset|numComp)\s*=\s*$`).FindStringSubmatch(before)
		if key == nil {
			continue
		}
		for _, v := range luaValues {
			nb := script[:start] + v + script[end:]
			out = append(out, s.variant(fmt.Sprintf("%s at byte %d = %s", key[1], start, v), s.main, []byte(nb)))
		}
	}
	for range rounds {
		if len(locs) == 0 {
			break
		}
		l := locs[rng.IntN(len(locs))]
		v := luaValues[rng.IntN(len(luaValues))]
		nb := script[:l[4]] + v + script[l[5]:]
		out = append(out, s.variant(fmt.Sprintf("number at byte %d = %s", l[4], v), s.main, []byte(nb)))
	}
	// Strings (names of attributes, materials) become hostile names.
	str := regexp.MustCompile(`"[^"\n]*"`)
	for i, l := range str.FindAllStringIndex(script, -1) {
		if i >= rounds {
			break
		}
		for _, name := range []string{`"../../etc/passwd"`, `"a\0b"`, `"` + strings.Repeat("x", 4096) + `"`, `"\255\254"`, `""`} {
			nb := script[:l[0]] + name + script[l[1]:]
			out = append(out, s.variant(fmt.Sprintf("string at byte %d = %.20s", l[0], name), s.main, []byte(nb)))
		}
	}
	return out
}

// hash8 names a variant's files for saving.
func hash8(v *variant) string {
	h := fnv.New64a()
	h.Write([]byte(v.desc))
	for _, k := range slices.Sorted(maps.Keys(v.files)) {
		h.Write([]byte(k))
		h.Write(v.files[k])
	}
	return fmt.Sprintf("%016x", h.Sum64())[:8]
}
