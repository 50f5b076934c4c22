//go:build !unix

package shell

import "os/exec"

// ownGroup leaves the command in the session's process group: without Unix
// process groups a cancel stops the shell only.
func ownGroup(*exec.Cmd) {}

func reaperOnly(*exec.Cmd) {}
