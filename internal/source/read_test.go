package source

import (
	"bytes"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestSpan(t *testing.T) {
	for _, c := range []struct {
		want        int
		off, length int64
		n           int
		e           syscall.Errno
	}{
		{10, 0, 100, 10, 0},
		{10, 95, 100, 5, 0},
		{10, 100, 100, 0, 0},
		{10, 200, 100, 0, 0},
		{10, 5, -1, 10, 0},
		{10, -1, 100, 0, syscall.EINVAL},
	} {
		if n, e := Span(c.want, c.off, c.length); n != c.n || e != c.e {
			t.Errorf("Span(%d, %d, %d) = %d, %v; want %d, %v", c.want, c.off, c.length, n, e, c.n, c.e)
		}
	}
}

func TestPreadFull(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	data := bytes.Repeat([]byte("0123456789"), 1000)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, 4000)
	if n, err := PreadFull(int(f.Fd()), buf, 3); err != nil || n != 4000 || !bytes.Equal(buf, data[3:4003]) {
		t.Fatalf("middle: %d, %v", n, err)
	}
	if n, err := PreadFull(int(f.Fd()), buf, 9000); err != nil || n != 1000 || !bytes.Equal(buf[:n], data[9000:]) {
		t.Fatalf("to the end: %d, %v", n, err)
	}
	if _, err := PreadFull(-1, buf, 0); err == nil {
		t.Fatal("a read of a closed descriptor succeeded")
	}
}
