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
