//go:build !linux

package procstat

import (
	"errors"
	"time"
)

// errNoProc: other processes are read from /proc, which only Linux has.
var errNoProc = errors.New("reading another process's usage needs Linux's /proc")

// ProcessCPU is not measured on this system.
func ProcessCPU(pid int) (time.Duration, error) { return 0, errNoProc }

// Tree is not measured on this system: zeros.
func Tree(pid int) (cpu time.Duration, pssMB float64) { return 0, 0 }

// PSS is not measured on this system: 0.
func PSS(pid int) float64 { return 0 }
