//go:build unix

package main

import (
	"syscall"
	"time"
)

// cpuTime is this process's user and system CPU time so far.
func cpuTime() (user, sys time.Duration, ok bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0, false
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano()), true
}
