//go:build !race

package main

// raceBuilt: this test binary has no race detector (see race_test.go).
const raceBuilt = false
