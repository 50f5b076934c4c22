package annbench

import (
	"syscall"
	"time"
)

// CPUTime returns the user+system CPU time the process has used, so build and
// search costs can be compared on a machine other jobs are also using.
func CPUTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
