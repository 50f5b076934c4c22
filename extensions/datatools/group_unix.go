//go:build unix

package datatools

import (
	"os/exec"
	"syscall"
)

// inGroup runs the script in a process group of its own and makes cancelling
// kill the whole group, so processes it started die with it.
func inGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}

// reaperOnly makes the time limit signal the reaper (sandbox.Reap) rather than
// kill the process group: with SIGTERM it kills everything beneath it, what left
// the group included, and exits; WaitDelay still kills it if it does not.
func reaperOnly(cmd *exec.Cmd) {
	cmd.Cancel = func() error { return cmd.Process.Signal(syscall.SIGTERM) }
}
