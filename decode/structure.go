package decode

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
)

// Structure is what a cheap scan of a file finds: the fields for header.json
// and the list of chunks or sections for chunks/.
type Structure struct {
	Format string
	Header Fields
	Chunks []Chunk
	// Materials are the materials the decoded scene will have, in its
	// order, as far as the scan can tell them without reading arrays
	// (names and texture references); nil when the format's scan does
	// not say.
	Materials []Material
}

// Chunk is one chunk or section of the source file, shown as chunks/<Name>.
type Chunk struct {
	// Name is the file name under chunks/, already safe as a path element.
	Name string
	// Offset and Length locate the chunk's bytes in the source file.
	Offset, Length int64
	// Size is the exact size of the bytes Load returns (for raw chunks, Length).
	Size int64
	// Load returns decompressed or assembled bytes. Nil means the chunk is raw:
	// its bytes are source[Offset : Offset+Length].
	Load func() ([]byte, error)
}

// Bytes returns the chunk's contents, reading raw chunks from r.
func (c *Chunk) Bytes(r io.ReaderAt) ([]byte, error) {
	if c.Load != nil {
		b, err := c.Load()
		if err == nil && int64(len(b)) != c.Size {
			return nil, fmt.Errorf("chunk %s: loaded %d bytes, expected %d", c.Name, len(b), c.Size)
		}
		return b, err
	}
	b := make([]byte, c.Length)
	if _, err := r.ReadAt(b, c.Offset); err != nil {
		return nil, fmt.Errorf("chunk %s at offset %d: %w", c.Name, c.Offset, err)
	}
	return b, nil
}

// Field is one key of header.json.
type Field struct {
	Key   string
	Value any
}

// Fields is an ordered JSON object: keys appear in the order they were added,
// so header.json is stable and diffable across files and versions.
type Fields []Field

// Add appends a key and returns the extended list.
func (f *Fields) Add(key string, value any) { *f = append(*f, Field{key, value}) }

// Get returns the value of key, or nil.
func (f Fields) Get(key string) any {
	for _, kv := range f {
		if kv.Key == key {
			return kv.Value
		}
	}
	return nil
}

// MarshalJSON writes the fields as an object in their order.
func (f Fields) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, kv := range f {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := json.Marshal(kv.Key)
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		v, err := json.Marshal(kv.Value)
		var unsupported *json.UnsupportedValueError
		if errors.As(err, &unsupported) {
			// JSON has no NaN or infinity, and broken files hold them:
			// they become strings ("NaN", "+Inf"), so header.json still
			// shows the file.
			v, err = json.Marshal(finite(reflect.ValueOf(kv.Value)))
		}
		if err != nil {
			return nil, fmt.Errorf("header field %q: %w", kv.Key, err)
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// finite returns v with every NaN or infinite float replaced by its string
// form, walking slices, arrays, maps and pointers; values that marshal
// themselves (Fields) are left to do so.
func finite(v reflect.Value) any {
	if !v.IsValid() {
		return nil
	}
	if v.CanInterface() {
		if _, ok := v.Interface().(json.Marshaler); ok {
			return v.Interface()
		}
	}
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		if f := v.Float(); math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Sprint(f)
		}
	case reflect.Interface, reflect.Pointer:
		if !v.IsNil() {
			return finite(v.Elem())
		}
	case reflect.Slice, reflect.Array:
		if v.Kind() == reflect.Slice && v.IsNil() {
			break
		}
		out := make([]any, v.Len())
		for i := range out {
			out[i] = finite(v.Index(i))
		}
		return out
	case reflect.Map:
		if v.Type().Key().Kind() == reflect.String && !v.IsNil() {
			out := make(map[string]any, v.Len())
			for it := v.MapRange(); it.Next(); {
				out[it.Key().String()] = finite(it.Value())
			}
			return out
		}
	}
	return v.Interface()
}

// HeaderJSON renders fields as header.json: 2-space indent, trailing newline.
func HeaderJSON(f Fields) ([]byte, error) {
	// Written indented directly: marshalling the whole object, compacting
	// it and indenting it again cost about 180 µs a small mesh, the
	// biggest part of a structure scan (cold walks scan every mesh).
	// Rendered into a pooled buffer (no growing from small, ≈ 4 copies of
	// a 2.6 KB header), then copied out at its exact size: the cache keeps
	// every header of a walked tree.
	buf := headerBufs.Get().(*[]byte)
	defer headerBufs.Put(buf)
	if b, ok := appendFieldsIndented((*buf)[:0], f, ""); ok {
		b = append(b, '\n')
		if cap(b) <= maxPooledHeader {
			*buf = b
		}
		return bytes.Clone(b), nil
	}
	// A value that does not marshal: the general path, for its error.
	return headerJSONMarshal(f)
}

// headerBufs holds HeaderJSON's scratch buffers; one grown past
// maxPooledHeader is not kept.
var headerBufs = sync.Pool{New: func() any { b := make([]byte, 0, 8<<10); return &b }}

const maxPooledHeader = 256 << 10

// headerJSONMarshal is HeaderJSON by encoding/json: marshal, then indent.
// It is the fallback, and the reference the direct writer is tested against.
func headerJSONMarshal(f Fields) ([]byte, error) {
	compact, err := json.Marshal(f)
	if err != nil {
		return nil, err
	}
	var out bytes.Buffer
	if err := json.Indent(&out, compact, "", "  "); err != nil {
		return nil, err
	}
	out.WriteByte('\n')
	return out.Bytes(), nil
}

// appendFieldsIndented appends f as json.Indent(json.Marshal(f)) with
// two-space indent would print it at nesting prefix; false when a value
// fails to marshal.
func appendFieldsIndented(b []byte, f Fields, prefix string) ([]byte, bool) {
	if len(f) == 0 {
		return append(b, "{}"...), true
	}
	inner := prefix + "  "
	b = append(b, '{')
	for i, kv := range f {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '\n')
		b = append(b, inner...)
		if b2, ok := appendPlainString(b, kv.Key); ok {
			b = b2
		} else {
			k, err := json.Marshal(kv.Key)
			if err != nil {
				return b, false
			}
			b = append(b, k...)
		}
		b = append(b, ':', ' ')
		var ok bool
		if b, ok = appendValueIndented(b, kv.Value, inner); !ok {
			return b, false
		}
	}
	b = append(b, '\n')
	b = append(b, prefix...)
	return append(b, '}'), true
}

// appendValueIndented appends one value of Fields as appendFieldsIndented
// does: nested Fields directly, plain integers without reflection, anything
// else as Fields.MarshalJSON marshals it, indented at prefix.
func appendValueIndented(b []byte, v any, prefix string) ([]byte, bool) {
	switch x := v.(type) {
	case Fields:
		return appendFieldsIndented(b, x, prefix)
	case int:
		return strconv.AppendInt(b, int64(x), 10), true
	case int64:
		return strconv.AppendInt(b, x, 10), true
	case int32:
		return strconv.AppendInt(b, int64(x), 10), true
	case uint64:
		return strconv.AppendUint(b, x, 10), true
	case uint32:
		return strconv.AppendUint(b, uint64(x), 10), true
	case uint16:
		return strconv.AppendUint(b, uint64(x), 10), true
	case uint8:
		return strconv.AppendUint(b, uint64(x), 10), true
	case float64:
		if b2, ok := appendFloat(b, x, 64); ok {
			return b2, true
		}
	case float32:
		if b2, ok := appendFloat(b, float64(x), 32); ok {
			return b2, true
		}
	case bool:
		return strconv.AppendBool(b, x), true
	case string:
		if b2, ok := appendPlainString(b, x); ok {
			return b2, true
		}
	case []Fields:
		if x != nil {
			return appendArrayIndented(b, len(x), prefix, func(b []byte, i int, inner string) ([]byte, bool) {
				return appendFieldsIndented(b, x[i], inner)
			})
		}
	case []string:
		if x != nil {
			if b2, ok := appendArrayIndented(b, len(x), prefix, func(b []byte, i int, _ string) ([]byte, bool) {
				return appendPlainString(b, x[i])
			}); ok {
				return b2, true
			}
		}
	case []float32:
		if x != nil {
			if b2, ok := appendArrayIndented(b, len(x), prefix, func(b []byte, i int, _ string) ([]byte, bool) {
				return appendFloat(b, float64(x[i]), 32)
			}); ok {
				return b2, true
			}
		}
	}
	c, err := json.Marshal(v)
	var unsupported *json.UnsupportedValueError
	if errors.As(err, &unsupported) {
		c, err = json.Marshal(finite(reflect.ValueOf(v)))
	}
	if err != nil {
		return b, false
	}
	if len(c) == 0 || (c[0] != '{' && c[0] != '[') {
		return append(b, c...), true // a scalar: nothing to indent
	}
	var out bytes.Buffer
	if err := json.Indent(&out, c, prefix, "  "); err != nil {
		return b, false
	}
	return append(b, out.Bytes()...), true
}

// appendArrayIndented appends an array of n elements as json.Indent prints
// it at nesting prefix; elem appends element i at nesting inner.
func appendArrayIndented(b []byte, n int, prefix string, elem func(b []byte, i int, inner string) ([]byte, bool)) ([]byte, bool) {
	if n == 0 {
		return append(b, "[]"...), true
	}
	inner := prefix + "  "
	b = append(b, '[')
	for i := range n {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, '\n')
		b = append(b, inner...)
		var ok bool
		if b, ok = elem(b, i, inner); !ok {
			return b, false
		}
	}
	b = append(b, '\n')
	b = append(b, prefix...)
	return append(b, ']'), true
}

// appendPlainString appends s quoted when encoding/json would write it
// as it is (printable ASCII, nothing it escapes); false otherwise.
func appendPlainString(b []byte, s string) ([]byte, bool) {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return b, false
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"'), true
}

// appendFloat appends a finite float as encoding/json writes it (its
// floatEncoder); false for NaN and infinities, which it rejects.
func appendFloat(b []byte, f float64, bits int) ([]byte, bool) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return b, false
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 {
		if bits == 64 && (abs < 1e-6 || abs >= 1e21) || bits == 32 && (float32(abs) < 1e-6 || float32(abs) >= 1e21) {
			format = 'e'
		}
	}
	b = strconv.AppendFloat(b, f, format, -1, bits)
	if format == 'e' {
		// Clean up e-09 to e-9.
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b, true
}

// Hex formats a flag word as "0x%x" for header.json, beside its decoded names.
func Hex(v uint64) string { return fmt.Sprintf("0x%x", v) }

// SafeName turns a name taken from inside a file into one safe path element:
// no separators, no NUL or control bytes, valid UTF-8, not "." or "..",
// at most 96 bytes. Names that come from files never become paths elsewhere.
func SafeName(s string) string {
	var b []byte
	for _, r := range s {
		switch {
		case r == utf8.RuneError, r < 0x20, r == 0x7f, r == '/', r == '\\', r == ':':
			b = append(b, '_')
		default:
			if len(b)+utf8.RuneLen(r) > 96 {
				return finishSafe(b)
			}
			b = utf8.AppendRune(b, r)
		}
		if len(b) >= 96 {
			break
		}
	}
	return finishSafe(b)
}

func finishSafe(b []byte) string {
	s := strings.Trim(string(b), " ")
	if s == "" || strings.Trim(s, ".") == "" {
		return "_" + s
	}
	return s
}

// SummaryFields is the "counts" object that every format puts last in
// header.json, with the same keys everywhere so that one jq query works
// across a whole game: submeshes (surfaces), triangles, vertices (as the file
// stores them, before any welding or dropping of unreferenced ones), bones,
// morph_targets and animations.
func SummaryFields(submeshes, triangles, vertices, bones, morphTargets, animations int) Fields {
	return Fields{
		{"submeshes", submeshes},
		{"triangles", triangles},
		{"vertices", vertices},
		{"bones", bones},
		{"morph_targets", morphTargets},
		{"animations", animations},
	}
}
