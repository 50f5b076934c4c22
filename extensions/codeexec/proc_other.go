//go:build !linux

package codeexec

import (
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// sysProcAttr: without /proc the session's processes cannot be found, so the
// time limit kills the shell itself (killGroup).
func sysProcAttr() *syscall.SysProcAttr { return nil }

// proc is a process that was killed.
type proc struct {
	pid int
	cmd string
}

// killMembers cannot list a session's processes here.
func killMembers(int, string, map[int]bool) []proc { return nil }

// pidNS: no PID namespaces here.
func pidNS(int) string { return "" }

// pinPIDNS: no PID namespaces here.
func pinPIDNS(int) (string, io.Closer) { return "", nil }

// childOf cannot list processes here.
func childOf(int, time.Duration) int { return 0 }

// killGroup kills the shell.
func killGroup(cmd *exec.Cmd) {
	if cmd != nil && cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}

// startWatcher: without sessions there is nothing for a watcher to kill.
func startWatcher(int) (*os.File, *exec.Cmd, error) { return nil, nil, nil }

// awaitDeath cannot watch processes here.
func awaitDeath([]proc, time.Duration) {}

// killDescendants cannot list processes here.
func killDescendants(int, int) []proc { return nil }

// eldestChild: Linux only (from /proc).
func eldestChild(_, fallback int) int { return fallback }
