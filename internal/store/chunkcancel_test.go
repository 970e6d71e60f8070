package store

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/internal/meshgen"
	"github.com/meshfs/meshfs/internal/store/failures"
)

// TestChunkContentInterrupted: a loaded chunk asked for by a request the
// kernel interrupted (its context cancelled; go-fuse cancels it on
// FUSE_INTERRUPT, which any signal to the caller sends, Go's preemption
// signal too) fails with the context's error, not as a conversion failure
// (which a stat or read of it answers EIO, where EINTR makes the caller's
// libc or Go retry), and a later request loads it.
func TestChunkContentInterrupted(t *testing.T) {
	src := t.TempDir()
	p := filepath.Join(src, "m.mesh")
	writeGen(t, p, meshgen.Unigine, 200, 1)
	s, _ := newStore(t, src, t.TempDir())
	m, v := meshOf(t, s, p)
	r, err := s.Scan(context.Background(), m, v)
	if err != nil || r.St == nil {
		t.Fatalf("scan: %v", err)
	}
	name := ""
	for _, c := range r.St.Chunks {
		if c.Load != nil {
			name = decode.SafeName(c.Name)
			break
		}
	}
	if name == "" {
		t.Fatal("no loaded (decompressed) chunk in an ms15 mesh")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err = s.Content(ctx, m, v, outputs.Entry{}, name)
	var ce *failures.ConvError
	if !errors.Is(err, context.Canceled) || errors.As(err, &ce) {
		t.Errorf("chunk %s for an interrupted request: %v (%T), want context.Canceled, not a conversion failure", name, err, err)
	}
	data, _, err := s.Content(context.Background(), m, v, outputs.Entry{}, name)
	if err != nil || len(data) == 0 {
		t.Errorf("chunk %s after the interrupted request: %d bytes, %v", name, len(data), err)
	}
}

// TestTexturePNGInterrupted: a texture's PNG asked for by an interrupted
// request fails with the context's error, is not recorded as the
// texture's failure (which would show NAME.EXT.error.txt in place of its
// PNG, and answer its stat EIO), and is made by a later request.
func TestTexturePNGInterrupted(t *testing.T) {
	src := t.TempDir()
	s, _ := newStore(t, src, t.TempDir())
	p, id, _ := writeTGA(t, src)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, _, err := s.TexturePNG(ctx, p, id.File)
	var ce *failures.ConvError
	if !errors.Is(err, context.Canceled) || errors.As(err, &ce) {
		t.Errorf("PNG for an interrupted request: %v (%T), want context.Canceled, not a conversion failure", err, err)
	}
	var st syscall.Stat_t
	if err := syscall.Stat(p, &st); err != nil {
		t.Fatal(err)
	}
	if msg := s.TextureFailure(p, &st); msg != "" {
		t.Errorf("the interrupted request is recorded as the texture's failure: %s", msg)
	}
	if b, _, _, err := s.TexturePNG(context.Background(), p, id.File); err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) {
		t.Errorf("PNG after the interrupted request: %v", err)
	}
}
