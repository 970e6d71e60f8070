package fs

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	iofs "io/fs"
	"math"
	"path/filepath"
	"strings"
	"time"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/internal/source"
)

// fakeFormat is a tiny mesh format registered only in these tests, so the
// tree is tested on inputs whose every byte the test controls:
//
//	"FMSH" | u32 triangle count | count × 9 float32 positions
//
// A file starting "FMSX" fails its scan (after a partial structure); one
// whose count claims more triangles than it holds scans but fails to
// decode. "NAME.fmesh.side" is a companion of "NAME.fmesh": Decode reads
// it and appends its bytes to the mesh's name, so the outputs' size and
// bytes follow it.
type fakeFormat struct{}

const fakeExt = ".fmesh"

func (fakeFormat) Name() string { return "fake" }

func (fakeFormat) Sniff(name string, head []byte) bool {
	return strings.HasSuffix(name, fakeExt) && len(head) >= 4 && (string(head[:4]) == "FMSH" || string(head[:4]) == "FMSX")
}

func (fakeFormat) StripExt(name string) string { return strings.TrimSuffix(name, fakeExt) }

func (fakeFormat) IsCompanion(name string, siblings func(string) bool) bool {
	return strings.HasSuffix(name, fakeExt+".side") && siblings(strings.TrimSuffix(name, ".side"))
}

func (fakeFormat) Companions(name string) []string { return []string{name + ".side"} }

func (fakeFormat) Scan(ctx context.Context, src *decode.Source) (*decode.Structure, error) {
	head := make([]byte, 8)
	if _, err := src.R.ReadAt(head, 0); err != nil {
		return nil, decode.Errorf(src.Name, "", "magic", 0, "short file: %v", err)
	}
	st := &decode.Structure{Format: "fake"}
	st.Header.Add("magic", string(head[:4]))
	st.Chunks = append(st.Chunks, decode.Chunk{Name: "HEAD", Offset: 0, Length: 8, Size: 8})
	if string(head[:4]) == "FMSX" {
		return st, decode.Errorf(src.Name, "HEAD", "magic", 0, "broken on purpose")
	}
	n := binary.LittleEndian.Uint32(head[4:])
	st.Header.Add("triangles", n)
	body := src.Size - 8
	st.Chunks = append(st.Chunks, decode.Chunk{Name: "POS", Offset: 8, Length: body, Size: body})
	// A "compressed" chunk: its bytes twice.
	// Load runs after Scan has returned and src.R is closed: it reopens.
	path, size := src.Name, body
	st.Chunks = append(st.Chunks, decode.Chunk{Name: "POS.x2", Offset: 8, Length: body, Size: 2 * body,
		Load: func() ([]byte, error) {
			f, err := source.Open(path)
			if err != nil {
				return nil, err
			}
			defer f.Close()
			b, err := io.ReadAll(f)
			if err != nil {
				return nil, err
			}
			if int64(len(b)) != 8+size {
				return nil, fmt.Errorf("%s changed size", path)
			}
			return append(b[8:], b[8:]...), nil
		}})
	// A hostile name from inside the file.
	st.Chunks = append(st.Chunks, decode.Chunk{Name: "../../escape", Offset: 0, Length: 4, Size: 4})
	return st, nil
}

// fakeDecodeDelay makes every fake decode take that much longer (tests
// that need a slow conversion set it and reset it); fakeDecodeHook, when
// set, runs at the start of every fake decode (a test's clock moves on).
var (
	fakeDecodeDelay time.Duration
	fakeDecodeHook  func()
)

func (fakeFormat) Decode(ctx context.Context, src *decode.Source) (*decode.Scene, error) {
	time.Sleep(fakeDecodeDelay)
	if fakeDecodeHook != nil {
		fakeDecodeHook()
	}
	b := make([]byte, src.Size)
	if _, err := src.R.ReadAt(b, 0); err != nil && err != io.EOF {
		return nil, err
	}
	n := int64(binary.LittleEndian.Uint32(b[4:8]))
	if n*36 > int64(len(b))-8 {
		return nil, decode.Errorf(src.Name, "POS", "triangles", 4, "%d triangles need %d bytes, %d left", n, n*36, len(b)-8)
	}
	p := decode.Primitive{Name: "body", Material: -1}
	for i := int64(0); i < n*3; i++ {
		var v [3]float32
		for k := range 3 {
			v[k] = math.Float32frombits(binary.LittleEndian.Uint32(b[8+i*12+int64(k)*4:]))
		}
		p.Positions = append(p.Positions, v)
		p.Indices = append(p.Indices, uint32(i))
	}
	name := filepath.Base(src.Name)
	if src.OpenSibling != nil {
		side, err := fakeSide(src, name+".side")
		if err != nil {
			return nil, err
		}
		name += side
	}
	return &decode.Scene{Meshes: []decode.Mesh{{Name: name, Primitives: []decode.Primitive{p}}}}, nil
}

// fakeSide returns "+" and the bytes of the companion called name beside
// src, or "" when there is none.
func fakeSide(src *decode.Source, name string) (string, error) {
	r, size, err := src.OpenSibling(name)
	if errors.Is(err, iofs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	if c, ok := r.(io.Closer); ok {
		defer c.Close()
	}
	b := make([]byte, size)
	if _, err := r.ReadAt(b, 0); err != nil && err != io.EOF {
		return "", err
	}
	return "+" + string(b), nil
}

// fakeMesh returns a fake mesh file of n triangles; seed varies the
// coordinates.
func fakeMesh(n int, seed float32) []byte {
	b := []byte("FMSH")
	b = binary.LittleEndian.AppendUint32(b, uint32(n))
	for t := range n {
		x := float32(t) + seed
		for _, v := range [][3]float32{{x, 0, 0}, {x + 1, 0, 0}, {x, 1, seed}} {
			for _, c := range v {
				b = binary.LittleEndian.AppendUint32(b, math.Float32bits(c))
			}
		}
	}
	return b
}

func fakeScanBroken() []byte { return []byte("FMSX\x01\x00\x00\x00garbage") }

func fakeDecodeBroken() []byte {
	b := fakeMesh(2, 0)
	binary.LittleEndian.PutUint32(b[4:], 1000)
	return b
}
