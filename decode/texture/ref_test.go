package texture

import (
	"encoding/binary"
	"fmt"
	"image"
)

// The reference decoders below are written from the format documents
// (Microsoft's "Block Compression (Direct3D 10)" and the Truevision TGA
// 2.0 specification), independently of the libraries meshfs uses, to check
// their pixels. The specification interpolates in floating point and leaves
// the rounding to 8 bits open; these follow the common integer convention
// (bcdec's, and most software decoders'): endpoints are expanded to 8 bits
// rounded to the nearest, thirds, fifths and sevenths are rounded to the
// nearest, an exact half (BC1's 3-colour mode) is rounded down.

// rgb565 expands a 5:6:5 colour to 8 bits a channel, v·255/max rounded.
func rgb565(c uint16) [3]int {
	r, g, b := int(c>>11&31), int(c>>5&63), int(c&31)
	return [3]int{(r*255 + 15) / 31, (g*255 + 31) / 63, (b*255 + 15) / 31}
}

// refColorBlock decodes the 8-byte colour half of a BC1/BC2/BC3 block into
// 16 RGBA pixels; bc1 enables BC1's 3-colour mode with transparent black.
func refColorBlock(b []byte, bc1 bool, out *[16][4]uint8) {
	c0, c1 := binary.LittleEndian.Uint16(b), binary.LittleEndian.Uint16(b[2:])
	p0, p1 := rgb565(c0), rgb565(c1)
	var pal [4][4]int
	pal[0] = [4]int{p0[0], p0[1], p0[2], 255}
	pal[1] = [4]int{p1[0], p1[1], p1[2], 255}
	if c0 > c1 || !bc1 {
		for i := range 3 {
			pal[2][i] = (2*p0[i] + p1[i] + 1) / 3
			pal[3][i] = (p0[i] + 2*p1[i] + 1) / 3
		}
		pal[2][3], pal[3][3] = 255, 255
	} else {
		for i := range 3 {
			pal[2][i] = (p0[i] + p1[i]) / 2
		}
		pal[2][3] = 255
		pal[3] = [4]int{0, 0, 0, 0}
	}
	idx := binary.LittleEndian.Uint32(b[4:])
	for i := range 16 {
		c := pal[idx>>(2*i)&3]
		out[i] = [4]uint8{uint8(c[0]), uint8(c[1]), uint8(c[2]), uint8(c[3])}
	}
}

// refAlphaBlock decodes an 8-byte BC3/BC4 interpolated channel block.
func refAlphaBlock(b []byte) [16]uint8 {
	a0, a1 := int(b[0]), int(b[1])
	var pal [8]int
	pal[0], pal[1] = a0, a1
	if a0 > a1 {
		for i := 1; i <= 6; i++ {
			pal[i+1] = ((7-i)*a0 + i*a1 + 3) / 7
		}
	} else {
		for i := 1; i <= 4; i++ {
			pal[i+1] = ((5-i)*a0 + i*a1 + 2) / 5
		}
		pal[6], pal[7] = 0, 255
	}
	var bits uint64
	for i := 5; i >= 0; i-- {
		bits = bits<<8 | uint64(b[2+i])
	}
	var out [16]uint8
	for i := range 16 {
		out[i] = uint8(pal[bits>>(3*i)&7])
	}
	return out
}

// refBC decodes w×h pixels of the block format fourCC from data.
func refBC(fourCC string, data []byte, w, h int) (*image.NRGBA, error) {
	bs := 16
	if fourCC == "DXT1" {
		bs = 8
	}
	bw, bh := (w+3)/4, (h+3)/4
	if len(data) < bw*bh*bs {
		return nil, fmt.Errorf("%d bytes for %d blocks", len(data), bw*bh)
	}
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for by := range bh {
		for bx := range bw {
			b := data[(by*bw+bx)*bs:][:bs]
			var px [16][4]uint8
			switch fourCC {
			case "DXT1":
				refColorBlock(b, true, &px)
			case "DXT3":
				refColorBlock(b[8:], false, &px)
				for i := range 16 {
					a := b[i/2] >> (4 * (i % 2)) & 15
					px[i][3] = a<<4 | a
				}
			case "DXT5":
				refColorBlock(b[8:], false, &px)
				a := refAlphaBlock(b)
				for i := range 16 {
					px[i][3] = a[i]
				}
			case "ATI2":
				r, g := refAlphaBlock(b), refAlphaBlock(b[8:])
				for i := range 16 {
					px[i] = [4]uint8{r[i], g[i], 0, 255}
				}
			default:
				return nil, fmt.Errorf("no reference decoder for %q", fourCC)
			}
			for i := range 16 {
				x, y := bx*4+i%4, by*4+i/4
				if x < w && y < h {
					copy(img.Pix[y*img.Stride+4*x:], px[i][:])
				}
			}
		}
	}
	return img, nil
}

// refDDS decodes mip 0 of a legacy-FourCC DDS file.
func refDDS(b []byte) (*image.NRGBA, string, error) {
	if len(b) < 128 || string(b[:4]) != "DDS " {
		return nil, "", fmt.Errorf("not a DDS file")
	}
	h, w := int(binary.LittleEndian.Uint32(b[12:])), int(binary.LittleEndian.Uint32(b[16:]))
	const pfFourCC, pfRGB = 0x4, 0x40
	flags := binary.LittleEndian.Uint32(b[80:])
	if flags&pfFourCC == 0 && flags&pfRGB != 0 {
		img, err := refMasked(b, w, h)
		return img, "", err
	}
	fourCC := string(b[84:88])
	img, err := refBC(fourCC, b[128:], w, h)
	return img, fourCC, err
}

// refMasked decodes an uncompressed DDS of 24 or 32 bits a pixel by its
// pixel format's channel masks (a zero alpha mask: opaque).
func refMasked(b []byte, w, h int) (*image.NRGBA, error) {
	le := binary.LittleEndian
	bits := int(le.Uint32(b[88:]))
	if bits != 24 && bits != 32 {
		return nil, fmt.Errorf("%d bits a pixel", bits)
	}
	masks := [4]uint32{le.Uint32(b[92:]), le.Uint32(b[96:]), le.Uint32(b[100:]), le.Uint32(b[104:])}
	bpp := bits / 8
	data := b[128:]
	if len(data) < w*h*bpp {
		return nil, fmt.Errorf("short pixel data")
	}
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for i := range w * h {
		var v uint32
		for k := range bpp {
			v |= uint32(data[i*bpp+k]) << (8 * k)
		}
		for c, m := range masks {
			out := uint8(255)
			if m != 0 {
				shift := bitsTrailing(m)
				out = uint8((v & m) >> shift * 255 / (m >> shift))
			}
			img.Pix[4*i+c] = out
		}
	}
	return img, nil
}

func bitsTrailing(m uint32) int {
	n := 0
	for m&1 == 0 {
		m >>= 1
		n++
	}
	return n
}

// refTGA decodes an uncompressed true-colour TGA (type 2, 24 or 32 bits).
func refTGA(b []byte) (*image.NRGBA, error) {
	if len(b) < 18 || b[2] != 2 || (b[16] != 24 && b[16] != 32) {
		return nil, fmt.Errorf("not an uncompressed 24/32-bit TGA")
	}
	w, h := int(binary.LittleEndian.Uint16(b[12:])), int(binary.LittleEndian.Uint16(b[14:]))
	bpp := int(b[16]) / 8
	topDown := b[17]&0x20 != 0
	rightToLeft := b[17]&0x10 != 0
	data := b[18+int(b[0]):]
	if len(data) < w*h*bpp {
		return nil, fmt.Errorf("short pixel data")
	}
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for row := range h {
		y := h - 1 - row
		if topDown {
			y = row
		}
		for col := range w {
			x := col
			if rightToLeft {
				x = w - 1 - col
			}
			p := data[(row*w+col)*bpp:]
			a := uint8(255)
			if bpp == 4 {
				a = p[3]
			}
			copy(img.Pix[y*img.Stride+4*x:], []uint8{p[2], p[1], p[0], a})
		}
	}
	return img, nil
}
