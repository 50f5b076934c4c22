//go:build !linux

package sandbox

import (
	"errors"
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
