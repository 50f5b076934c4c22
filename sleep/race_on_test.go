//go:build race

package sleep

// raceEnabled trims the slowest tests under the race detector, where every
// child process runs several times slower.
const raceEnabled = true
