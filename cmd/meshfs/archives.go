package main

import (
	"fmt"

	"github.com/spf13/cobra"
	"io/fs"
	"path"
	"path/filepath"

	"github.com/meshfs/meshfs/decode"
	"github.com/meshfs/meshfs/decode/formats"
	"github.com/meshfs/meshfs/export/outputs"
	"github.com/meshfs/meshfs/internal/archive"
	"github.com/meshfs/meshfs/internal/srcfile"
	"github.com/meshfs/meshfs/internal/srcview"
)

// sniffArchive reports whether the regular file at p is an archive, by its
// first bytes (archive.Sniff).
func sniffArchive(p string) bool {
	f, err := srcview.Disk.Open(p)
	if err != nil {
		return false
	}
	defer f.Close()
	return srcview.IsArchive(f)
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

// archiveJobs lists the archive at p (a real path) and gives a job for
// each mesh entry in it, by the mount's rule of what is a mesh (its name
// and first bytes; companions have no folder of their own), placed at
// rel/<entry path>. Each is read through the source view (srcview), at
// its path beneath the archive's, with tree as its Mesh.Tree: the parts,
// companions, materials, textures and animations it names resolve inside
// the archive as in a loose folder. An archive in it is a file, unless
// nesting is on (--nested) and the view v Descends it: its meshes are
// then jobs too, at rel/<entry path>/<their path>.
func archiveJobs(v *srcview.Packed, p, rel, tree string) []meshJob {
	a, _, _, listErr := v.Archive(p)
	if a == nil {
		if listErr == nil {
			listErr = fmt.Errorf("%s: not an archive", p)
		}
		return []meshJob{{path: p, err: listErr}}
	}
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
		at, atRel := p+"/"+e.Path, filepath.Join(rel, filepath.FromSlash(e.Path))
		if format == nil && err == nil {
			if v.Descends(at) {
				jobs = append(jobs, archiveJobs(v, at, atRel, tree)...)
			}
			return nil
		}
		j := meshJob{path: at, rel: atRel, err: err}
		j.load = func() (*outputs.Mesh, error) {
			m := outputs.New(j.path, format)
			m.Tree = tree
			return m, nil
		}
		jobs = append(jobs, j)
		return nil
	})
	return jobs
}

// sniffEntry sniffs an entry as outputs.OpenSource does a file.
func sniffEntry(a *archive.Archive, e *archive.Entry) (decode.Format, error) {
	head, err := a.Head(e, formats.HeadSize)
	if err != nil {
		return nil, err
	}
	return formats.Sniff(e.Name(), head), nil
}

// sourceView is a command's own view of the sources (srcview.NewView),
// archives inside archives descended when nested is set (--nested).
func sourceView(nested bool) *srcview.Packed {
	v := srcview.NewView()
	v.SetNested(nested)
	return v
}

// addNestedFlag adds --nested, shared by convert and the mount: archives
// inside archives are descended as folders (srcview.Packed.SetNested).
func addNestedFlag(cmd *cobra.Command, on *bool) {
	cmd.Flags().BoolVar(on, "nested", false, fmt.Sprintf("descend archives inside archives as folders (at most %d deep, entries up to %d MiB)", srcview.MaxNesting, srcview.MaxNested>>20))
}
