package fs

import (
	"github.com/hanwen/go-fuse/v2/fuse"
)

// panicHandler answers a request whose code panicked with EIO and logs one
// line (panicLine: one bad file must not print its stack per
// request). The daemon carries on serving.
func (f *FS) panicHandler(v any) fuse.Status {
	f.log.Printf("meshfs: internal error (answered EIO): %s", panicLine(v))
	return fuse.EIO
}
