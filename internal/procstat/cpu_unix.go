//go:build unix

package procstat

import (
	"syscall"
	"time"
)

// CPU is the user and system CPU time this process has used so far; ok is
// false when the system would not say.
func CPU() (user, sys time.Duration, ok bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0, false
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano()), true
}
