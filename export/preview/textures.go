package preview

import (
	"image"
	"sync"
)

// TextureCache keeps base-colour textures decoded for the pictures that
// follow, up to a byte budget of decoded pixels: many meshes (a model's
// parts, a folder of props) draw the same texture. A texture is known by
// its PNG's bytes themselves (the same slice: the texture cache of
// export/outputs hands every mesh the one encoding of a texture version),
// not by their content, so a lookup costs no hashing; an entry holds its
// PNG alive until it is dropped, so no other PNG can take its key. The
// oldest entries go first when the budget is passed. Safe for concurrent
// use; the zero value is not ready, NewTextureCache is.
type TextureCache struct {
	mu     sync.Mutex
	budget int64
	bytes  int64
	m      map[texKey]*image.NRGBA
	order  []texKey // oldest first

	decodes int64
}

// texKey is a PNG's identity: its first byte's address and its length.
type texKey struct {
	first *byte
	n     int
}

// NewTextureCache is a cache of up to budget bytes of decoded pixels.
func NewTextureCache(budget int64) *TextureCache {
	return &TextureCache{budget: budget, m: map[texKey]*image.NRGBA{}}
}

// Decodes is how many textures the cache has decoded.
func (c *TextureCache) Decodes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.decodes
}

// decode is PNG b decoded (decodePNG), from the cache when it holds it.
// Two pictures asking at once for the same texture may both decode it.
func (c *TextureCache) decode(b []byte) *image.NRGBA {
	if len(b) == 0 {
		return decodePNG(b)
	}
	k := texKey{&b[0], len(b)}
	c.mu.Lock()
	px, ok := c.m[k]
	c.mu.Unlock()
	if ok {
		return px
	}
	px = decodePNG(b)
	var n int64
	if px != nil {
		n = int64(len(px.Pix))
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.decodes++
	if _, ok := c.m[k]; ok || n > c.budget {
		return px
	}
	for c.bytes+n > c.budget && len(c.order) > 0 {
		old := c.order[0]
		c.order = c.order[1:]
		if o := c.m[old]; o != nil {
			c.bytes -= int64(len(o.Pix))
		}
		delete(c.m, old)
	}
	c.m[k] = px
	c.order = append(c.order, k)
	c.bytes += n
	return px
}
