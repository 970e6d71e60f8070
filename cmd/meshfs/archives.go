package main

import (
	"fmt"
	"io"
	"io/fs"
	"path"
	"path/filepath"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/formats"
	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/internal/archive"
	"github.com/meshfs/meshfs/internal/srcfile"
)

// sniffArchive reports whether the regular file at p is an archive, by its
// first bytes (archive.Sniff).
func sniffArchive(p string) bool {
	f, err := srcfile.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	var head [4]byte
	n, _ := io.ReadFull(f, head[:])
	return archive.Sniff(head[:n])
}

// archivesUnder finds the archives under the folder root, in lexical
// order, by srcfile.WalkDir's rule (no link followed, no FIFO opened):
// their paths and their paths relative to root.
func archivesUnder(root string) (paths, rels []string) {
	srcfile.WalkDir(root, func(p string, de fs.DirEntry, err error) error {
		if err != nil || !de.Type().IsRegular() {
			return nil
		}
		if m, _ := outputs.Open(p); m != nil || !sniffArchive(p) {
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		paths, rels = append(paths, p), append(rels, rel)
		return nil
	})
	return paths, rels
}

// archiveJobs lists the archive at p and gives a job for each mesh entry
// in it, by the mount's rule of what is a mesh (its name and first bytes;
// companions have no folder of their own), placed at rel/<entry path>. A
// mesh is converted from memory (outputs.NewMemory) with the companions
// and animation files of its archive folder. Nested archives are files,
// not descended. The archive file stays open for the process's life.
func archiveJobs(p, rel string, limits outputs.Limits) []meshJob {
	f, err := srcfile.Open(p)
	if err != nil {
		return []meshJob{{path: p, err: err}}
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return []meshJob{{path: p, err: err}}
	}
	al := archive.DefaultLimits
	al.MaxInflate = limits.MaxSourceSize
	a, listErr := archive.Open(f, fi.Size(), p, al)
	var jobs []meshJob
	if listErr != nil {
		jobs = append(jobs, meshJob{path: p, err: listErr})
	}
	a.Walk(func(e *archive.Entry) error {
		if e.IsDir() {
			return nil
		}
		dir, name := path.Split(e.Path)
		exists := func(n string) bool { _, ok := a.Lookup(path.Join(dir, n)); return ok }
		if formats.IsCompanion(name, exists) {
			return nil
		}
		format, err := sniffEntry(a, e)
		if format == nil && err == nil {
			return nil
		}
		j := meshJob{path: p + "/" + e.Path, rel: filepath.Join(rel, filepath.FromSlash(e.Path)), err: err}
		j.load = func() (*outputs.Mesh, error) { return entryMesh(a, e, format, j.path, limits.MaxSourceSize) }
		jobs = append(jobs, j)
		return nil
	})
	return jobs
}

// sniffEntry sniffs an entry as formats.SniffFile does a file.
func sniffEntry(a *archive.Archive, e *archive.Entry) (decode.Format, error) {
	head, err := a.Head(e, formats.HeadSize)
	if err != nil {
		return nil, err
	}
	return formats.Sniff(e.Name(), head), nil
}

// entryMesh reads a mesh entry, the companions its format names and the
// animation files beside it, each of at most max bytes, into an in-memory
// mesh called name.
func entryMesh(a *archive.Archive, e *archive.Entry, f decode.Format, name string, max int64) (*outputs.Mesh, error) {
	b, err := a.ReadFile(e, max)
	if err != nil {
		return nil, err
	}
	files := map[string][]byte{e.Name(): b}
	var extra []string
	if c, ok := f.(decode.Companion); ok {
		extra = c.Companions(e.Name())
	}
	dir, _ := path.Split(e.Path)
	if _, ok := f.(decode.Animator); ok {
		for _, s := range a.ReadDir(path.Clean(dir)) {
			if !s.IsDir() && formats.IsAnimationFile(s.Name()) {
				extra = append(extra, s.Name())
			}
		}
	}
	for _, n := range extra {
		ce, ok := a.Lookup(path.Join(dir, n))
		if !ok || ce.IsDir() {
			continue // a missing companion is the mesh's to report
		}
		cb, err := a.ReadFile(ce, max)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		files[n] = cb
	}
	return outputs.NewMemory(name, f, files), nil
}
