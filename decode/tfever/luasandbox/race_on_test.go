//go:build race

package luasandbox

// slowdown is how many times slower the race-built interpreter runs: the
// tests' deadlines and time bounds are multiplied by it.
const slowdown = 10
