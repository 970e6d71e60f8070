//go:build race

package fs

// raceOn: the test binary is race-built, and runs each conversion many
// times slower than a plain build.
const raceOn = true
