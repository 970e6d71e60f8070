// Package archive lists and reads ZIP archives (`.zip`, and the `.pak` files
// of the GEM engine games, which are ordinary ZIPs) in place, for meshfs to
// show each as a folder of its entries. It knows nothing of FUSE, of mesh
// formats or of exporters: it gives a tree of entries and readers of their
// bytes, and says what it refused and why.
//
// This is the specification of what is accepted and what is refused.
//
// # What is an archive
//
// A file is an archive when its first bytes are a ZIP local file header
// ("PK\x03\x04") or an empty archive's end record ("PK\x05\x06"), whatever
// its name (Sniff). Open then looks for the end of central directory record
// in the last 64 KiB + 22 bytes, and for the ZIP64 locator right before it,
// whose end record then gives the count, size and offset of the central
// directory. Bytes before the first entry (a self-extracting stub) are
// allowed: offsets are taken relative to where the central directory really
// starts. Archives spanning several disks are refused whole; so are, in
// effect, archives whose central directory is encrypted (it does not parse:
// see the last paragraph of Refused entries).
//
// # Listing
//
// The listing comes from the central directory alone: one read of it, no
// local header read, nothing inflated. Each entry gives its name, size,
// compressed size, method, CRC-32, modification time and mode. Times come
// from the extended timestamp field (0x5455) when present, else the NTFS
// field (0x000a), else the MS-DOS date and time, read as UTC (as Go's
// archive/zip does). A mode comes from the Unix attributes when the entry
// was made on Unix, else from the MS-DOS attributes (read-only, directory);
// write bits are never shown. Folders that only appear in names are listed
// too (implicit: Entry.Implicit), with mode r-xr-xr-x and a zero time, for
// the caller to give the archive file's own. Memory for a listing is a
// bounded multiple of the archive's size, whatever it holds.
//
// Sizes in the central directory are the truth: data descriptors (flag bit
// 3) are never read, and ZIP64 extra fields replace saturated sizes and
// offsets.
//
// # Names
//
// A name is UTF-8 when flag bit 11 is set (invalid UTF-8 is then refused);
// otherwise the Info-ZIP Unicode Path field (0x7075) gives it when its CRC
// matches the stored name, else the name is CP437, as the ZIP specification
// says (bytes below 0x80 are ASCII). Backslashes are separators (archives
// made on Windows). Empty and "." components are dropped. Refused: a name
// holding NUL or another control character, an absolute name ("/etc/passwd",
// "C:..."), one with a ".." component, an empty name, and a component longer
// than 255 bytes or a name longer than 4096. A name ending in "/" is a
// folder.
//
// # Refused entries
//
// A refused entry is left out of the listing and named in the archive's
// error (Archive.Err); every other entry is still listed. Refused, besides
// the names above:
//   - an encrypted entry (flag bit 0, strong encryption bit 6, or bit 13,
//     masked local header values of an encrypted central directory);
//   - a method other than stored (0) and deflated (8);
//   - a duplicate: a second entry of the same cleaned name (the first wins),
//     a file where a folder is (a file "a" and an entry "a/b": the later one
//     in the central directory loses), a folder entry whose name a file has;
//   - a symbolic link or other special file (Unix mode type bits);
//   - a stored entry whose sizes differ, a deflated entry declaring more than
//     1032 times its compressed size plus 64 bytes (more than deflate can
//     express: a lie), an entry whose data would run past the central
//     directory;
//   - an entry whose local header lies inside the span of an entry before
//     it (overlapping entries, the trick of non-recursive zip bombs): the
//     span of an entry is its local header's fixed part, its name and its
//     compressed data.
//
// A central directory that ends early, or holds fewer or more records than
// its end record claims, keeps the records read so far, with an error. An
// archive with no end record (truncated, or cut inside its central
// directory) is listed from its local headers instead, from the start, up
// to the first one that does not parse: again with an error, and whatever
// was found. An entry whose sizes are in a data descriptor (flag bit 3) is
// then measured: a deflated one is inflated (no further than
// Limits.MaxInflate) to find where its data ends, a stored one's descriptor
// is looked for by its signature; the descriptor must give the sizes found.
//
// # Reading
//
// Open checks the entry's local header (signature, method, and that its
// name, extra field and data end before the next entry's header and the
// central directory) and returns a Reader. A stored entry is a window of
// the archive file (io.SectionReader): no copy, no CRC check (ReadFile
// checks it). A deflated entry declaring more than Limits.MaxInflate bytes
// is refused with decode.ErrLimit.
//
// Go's compress/flate can resume mid-stream with a preset window
// (NewReaderDict), but it reports neither where its blocks start nor how
// many bits of its input it has used, and it cannot be primed with the
// bits before a block that does not start on a byte (as zlib's
// inflatePrime is, for zran), which a stored block after it needs for its
// alignment. So a deflated entry is read one of two ways:
//   - With Limits.SpillDir set, or when it is no bigger than
//     Limits.MemInflate: inflated once by compress/flate, lazily, in
//     order, as far as the furthest byte asked for (in steps of 256 KiB),
//     into memory or, above MemInflate, an unlinked file in SpillDir;
//     every read is then served from there.
//   - Otherwise, through checkpoints (index.go): the package's own deflate
//     decoder notes, every MiB of output at first (at a block boundary
//     or inside a block, with the block's code lengths), its bit position
//     and the 32 KiB window before it, advancing as far as reads go; a
//     read restarts the decoder at the checkpoint before it and keeps the
//     span of output it falls in (a MiB; the last before the next
//     checkpoint runs to it), the last four spans kept.
//     What a reader keeps is charged to Limits.Budget: past 512
//     checkpoints, or when the budget refuses one, the reader drops every
//     other one and spaces them twice as far apart (it keeps 16 whatever
//     the budget). So a reader holds at most 16 MiB of checkpoints and a
//     read restarts at most 1/256 of the entry before its bytes (1/8
//     under a budget full of others'); the first read at offset X inflates
//     X bytes once. Should the decoder fail where compress/flate would
//     not, or disagree with the declared size or CRC-32, the entry is read
//     the first way, in memory, which reports any damage.
//
// Inflating stops at the declared size: an entry that inflates to more or
// fewer bytes, whose deflate data is corrupt, or whose CRC-32 differs fails
// that read and every read after it, with an error naming the archive, the
// entry and the offset of its data. ReadFile returns an entry whole, its
// CRC-32 checked (stored entries too); Head its first bytes, inflating no
// more.
//
// # Keeping a listing
//
// MarshalBinary gives a compact listing that UnmarshalBinary (or Resume,
// which also checks it against the archive file) turns back into the same
// tree without reading the central directory; Fingerprint identifies the
// archive version it was made from.
package archive
