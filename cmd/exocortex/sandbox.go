package main

import (
	"fmt"
	"io"
	"path/filepath"
	"sync"

	"github.com/exocortex/exocortex/core/loop"
	"github.com/exocortex/exocortex/sandbox"
)

// reportSandbox says at start when the agent's commands will not run in the
// sandbox (docs/sandbox.md): turned off by the loud setting, or impossible on
// this machine (probe's answer), in which case every command is asked for.
// Silent when the sandbox is on.
func reportSandbox(w io.Writer, a *app, probe func() sandbox.Status, asJSON bool, enc *eventEncoder) {
	t, err := a.tools()
	if err != nil {
		return // the tools report it on their first call
	}
	msg := ""
	switch {
	case t.Sandbox.UnsafeDisable:
		msg = "tools.sandbox.UNSAFE_disable_sandbox is set: the agent's commands run with all your rights"
	case !probe().Available:
		msg = probe().String() + "; every command the agent runs will be asked for, even in yolo mode"
	default:
		return
	}
	if asJSON {
		enc.event(loop.Event{Type: loop.EventNotice, Text: msg})
		return
	}
	fmt.Fprintln(w, "warning:", msg)
}

// sandboxProbeFile keeps the last probe's answer inside the home
// (sandbox.ProbeCached).
const sandboxProbeFile = "run/sandbox-probe.json"

// probeSandbox finds out whether the sandbox works here for reportSandbox,
// in the background, beside the host's start-up rather than after it on the
// way to the first model request: the answer kept in the home while the
// boot, the binary and the kernel's switches are the ones it was found with
// (sandbox.ProbeCached), else the probe (the launcher started twice). The
// function returned waits for the answer. What confines a command probes
// for itself before it runs one.
func probeSandbox(home string) func() sandbox.Status {
	ch := make(chan sandbox.Status, 1)
	go func() { ch <- sandbox.ProbeCached(filepath.Join(home, sandboxProbeFile), "") }()
	return sync.OnceValue(func() sandbox.Status { return <-ch })
}
