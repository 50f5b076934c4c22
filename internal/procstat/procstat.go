// Package procstat reads what the operating system counts for this process.
// Benchmarks and diagnostics report CPU time beside wall time because on a
// machine other jobs share, CPU time is the steadier figure.
package procstat

import "time"

// CPUTime is the user plus system CPU time this process has used so far (0
// where it is not measured).
func CPUTime() time.Duration {
	user, sys, _ := CPU()
	return user + sys
}
