package kernelview

import (
	"slices"
	"testing"
)

func TestDropOrder(t *testing.T) {
	held, neg := DropOrder([]string{"header.json", "m.glb", "chunks"}, []string{"header.json", "chunks", "m.glb", "m.obj", "error.txt"}, "header.json")
	if len(held) != 3 || held[2] != "header.json" || !slices.Contains(held, "m.glb") || !slices.Contains(held, "chunks") {
		t.Fatalf("held %v: header.json must come last", held)
	}
	if !slices.Equal(neg, []string{"m.obj", "error.txt"}) {
		t.Fatalf("negative %v", neg)
	}
	if held, neg := DropOrder(nil, nil, "header.json"); len(held) != 0 || len(neg) != 0 {
		t.Fatalf("empty folder: %v %v", held, neg)
	}
}
