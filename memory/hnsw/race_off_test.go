//go:build !race

package hnsw_test

const raceOn = false
