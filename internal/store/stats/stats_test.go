package stats

import (
	"os"
	"syscall"
	"testing"
)

func TestMetaOwner(t *testing.T) {
	uid, gid, mode := MetaOwner(true)
	if uid != uint32(os.Geteuid()) || gid != uint32(os.Getegid()) || mode != syscall.S_IFDIR|0o500 {
		t.Fatalf(".meshfs: %d:%d %o", uid, gid, mode)
	}
	if _, _, mode := MetaOwner(false); mode != syscall.S_IFREG|0o400 {
		t.Fatalf("a file of .meshfs: mode %o, readable by the daemon's user alone", mode)
	}
}
