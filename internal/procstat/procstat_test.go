package procstat

import (
	"runtime"
	"testing"
	"time"
)

// TestCPUTimeGrowsWithWork asserts that a busy loop shows up as CPU time.
func TestCPUTimeGrowsWithWork(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("CPU time is not measured here")
	}
	before := CPUTime()
	x := 0
	for end := time.Now().Add(50 * time.Millisecond); time.Now().Before(end); {
		x++
	}
	if after := CPUTime(); after-before < 10*time.Millisecond {
		t.Errorf("CPU time grew by %v over a 50 ms busy loop (%d turns), want at least 10 ms", after-before, x)
	}
	if _, _, ok := CPU(); !ok {
		t.Error("CPU() says it could not measure")
	}
}
