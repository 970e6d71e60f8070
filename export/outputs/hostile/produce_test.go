package hostile

import (
	"context"
	"errors"
	"os"
	"runtime"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/export/outputs"
)

// produce makes every output of m with the functions the store makes a
// mesh folder's files with (internal/store), one at a time as readers of
// the mount would ask for them: the one-pass scan and decoding where the
// format has it (its scene then makes NAME.glb), else the scan;
// header.json; each chunk; each conversion of the folder table. A mesh in
// memory (NewMemory, a lying format) is no tree's, so the harness calls
// them itself. Each output goes to emit by its name under the folder
// ("chunks/" first, with nil bytes, for chunks/), error.txt last when any
// failed; a broken mesh's geometry is not emitted (the folder table's
// rule). It returns the most one conversion allocated (the scan with
// header.json and chunks/, made from it, or one output's, each made on its
// own as the mount makes it), what they all allocated, and the failures
// joined.
func produce(ctx context.Context, m *outputs.Mesh, emit func(name string, b []byte) error) (most, all uint64, err error) {
	var mark runtime.MemStats
	begin := func() { runtime.ReadMemStats(&mark) }
	end := func() {
		before := mark.TotalAlloc
		runtime.ReadMemStats(&mark)
		most = max(most, mark.TotalAlloc-before)
		all += mark.TotalAlloc - before
	}
	var errs []error
	put := func(name string, b []byte) {
		if err := emit(name, b); err != nil {
			errs = append(errs, err)
		}
	}
	begin()
	st, scene, one := m.ScanDecode(ctx)
	var scanErr error
	if !one {
		st, scanErr = m.Scan(ctx)
	}
	if scanErr != nil {
		errs = append(errs, scanErr)
	}
	hdr, hdrErr := m.Header(st, scanErr)
	if hdrErr != nil {
		errs = append(errs, hdrErr)
	}
	hasChunks := st != nil && len(st.Chunks) > 0
	if hasChunks {
		put(outputs.ChunksDir+"/", nil)
		for i := range st.Chunks {
			c := &st.Chunks[i]
			b, err := m.ChunkBytes(c)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			put(outputs.ChunksDir+"/"+decode.SafeName(c.Name), b)
		}
	}
	end()
	made := map[string][]byte{}
	animated := false
	var convErr error
	if scanErr == nil {
		for _, e := range m.Files(outputs.State{Chunks: hasChunks, Animated: m.TakesAnimations()}) {
			if !e.Converted() {
				continue
			}
			var b []byte
			var err error
			begin()
			switch e.Output {
			case outputs.OutGLB:
				if scene != nil {
					b, err = m.GLBOf(ctx, scene)
					scene = nil
				} else {
					var parts [][]byte
					if parts, err = m.GLBFiles(ctx); err == nil {
						b = parts[e.Part]
					}
				}
			case outputs.OutOBJ:
				var o, l []byte
				o, l, err = m.OBJFiles(ctx)
				b = [][]byte{o, l}[e.Part]
			case outputs.OutPreview:
				b, err = m.PreviewFile(ctx)
			case outputs.OutAnimated:
				if b, err = m.AnimatedGLBFile(ctx); errors.Is(err, os.ErrNotExist) {
					continue // no animation belongs to the mesh: no file
				}
				animated = err == nil
			}
			end()
			if err != nil {
				if convErr == nil {
					convErr = err
				}
				errs = append(errs, err)
				continue
			}
			made[e.Name] = b
		}
	}
	state := outputs.State{Chunks: hasChunks, Broken: scanErr != nil || convErr != nil, Animated: animated}
	for _, e := range m.Files(state) {
		switch {
		case e.Output == outputs.OutHeader && hdrErr == nil:
			put(e.Name, outputs.HeaderWithError(hdr, convErr))
		case e.Converted():
			put(e.Name, made[e.Name])
		}
	}
	if len(errs) > 0 {
		put(outputs.ErrorName, outputs.ErrorText(errs...))
	}
	return most, all, errors.Join(errs...)
}
