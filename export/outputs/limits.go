package outputs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/texture"
	"github.com/meshfs/meshfs/internal/source"
)

// Limits bound the work one mesh may cause. People mount folders of mods
// from strangers; a file that exceeds a limit gets an error for that mesh
// (error.txt), never a crash or a stuck daemon. A zero field means no limit.
type Limits struct {
	// MaxSourceSize caps the bytes of each file Decode reads: the mesh file
	// and each companion it opens (a .msh's .msh.blob). Decoders allocate
	// in proportion to what they read, so this caps a conversion's memory
	// (see the hostile corpus test for the measured multiple). Scan is not
	// capped by it: it reads only headers, so header.json of an oversized
	// file still shows what the file claims.
	MaxSourceSize int64
	// Timeout is the wall-clock deadline of one Scan, and of one Decode
	// together with its export.
	Timeout time.Duration
	// MaxOutputSize caps the bytes of one output file: NAME.glb, NAME.obj,
	// NAME.mtl, or one file of chunks/.
	MaxOutputSize int64
	// MaxTexturePixels caps the pixels decoded of one texture. A DDS whose
	// top level is over it is read from its first mip level within it
	// (the .glb's image says so in its extras); any other texture over it
	// is one that does not decode: its material goes without it.
	MaxTexturePixels int64
	// MaxTexturePixelsTotal caps the pixels of all the textures one
	// conversion embeds (each file once, at the level MaxTexturePixels
	// leaves): the texture that would pass it, and each after it, goes
	// without, as one over MaxTexturePixels does.
	MaxTexturePixelsTotal int64
	// PreviewSize is the side in pixels of NAME.preview.png (preview.go),
	// at most preview.MaxSize; 0: folders have none.
	PreviewSize int

	// AssetPaths are not a bound but travel with the limits, the one
	// setting every conversion of convert, check and the mount shares:
	// asset roots searched for the files a mesh's materials name, after
	// the mesh's own (--asset-path; see materials.go).
	AssetPaths []string
	// Textures keeps the PNG of each texture version for every conversion
	// and NAME.EXT.png (nil: this process's memory, the images cache). It
	// too travels with the limits, so that a model's parts share it.
	Textures Textures
	// Projects keeps the project indexes of the run (project.go; nil:
	// each conversion builds the ones it needs).
	Projects *Projects
	// Caches are the decodings conversions share (NewCaches): decoded
	// textures, the scenes of parts that models place. nil keeps
	// nothing between conversions. They too travel with the limits: the
	// mount's store and each convert or check run make their own, within
	// budgets of their own.
	Caches *Caches
	// View is how every source file is reached: the disk, and archives as
	// folders of their entries (source.NewView), with the view's listings,
	// entry readers and budget. nil reaches the disk alone (archives are
	// files). It too travels with the limits: the mount's tree and each
	// convert, check or info run make their own.
	View *source.Packed
}

// view is l.View, or the disk alone when there is none.
func (l *Limits) view() source.View {
	if l.View == nil {
		return source.Disk
	}
	return l.View
}

// Textures is where the PNG of a texture file's version is kept, shared
// by every mesh that embeds it and by its NAME.EXT.png: the mount's store
// keeps it in memory and on disk like any output.
type Textures interface {
	// PNG returns the PNG of the texture file version d, calling make
	// (which decodes and encodes it) at most once per version while the
	// result is kept.
	PNG(d Dep, make func() ([]byte, error)) ([]byte, error)
}

// Default limits. The largest mesh files of the supported games are tens of
// MiB (GEM maps; real ones here are at most 1.2 MiB), so 256 MiB leaves an
// order of magnitude of room while one conversion's heap stays within
// 32 × 256 MiB + 256 MiB = 8.25 GiB at the very worst (the bound the hostile
// corpus test holds every variant to; the worst it measures is 21× the
// source). A conversion runs at about 10 MiB/s or faster (a 1.2 MiB map
// converts in 0.14 s), so a minute is ample for any file under the size
// limit, and short enough that a reader of the mount is not left waiting on
// a decoder that stopped making progress. Outputs are 1–4 times their
// source's size; 1 GiB is more than any viewer loads. Game textures are at
// most 4096 pixels a side (the samples' at most 2048) and ship with mips,
// so 4096² pixels (64 MiB decoded) cuts none and reads a larger one one
// level down; 256 Mi pixels a conversion (1 GiB decoded, one after
// another) is 64 textures of 2048².
const (
	DefaultMaxSourceSize         = 256 << 20
	DefaultTimeout               = time.Minute
	DefaultMaxOutputSize         = 1 << 30
	DefaultMaxTexturePixels      = 4096 * 4096
	DefaultMaxTexturePixelsTotal = 256 << 20
)

// DefaultLimits are the limits New and Open give a Mesh.
var DefaultLimits = Limits{
	MaxSourceSize:         DefaultMaxSourceSize,
	Timeout:               DefaultTimeout,
	MaxOutputSize:         DefaultMaxOutputSize,
	MaxTexturePixels:      DefaultMaxTexturePixels,
	MaxTexturePixelsTotal: DefaultMaxTexturePixelsTotal,
	PreviewSize:           DefaultPreviewSize,
}

// Flag names of the limits, used by the commands and in error messages, so
// an error.txt says which knob to turn.
const (
	FlagMaxSourceSize = "max-source-size"
	FlagTimeout       = "timeout"
	FlagMaxOutputSize = "max-output-size"

	FlagMaxTexturePixels      = "max-texture-pixels"
	FlagMaxTexturePixelsTotal = "max-texture-pixels-total"
)

// textureOptions are the limits' bounds on decoding one texture.
func (l Limits) textureOptions() texture.Options {
	return texture.Options{MaxPixels: l.MaxTexturePixels}
}

// textureError names the limit's flag in a texture's error over
// MaxTexturePixels.
func (l Limits) textureError(err error) error {
	if err != nil && errors.Is(err, decode.ErrLimit) {
		return fmt.Errorf("%w (the %s limit)", err, FlagMaxTexturePixels)
	}
	return err
}

// limitError is a decode.FormatError that wraps decode.ErrLimit and names
// the limit's flag.
func limitError(file, section, field string, format string, args ...any) error {
	e := decode.Errorf(file, section, field, 0, format, args...)
	e.Err = decode.ErrLimit
	return e
}

// timeoutCause marks a context cancelled by Limits.Timeout, so its expiry
// can be told apart from the caller's own cancellation.
type timeoutCause struct{ d time.Duration }

func (c *timeoutCause) Error() string { return fmt.Sprintf("%s limit of %v", FlagTimeout, c.d) }

// deadline applies Limits.Timeout to ctx for one step (what: "scan",
// "decode"). done turns the step's error into a limit error when the limit
// expired, and releases the context.
func (m *Mesh) deadline(ctx context.Context, what string) (context.Context, func(error) error) {
	if m.Limits.Timeout <= 0 {
		return ctx, func(err error) error { return err }
	}
	cause := &timeoutCause{m.Limits.Timeout}
	cctx, cancel := context.WithTimeoutCause(ctx, m.Limits.Timeout, cause)
	return cctx, func(err error) error {
		defer cancel()
		if err != nil && cctx.Err() != nil && context.Cause(cctx) == cause {
			return limitError(m.Path, "", "", "%s did not finish within the %s: %v", what, cause.Error(), err)
		}
		return err
	}
}

// checkSource enforces MaxSourceSize on one file about to be decoded.
func (m *Mesh) checkSource(name string, size int64) error {
	if max := m.Limits.MaxSourceSize; max > 0 && size > max {
		return limitError(name, "", "", "the file is %d bytes, more than the %s limit of %d bytes", size, FlagMaxSourceSize, max)
	}
	return nil
}

// checkOutput enforces MaxOutputSize on one output of size bytes.
func (m *Mesh) checkOutput(output string, size int64) error {
	if max := m.Limits.MaxOutputSize; max > 0 && size > max {
		return limitError(m.Path, output, "", "the output is %d bytes, more than the %s limit of %d bytes", size, FlagMaxOutputSize, max)
	}
	return nil
}

// limitSource applies MaxSourceSize to src and to every companion file the
// decoder opens through it.
func (m *Mesh) limitSource(src *decode.Source) error {
	if err := m.checkSource(src.Name, src.Size); err != nil {
		return err
	}
	if open := src.OpenSibling; open != nil && m.Limits.MaxSourceSize > 0 {
		src.OpenSibling = func(name string) (io.ReaderAt, int64, error) {
			r, size, err := open(name)
			if err != nil {
				return r, size, err
			}
			if err := m.checkSource(name, size); err != nil {
				if c, ok := r.(io.Closer); ok {
					c.Close()
				}
				return nil, 0, err
			}
			return r, size, nil
		}
	}
	return nil
}

// Semaphore bounds how many conversions run at once (the mount's
// conversion concurrency; `meshfs convert` uses its -j workers instead).
// The zero value is not usable; make one with NewSemaphore.
type Semaphore struct{ slots chan struct{} }

// NewSemaphore allows n holders at once (at least 1).
func NewSemaphore(n int) *Semaphore { return &Semaphore{slots: make(chan struct{}, max(n, 1))} }

// Acquire waits for a slot or for ctx to end; a free slot is taken even
// when ctx has ended.
func (s *Semaphore) Acquire(ctx context.Context) error {
	select {
	case s.slots <- struct{}{}:
		return nil
	default:
	}
	select {
	case s.slots <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Release gives back a slot taken by Acquire.
func (s *Semaphore) Release() { <-s.slots }
