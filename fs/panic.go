package fs

import (
	"fmt"
	"strings"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// panicHandler answers a request whose code panicked with EIO and logs one
// line: the first line of the panic value. A panic in a conversion reaches
// go-fuse wrapped by the cache's loader, whose value carries the loader's
// whole stack; logged as is, one bad file would print dozens of lines per
// request. The daemon carries on serving.
func (f *FS) panicHandler(v any) fuse.Status {
	msg := fmt.Sprint(v)
	if first, _, multi := strings.Cut(msg, "\n"); multi {
		msg = first + " […]"
	}
	f.log.Printf("meshfs: internal error (answered EIO): %s", msg)
	return fuse.EIO
}
