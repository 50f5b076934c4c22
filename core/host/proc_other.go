//go:build !linux

package host

import "os/exec"

func configureProcess(cmd *exec.Cmd) {}

func killGroup(pid int) {}
