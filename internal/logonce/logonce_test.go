package logonce

import (
	"bytes"
	"log"
	"strings"
	"testing"
)

func TestOnce(t *testing.T) {
	var b bytes.Buffer
	l := New(log.New(&b, "", 0))
	l.Printf("a", "first %d", 1)
	l.Printf("a", "second %d", 2)
	l.Printf("b", "other")
	if got := b.String(); got != "first 1\nother\n" || strings.Contains(got, "second") {
		t.Fatalf("logged %q", got)
	}
}
