package fs

import (
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/meshfs/meshfs/internal/requests"
)

// panicHandler answers a request whose code panicked with EIO and logs one
// line (requests.PanicLine: one bad file must not print its stack per
// request). The daemon carries on serving.
func (f *FS) panicHandler(v any) fuse.Status {
	f.log.Printf("meshfs: internal error (answered EIO): %s", requests.PanicLine(v))
	return fuse.EIO
}
