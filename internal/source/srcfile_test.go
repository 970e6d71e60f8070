package source

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
)

// tree makes a folder with a regular file, a FIFO, a link out of the
// folder, a link to a sibling and a folder holding a file.
func tree(t *testing.T) (dir, secret string) {
	t.Helper()
	root := t.TempDir()
	secret = filepath.Join(root, "secret")
	if err := os.WriteFile(secret, []byte("SECRET"), 0o600); err != nil {
		t.Fatal(err)
	}
	dir = filepath.Join(root, "src")
	os.Mkdir(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "plain"), []byte("plain"), 0o644)
	if err := syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Symlink(secret, filepath.Join(dir, "out"))
	os.Symlink("../secret", filepath.Join(dir, "up"))
	os.Symlink("plain", filepath.Join(dir, "beside"))
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "sub", "f"), []byte("sub"), 0o644)
	os.Symlink(filepath.Join(dir, "sub"), filepath.Join(dir, "sublink"))
	return dir, secret
}

func read(t *testing.T, f *os.File, err error) string {
	t.Helper()
	if err != nil {
		return "error: " + err.Error()
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Each case could block for good (a FIFO with no writer) or leak the
// secret if a rule broke; a blocked open fails the test by its timeout.
func TestOpen(t *testing.T) {
	for _, fallback := range []bool{false, true} {
		t.Run(map[bool]string{false: "openat2", true: "fallback"}[fallback], func(t *testing.T) {
			was := noOpenat2.Load()
			noOpenat2.Store(was || fallback)
			defer noOpenat2.Store(was)
			dir, _ := tree(t)
			p := func(n string) string { return filepath.Join(dir, n) }

			f, err := Open(p("plain"))
			if got := read(t, f, err); got != "plain" {
				t.Errorf("plain: %s", got)
			}
			for _, c := range []struct {
				name string
				want error
				msg  string
			}{
				{"fifo", ErrNotRegular, "not a regular file (fifo)"},
				{"sub", ErrNotRegular, "not a regular file (directory)"},
				{"out", ErrSymlink, "not followed"},
				{"beside", ErrSymlink, "not followed"},
				{"sublink/f", ErrSymlink, "not followed"},
			} {
				if fallback && c.name == "sublink/f" {
					continue // O_NOFOLLOW guards the last component only
				}
				f, err := Open(p(c.name))
				if err == nil {
					f.Close()
					t.Errorf("Open(%s) succeeded", c.name)
					continue
				}
				if !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.msg) || !strings.Contains(err.Error(), p(c.name)) {
					t.Errorf("Open(%s): %v, want %v naming the path", c.name, err, c.want)
				}
			}

			d, err := OpenDir(dir)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			f, err = d.Open("plain")
			if got := read(t, f, err); got != "plain" {
				t.Errorf("Dir.Open(plain): %s", got)
			}
			f, err = d.Open("beside")
			if got := read(t, f, err); fallback != strings.HasPrefix(got, "error: ") {
				t.Errorf("Dir.Open(beside), a link to a sibling: %s", got)
			}
			for _, n := range []string{"out", "up", "fifo", "../secret", "/etc/passwd", "sub"} {
				f, err := d.Open(n)
				if got := read(t, f, err); !strings.HasPrefix(got, "error: ") {
					t.Errorf("Dir.Open(%s) = %q, want an error", n, got)
				} else {
					t.Logf("Dir.Open(%s): %s", n, got)
				}
			}
			// O_NOFOLLOW|O_DIRECTORY on a link: ENOTDIR.
			if _, err := OpenDir(p("sublink")); !errors.Is(err, ErrSymlink) && !(fallback && errors.Is(err, syscall.ENOTDIR)) {
				t.Errorf("OpenDir(sublink): %v", err)
			}

			if _, err := OpenFolder(p("fifo")); err == nil || !errors.Is(err, syscall.ENOTDIR) {
				t.Errorf("OpenFolder(fifo): %v", err)
			}
			if _, err := OpenFolder(p("sublink")); !errors.Is(err, ErrSymlink) && !(fallback && errors.Is(err, syscall.ENOTDIR)) {
				t.Errorf("OpenFolder(sublink): %v", err)
			}
			ents, err := ReadDir(dir)
			if err != nil || len(ents) != 7 || ents[0].Name() != "beside" {
				t.Errorf("ReadDir: %v, %v", ents, err)
			}
		})
	}
}

// TestWalkDir: WalkDir visits what filepath.WalkDir visits, in the same
// order, and follows a root that is a link to a folder but no link below.
func TestWalkDir(t *testing.T) {
	dir, _ := tree(t)
	os.Mkdir(filepath.Join(dir, "sub", "deeper"), 0o755)
	os.WriteFile(filepath.Join(dir, "sub", "deeper", "g"), nil, 0o644)
	list := func(walk func(string, fs.WalkDirFunc) error, root string) []string {
		var got []string
		err := walk(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			got = append(got, fmt.Sprintf("%s %v", strings.TrimPrefix(p, root), d.Type()))
			if d.Name() == "deeper" {
				return fs.SkipDir
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	want, got := list(filepath.WalkDir, dir), list(WalkDir, dir)
	if !slices.Equal(got, want) {
		t.Errorf("WalkDir: %q\nfilepath.WalkDir: %q", got, want)
	}
	if got := list(WalkDir, filepath.Join(dir, "sublink")); !slices.Equal(got, []string{" d---------", "/deeper d---------", "/f ----------"}) {
		t.Errorf("through a root link: %q", got)
	}
	if got := list(WalkDir, filepath.Join(dir, "fifo")); !slices.Equal(got, []string{" p---------"}) {
		t.Errorf("a FIFO root: %q", got)
	}
}

func TestOpenSame(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a")
	if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := OpenSame(p, func(*syscall.Stat_t) bool { return true })
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := OpenSame(p, func(*syscall.Stat_t) bool { return false }); err != syscall.ESTALE {
		t.Fatalf("another file: %v, want ESTALE", err)
	}
	if _, err := OpenSame(p+"-missing", func(*syscall.Stat_t) bool { return true }); !os.IsNotExist(err) {
		t.Fatalf("a missing file: %v", err)
	}
}
