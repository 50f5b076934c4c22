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
