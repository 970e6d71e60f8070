package fs

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestBigReadsWithoutSpliceNoise: READs of up to 1 MiB (the mount's
// MaxWrite) of a .glb from memory, of a plain file and of a raw chunk come
// back byte for byte, and go-fuse logs no failed splice: a 1 MiB reply does
// not fit in a pipe, and go-fuse used to try (and log) for every such READ.
func TestBigReadsWithoutSpliceNoise(t *testing.T) {
	bothModes(t, func(t *testing.T) {
		src, mesh, tex := bigSources(t, 5<<20+123)
		want := glbOf(t, filepath.Join(src, "big.ply"))
		if len(want) <= 1<<20 {
			t.Fatalf("the test's .glb is %d bytes: too small for 1 MiB READs", len(want))
		}

		_, mnt := mountT(t, src, Config{})
		for _, c := range []struct {
			path string
			want []byte
		}{
			{filepath.Join(mnt, "big.ply", "big.glb"), want},
			{filepath.Join(mnt, "big.dds"), tex},
		} {
			got, err := os.ReadFile(c.path)
			if err != nil || !bytes.Equal(got, c.want) {
				t.Fatalf("%s: %d bytes (want %d), %v", c.path, len(got), len(c.want), err)
			}
		}
		// Every chunk as the source holds it.
		chunks, err := os.ReadDir(filepath.Join(mnt, "big.ply", "chunks"))
		if err != nil || len(chunks) == 0 {
			t.Fatalf("chunks/: %d entries, %v", len(chunks), err)
		}
		var total int
		for _, c := range chunks {
			b, err := os.ReadFile(filepath.Join(mnt, "big.ply", "chunks", c.Name()))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(mesh, b) {
				t.Fatalf("chunk %s: %d bytes not found in the source", c.Name(), len(b))
			}
			total += len(b)
		}
		if total < 1<<20 {
			t.Fatalf("chunks hold %d bytes in all: too few for 1 MiB READs", total)
		}
		if log := logOf(t); strings.Contains(log, "splice") {
			t.Fatalf("the log shows splice failures:\n%s", log)
		}
	})
}
