package host

import (
	"os/exec"
	"syscall"
)

// configureProcess puts the plugin in its own process group, so killing it reaches
// the children it started, and asks the kernel to kill it if the host dies without
// a chance to clean up (go-plugin #136: orphaned plugins). The SDK also watches
// its parent, since Pdeathsig fires on the death of the forking thread.
func configureProcess(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

func killGroup(pid int) { _ = syscall.Kill(-pid, syscall.SIGKILL) }
