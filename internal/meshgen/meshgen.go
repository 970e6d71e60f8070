// Package meshgen makes large source meshes for the tests and benchmarks
// of the mount and its policy packages (memory bound, first-read
// throughput), each with that format's own encoder.
package meshgen

import (
	"fmt"
	"math"

	"github.com/meshfs/meshfs/decode/gem"
)

// GEM returns a GEM .ply (BPLY, one SUBM-AS2 surface, 32-bit indices) of
// about triangles triangles: a bent grid whose coordinates depend on seed,
// so that files of equal size still convert to different bytes.
func GEM(triangles int, seed float32) ([]byte, error) {
	n := max(1, int(math.Sqrt(float64(triangles)/2)))
	b, err := gem.GridFile(n, seed)
	if err != nil {
		return nil, fmt.Errorf("meshgen: %w", err)
	}
	return b, nil
}
