package decodetest

import (
	"os/exec"
	"strconv"
)

// FourGiB is the address-space limit the sandbox's bomb tests run under,
// in KiB (ulimit -v's unit): the 4 GB of issue #26.
const FourGiB = 4 << 20

// UnderAddressLimit returns a command that runs name with args under an
// address-space limit of kib KiB (ulimit -v), so that memory a bug lets
// the child build ends in its fatal "out of memory" within seconds rather
// than in the machine's swap or a test binary of tens of gigabytes.
func UnderAddressLimit(kib int64, name string, args ...string) *exec.Cmd {
	return exec.Command("/bin/sh", append([]string{"-c", `ulimit -v "$0" && exec "$@"`, strconv.FormatInt(kib, 10), name}, args...)...)
}
