package main

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// profileEnv names a file to write a CPU profile of the whole process to,
// for any command (make bench profiles the mount daemon with it). An
// environment variable rather than a flag: it is a developer's tool, not a
// user's option, and it must cover the process from its first instruction.
const profileEnv = "MESHFS_CPUPROFILE"

// startProfile starts the CPU profile named by profileEnv, if any, and
// returns the function that ends it.
func startProfile() func() {
	path := os.Getenv(profileEnv)
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err != nil {
		fmt.Fprintf(os.Stderr, "meshfs: %s: %v\n", profileEnv, err)
		return func() {}
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		fmt.Fprintf(os.Stderr, "meshfs: %s: %v\n", profileEnv, err)
		f.Close()
		return func() {}
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}
}
