// Package source is how meshfs reads its source, for the mount, `convert`
// and what decoders are handed alike, in three parts:
//
//   - opening (srcfile.go): Open, OpenDir and Dir are the one way a file is
//     opened: regular files only, never blocking, checked on the
//     descriptor, no symbolic link followed below the mounted root;
//   - the view (view.go): a View (Packed, made by New or NewView) is the
//     one view of the source tree export/outputs reads through, each
//     archive a folder of its entries beneath its own path;
//   - versions (version.go): Ident, Set, Version and Tracker say which
//     version of its files an output was made from, the one place where
//     staleness is decided.
//
// It knows nothing of FUSE or of file formats.
package source
