//go:build race

package main

// raceBuild: this test binary has the race detector, so the serve tests run
// an exocortex built with it too (serveBinary).
const raceBuild = true
