//go:build race

package archive

// raceOn: the test binary is race-built, and inflates many times slower.
const raceOn = true
