//go:build !unix

package main

import "time"

// cpuTime is not measured here.
func cpuTime() (user, sys time.Duration, ok bool) { return 0, 0, false }
