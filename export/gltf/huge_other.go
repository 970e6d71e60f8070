//go:build !linux

package gltf

import "unsafe"

// adviseHuge does nothing here: see huge_linux.go.
func adviseHuge(p unsafe.Pointer, size uintptr) {}
