//go:build !linux

package sandbox

import (
	"errors"
	"io"
	"os/exec"
)

// landlockABI: Landlock is Linux only.
func landlockABI() int { return 0 }

// namespaces: there is no sandbox outside Linux.
func namespaces(*exec.Cmd, Policy) error {
	return errors.New("sandbox: only Linux (Landlock and namespaces) can confine commands")
}

// Launch does nothing outside Linux: no process is started as a launcher there.
func Launch() {}

// Reap: child subreapers are Linux only.
func Reap(*exec.Cmd, string) (io.Closer, error) {
	return nil, errors.New("reaper: only Linux has child subreapers")
}

// Descendants: Linux only (from /proc).
func Descendants(int) []int { return nil }

// KillDescendants: Linux only.
func KillDescendants(int) {}
