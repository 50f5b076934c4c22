//go:build !unix

package datatools

import "os/exec"

// inGroup: without process groups, cancelling kills the script only.
func inGroup(*exec.Cmd) {}

func reaperOnly(*exec.Cmd) {}
