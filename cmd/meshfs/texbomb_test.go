package main

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/woozymasta/bcn"

	"github.com/meshfs/meshfs/decode/decodetest"
	"github.com/meshfs/meshfs/export/outputs"
)

// bombSide is the side of the texture bombs: Direct3D's largest, 1 GiB
// of RGBA decoded.
const bombSide = 16384

// TestTextureBombs: a mesh whose material names a 16384² texture (PNG
// bytes named .dds, a DXT1 .dds with and without mips, a run-length TGA)
// converts with `meshfs convert --timeout 20s` within the timeout + 5 s and
// under 1 GiB of peak RSS (the child's rusage); the DDS with mips is
// embedded from a smaller level, said in the .glb, the others are left out
// naming --max-texture-pixels. The files are made here, in a temporary
// folder (up to 171 MiB).
func TestTextureBombs(t *testing.T) {
	ply, err := os.ReadFile(filepath.Join("..", "..", "testdata", "gem", "eply_tangents_textures.ply"))
	if err != nil {
		t.Fatal(err)
	}
	const timeout = 20 * time.Second
	for _, tc := range []struct {
		name, file string
		write      func(w *bufio.Writer)
		embedded   bool
	}{
		{"png named dds", "hull.dds", writePNGBomb, false},
		{"dxt1 with mips", "hull.dds", func(w *bufio.Writer) { writeDXT1Bomb(t, w, true) }, true},
		{"dxt1 without mips", "hull.dds", func(w *bufio.Writer) { writeDXT1Bomb(t, w, false) }, false},
		{"rle tga", "hull.tga", writeTGABomb, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mesh := bombMesh(t, ply, tc.file, tc.write)
			out := filepath.Join(t.TempDir(), "out")
			cmd := exec.Command(meshfsBin, "convert", "-o", out, "--timeout", timeout.String(), mesh)
			start := time.Now()
			msg, err := cmd.CombinedOutput()
			took := time.Since(start)
			if err != nil {
				t.Fatalf("convert: %v\n%s", err, msg)
			}
			rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10 // KiB on Linux
			t.Logf("%s: %v, peak RSS %d MiB", tc.name, took.Round(time.Millisecond), rss>>20)
			if took > timeout+5*time.Second {
				t.Errorf("took %v, more than --timeout %v + 5 s", took, timeout)
			}
			if rss > 1<<30 {
				t.Errorf("peak RSS %d MiB, over 1 GiB", rss>>20)
			}
			glb, err := os.ReadFile(filepath.Join(out, "body.ply", "body.glb"))
			if err != nil {
				t.Fatal(err)
			}
			embedded := bytes.Contains(glb, []byte(`"images"`))
			noted := bytes.Contains(glb, []byte("mip level 2 (4096×4096) of a 16384×16384 texture")) &&
				bytes.Contains(glb, []byte(outputs.FlagMaxTexturePixels))
			if embedded != tc.embedded || noted != tc.embedded {
				t.Errorf("texture embedded %v, its downscale noted %v; want %v", embedded, noted, tc.embedded)
			}
		})
	}
}

// TestTextureDeadline: with no pixel cap, a 16384² DXT1's decoding stops
// at --timeout: the conversion fails naming the limit within it + 5 s
// (without the deadline inside decoding it converts, in 6.8 s here).
func TestTextureDeadline(t *testing.T) {
	ply, err := os.ReadFile(filepath.Join("..", "..", "testdata", "gem", "eply_tangents_textures.ply"))
	if err != nil {
		t.Fatal(err)
	}
	mesh := bombMesh(t, ply, "hull.dds", func(w *bufio.Writer) { writeDXT1Bomb(t, w, true) })
	out := filepath.Join(t.TempDir(), "out")
	const timeout = time.Second
	start := time.Now()
	msg, err := exec.Command(meshfsBin, "convert", "-o", out, "--timeout", timeout.String(), "--"+outputs.FlagMaxTexturePixels, "0", mesh).CombinedOutput()
	took := time.Since(start)
	t.Logf("%v: %s", took.Round(time.Millisecond), msg)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Fatalf("convert: %v, want exit status 1 (the timeout)\n%s", err, msg)
	}
	if took > timeout+5*time.Second {
		t.Errorf("took %v, more than --timeout %v + 5 s", took, timeout)
	}
	txt, err := os.ReadFile(filepath.Join(out, "body.ply", outputs.ErrorName))
	if err != nil || !strings.Contains(string(txt), outputs.FlagTimeout+" limit") {
		t.Errorf("error.txt %q (%v) does not name --%s", txt, err, outputs.FlagTimeout)
	}
}

// bombMesh writes, in a temporary folder, the GEM fixture mesh with a
// material whose base colour is the texture file, written by write, and
// returns the mesh's path.
func bombMesh(t *testing.T, ply []byte, file string, write func(w *bufio.Writer)) string {
	dir := t.TempDir()
	mesh := filepath.Join(dir, "body.ply")
	if err := os.WriteFile(mesh, ply, 0o644); err != nil {
		t.Fatal(err)
	}
	mtl := "{material bump\n\t{diffuse \"" + file + "\"}\n}\n"
	if err := os.WriteFile(filepath.Join(dir, "body.mtl"), []byte(mtl), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(filepath.Join(dir, file))
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	write(w)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return mesh
}

// writeDXT1Bomb writes a 16384² BC1 DDS of zero blocks, with its mip chain
// when mips is set (128 MiB for the top level).
func writeDXT1Bomb(t *testing.T, w *bufio.Writer, mips bool) {
	hdr := decodetest.DDS(t, image.NewNRGBA(image.Rect(0, 0, 4, 4)), bcn.FormatBC1, false)[:128]
	levels := 1
	if mips {
		levels = 15
	}
	le := binary.LittleEndian
	le.PutUint32(hdr[12:], bombSide)
	le.PutUint32(hdr[16:], bombSide)
	le.PutUint32(hdr[28:], uint32(levels))
	w.Write(hdr)
	zero := make([]byte, 1<<20)
	for l, s := 0, bombSide; l < levels; l, s = l+1, max(s/2, 1) {
		n := ((s + 3) / 4) * ((s + 3) / 4) * 8
		for ; n > 0; n -= len(zero) {
			w.Write(zero[:min(n, len(zero))])
		}
	}
}

// writeTGABomb writes a 16384² run-length true-colour TGA: runs of 128
// pixels, 5 bytes each (10 MiB).
func writeTGABomb(w *bufio.Writer) {
	hdr := []byte{0, 0, 10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 32, 0x28}
	binary.LittleEndian.PutUint16(hdr[12:], bombSide)
	binary.LittleEndian.PutUint16(hdr[14:], bombSide)
	w.Write(hdr)
	for range bombSide * bombSide / 128 {
		w.Write([]byte{0xff, 10, 20, 30, 255})
	}
}

// writePNGBomb writes a 16384² grey PNG of zeros (the IDAT deflated to
// about 256 KiB; 1 GiB when decoded to RGBA).
func writePNGBomb(w *bufio.Writer) {
	chunk := func(typ string, data []byte) {
		var n [4]byte
		binary.BigEndian.PutUint32(n[:], uint32(len(data)))
		w.Write(n[:])
		crc := crc32.NewIEEE()
		crc.Write([]byte(typ))
		crc.Write(data)
		w.WriteString(typ)
		w.Write(data)
		binary.BigEndian.PutUint32(n[:], crc.Sum32())
		w.Write(n[:])
	}
	w.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], bombSide)
	binary.BigEndian.PutUint32(ihdr[4:], bombSide)
	ihdr[8] = 8 // bit depth; colour type 0: grey
	chunk("IHDR", ihdr)
	var idat bytes.Buffer
	z, _ := zlib.NewWriterLevel(&idat, zlib.BestCompression)
	row := make([]byte, 1+bombSide) // filter 0, then the row
	for range bombSide {
		z.Write(row)
	}
	z.Close()
	chunk("IDAT", idat.Bytes())
	chunk("IEND", nil)
}
