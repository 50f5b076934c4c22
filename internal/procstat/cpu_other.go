//go:build !unix

package procstat

import "time"

// CPU is not measured on this system: ok is false.
func CPU() (user, sys time.Duration, ok bool) { return 0, 0, false }
