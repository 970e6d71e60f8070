package tfever

import (
	"context"
	"path/filepath"
	"testing"
)

// BenchmarkDecode measures one Decode of the Train Fever fixture (script run
// in the sandbox, blob read, vertices joined).
func BenchmarkDecode(b *testing.B) {
	src := fileSource(b, filepath.Join(fixtureDir, "trainfever_door.msh"))
	for b.Loop() {
		if _, err := (Msh{}).Decode(context.Background(), src); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkScan measures header.json's cost: the script and the layout only.
func BenchmarkScan(b *testing.B) {
	src := fileSource(b, filepath.Join(fixtureDir, "trainfever_door.msh"))
	for b.Loop() {
		if _, err := (Msh{}).Scan(context.Background(), src); err != nil {
			b.Fatal(err)
		}
	}
}
