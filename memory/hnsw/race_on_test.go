//go:build race

package hnsw_test

// raceOn shrinks the data sets of the slow tests: the race detector makes them
// ten to twenty times slower, and they need not be large to find races.
const raceOn = true
