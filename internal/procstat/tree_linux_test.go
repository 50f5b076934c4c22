//go:build linux

package procstat

import (
	"os"
	"os/exec"
	"testing"
	"time"
)

// TestTreeCountsAChild: a child that burns CPU counts in its parent's tree
// once waited for, and this process's own figures are readable.
func TestTreeCountsAChild(t *testing.T) {
	before, pss := Tree(os.Getpid())
	if pss <= 0 {
		t.Errorf("this process's tree has PSS %v MB, want some", pss)
	}
	// A shell loop of about 200 ms of CPU, waited for.
	cmd := exec.Command("sh", "-c", `end=$(( $(date +%s%N) + 200000000 )); while [ $(date +%s%N) -lt $end ]; do :; done`)
	if err := cmd.Run(); err != nil {
		t.Skipf("sh: %v", err)
	}
	after, _ := Tree(os.Getpid())
	if after-before < 50*time.Millisecond {
		t.Errorf("the tree's CPU grew by %v over a child's 200 ms busy loop, want at least 50 ms", after-before)
	}
	if own, err := ProcessCPU(os.Getpid()); err != nil || own <= 0 {
		t.Errorf("ProcessCPU(self) = %v, %v", own, err)
	}
	if _, err := ProcessCPU(1 << 30); err == nil {
		t.Error("ProcessCPU of a process that does not exist: no error")
	}
}
