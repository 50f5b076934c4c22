package main

import (
	"fmt"
	"io"

	"github.com/exocortex/exocortex/core/loop"
	"github.com/exocortex/exocortex/sandbox"
)

// reportSandbox says at start when the agent's commands will not run in the
// sandbox (docs/sandbox.md): turned off by the loud setting, or impossible on
// this machine, in which case every command is asked for. Silent when the
// sandbox is on.
func reportSandbox(w io.Writer, a *app, asJSON bool, enc *eventEncoder) {
	t, err := a.tools()
	if err != nil {
		return // the tools report it on their first call
	}
	msg := ""
	switch st := sandbox.Probe(""); {
	case t.Sandbox.UnsafeDisable:
		msg = "tools.sandbox.UNSAFE_disable_sandbox is set: the agent's commands run with all your rights"
	case !st.Available:
		msg = st.String() + "; every command the agent runs will be asked for, even in yolo mode"
	default:
		return
	}
	if asJSON {
		enc.event(loop.Event{Type: loop.EventNotice, Text: msg})
		return
	}
	fmt.Fprintln(w, "warning:", msg)
}
