// Package hostile holds the hostile-corpus test of meshfs: from every
// fixture under testdata/ and every real file under ../shared/realdata, it
// generates broken and malicious variants (truncations at every chunk
// boundary and at random points, byte flips, counts and offsets replaced by
// 0, −1, 2^31−1 and 2^32−1, floats set to NaN or ±Inf (which decoders
// repair), sizes that lie, companion blobs that lie, Lua
// scripts that loop, recurse, build huge strings or tables, or reach for
// os/io/require) and converts each one as `meshfs convert` and the mount
// do (the store's functions, each output on its own: produce), in memory,
// under a deadline. No variant may panic, hang, escape its
// folder, or allocate more than the bound stated in hostile_test.go.
//
// It lives beside export/outputs, not under decode/, because it tests the
// path the CLI and the mount share, across every format at once; it needs
// the registry (decode/formats) and every format's encoder. Its regression
// fixtures (variants that once failed) are in testdata/regress/, not in the
// repository's testdata/, whose every file must convert.
//
// The default `go test` run tries a deterministic sample of the variants
// (a few thousand, seconds); MESHFS_HOSTILE=full tries all of them with
// more random points (`make test-hostile`). MESHFS_HOSTILE_SEED picks the
// random seed of the full run; MESHFS_HOSTILE_SAVE names a folder where
// failing variants are saved (default: a new temporary folder, logged).
package hostile
