//go:build unix

package shell

import (
	"os/exec"
	"syscall"
)

// ownGroup starts the command in its own process group and makes a cancel
// kill the whole group, so a pipeline or a background child stops too.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}

// reaperOnly makes a stop signal the reaper (sandbox.Reap) rather than kill its
// process group: with SIGTERM it kills everything beneath it, including what
// left the group, and exits; WaitDelay still kills it if it does not.
func reaperOnly(cmd *exec.Cmd) {
	cmd.Cancel = func() error {
		if cmd.Process == nil {
			return nil
		}
		return cmd.Process.Signal(syscall.SIGTERM)
	}
}
