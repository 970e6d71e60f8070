package store

import (
	"testing"

	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/internal/source"
)

// What the tests outside the package (store_test) reach of its insides.

// GemMesh is gemMesh.
func GemMesh(t *testing.T, n int, frac float64) (*Store, *outputs.Mesh, source.Version) {
	return gemMesh(t, n, frac)
}

// Loads is the memory cache's count of loads labelled label.
func Loads(s *Store, label string) int64 { return s.cache.Stats().Loads[label] }

// Evict drops every output of the source at path from memory, as the
// budget would.
func Evict(s *Store, path string) { s.cache.Invalidate(path) }
