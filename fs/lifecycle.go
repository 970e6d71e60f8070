package fs

import (
	"fmt"

	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/meshfs/meshfs/internal/mountpoint"
)

// Unmount unmounts srv's mount point, falling back to a lazy unmount when
// the file system is busy, and waits until the server has stopped serving
// (when it could unmount cleanly).
func Unmount(srv *fuse.Server, mnt string) error {
	if err := srv.Unmount(); err != nil {
		if derr := mountpoint.Detach(mnt); derr != nil {
			return fmt.Errorf("unmount %s: %v; lazy unmount: %v", mnt, err, derr)
		}
		return nil
	}
	srv.Wait()
	return nil
}
