//go:build !linux

package decode

import "unsafe"

// AdviseHuge does nothing here: see huge_linux.go.
func AdviseHuge(p unsafe.Pointer, size uintptr) {}
