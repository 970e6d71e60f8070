package vfs

import (
	"context"
	"errors"
	"io"
	"path"
	"strings"

	"github.com/meshfs/meshfs/export/outputs"
)

// MakeFolder makes the folder name of t that a mesh or model shows (an
// entry of Kind SourceMesh) by the one rule of every copy of it (`meshfs
// convert` and `check`, vfstest): each entry its listing shows, and each
// entry of a folder it shows (chunks/), a folder before what it holds, is
// handed to made with its slash-separated name beneath the folder and its
// Info: a folder as listed, with a nil File; a file opened, which converts
// it, for made to read before it returns (the File is closed then). When
// an entry fails (its open, a folder's listing, or made), the folder's
// listing has changed (error.txt in, the geometry out): the folder is made
// once more from a new listing, each entry handed to made again with pass
// 1.
//
// It returns the names the first listing shows that the last lacks (a
// copy removes them), and the folder's failure: error.txt's text when the
// last listing shows it, then the errors of the last pass (nil when there
// is neither). An entry whose name is not one plain element (no Tree lists
// such) is skipped.
func MakeFolder(ctx context.Context, t Tree, name string, made func(pass int, rel string, i Info, f File) error) (gone []string, err error) {
	var first, listed []Info
	var errs []error
	for pass := range 2 {
		errs = nil
		list, err := t.ReadDir(ctx, name)
		if err != nil {
			errs = append(errs, err)
			break
		}
		if pass == 0 {
			first = list
		}
		listed = list
		for _, e := range list {
			if plainElem(e.Name) {
				if err := makeEntry(ctx, t, pass, path.Join(name, e.Name), e.Name, e, made); err != nil {
					errs = append(errs, err)
				}
			}
		}
		if len(errs) == 0 {
			break
		}
	}
	shown := map[string]bool{}
	for _, e := range listed {
		shown[e.Name] = true
	}
	for _, e := range first {
		if plainElem(e.Name) && !shown[e.Name] {
			gone = append(gone, e.Name)
		}
	}
	if shown[outputs.ErrorName] {
		b, err := ReadFile(ctx, t, path.Join(name, outputs.ErrorName))
		text := strings.TrimSpace(string(b))
		if err != nil {
			text = err.Error()
		}
		errs = append([]error{errors.New(text)}, errs...)
	}
	return gone, errors.Join(errs...)
}

// makeEntry hands the entry name of t (rel beneath the folder made, listed
// as e) to made, and a folder's entries after it.
func makeEntry(ctx context.Context, t Tree, pass int, name, rel string, e Info, made func(int, string, Info, File) error) error {
	if !e.IsDir() {
		f, err := t.Open(ctx, name)
		if err != nil {
			return err
		}
		defer f.Close()
		return made(pass, rel, f.Info(), f)
	}
	if err := made(pass, rel, e, nil); err != nil {
		return err
	}
	list, err := t.ReadDir(ctx, name)
	if err != nil {
		return err
	}
	var errs []error
	for _, c := range list {
		if plainElem(c.Name) {
			if err := makeEntry(ctx, t, pass, path.Join(name, c.Name), rel+"/"+c.Name, c, made); err != nil {
				errs = append(errs, err)
			}
		}
	}
	return errors.Join(errs...)
}

// plainElem reports whether n is one plain name element: not empty, "."
// or "..", holding no slash or NUL.
func plainElem(n string) bool {
	return n != "" && n != "." && n != ".." && !strings.ContainsAny(n, "/\x00")
}

// ReadFile reads the file name of t whole, as io/fs.ReadFile does.
func ReadFile(ctx context.Context, t Tree, name string) ([]byte, error) {
	f, err := t.Open(ctx, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.NewSectionReader(f, 0, f.Info().Size))
}
