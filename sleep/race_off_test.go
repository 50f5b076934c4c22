//go:build !race

package sleep

const raceEnabled = false
