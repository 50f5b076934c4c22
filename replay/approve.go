package replay

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/exocortex/exocortex/core/loop"
)

// readOnly are the tools that change nothing outside the agent: a replay
// that runs the tools again (Options.RerunTools) lets a held call of one of
// them pass, and denies every other held call (there is no operator to ask).
var readOnly = map[string]bool{
	"response": true, "memory_load": true, "memory_retrieve": true,
	"library_list": true, "library_search": true, "web_search": true, "search": true,
}

// ReadOnly reports whether a call of tool with args only reads: a tool of
// the read-only set, or text_editor reading a file.
func ReadOnly(tool string, args json.RawMessage) bool {
	if readOnly[tool] {
		return true
	}
	if tool != "text_editor" {
		return false
	}
	var a struct {
		Action string `json:"action"`
		Op     string `json:"op"`
	}
	_ = json.Unmarshal(args, &a)
	act := a.Action + a.Op
	return act == "read" || act == "view"
}

// Approve answers a call an extension holds (loop.Approver). Without
// RerunTools it gives the recorded answer to the same call at this
// iteration, and denies a call that was not held in the recording (the
// changed plugin holds it: a refusal, reported as the paths parting). With
// RerunTools only read-only calls pass.
func (e *engine) Approve(_ context.Context, req loop.Approval) (loop.Decision, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.opts.RerunTools {
		if ReadOnly(req.Tool, e.lastArgs(req.Tool)) {
			return loop.AllowOnce, nil
		}
		return loop.Deny, nil
	}
	if e.cur == nil || e.got == nil || len(e.got.rec.Turns) == 0 {
		return loop.Deny, nil
	}
	n := len(e.got.rec.Turns[len(e.got.rec.Turns)-1].Iterations)
	if n < 1 || n > len(e.cur.Iterations) {
		return loop.Deny, nil
	}
	for _, ev := range e.cur.Iterations[n-1].Approvals {
		if ev.Tool == req.Tool && ev.Text == req.Action {
			switch {
			case strings.HasPrefix(ev.Result, loop.AllowSession.String()):
				return loop.AllowSession, nil
			case strings.HasPrefix(ev.Result, loop.AllowOnce.String()):
				return loop.AllowOnce, nil
			}
			return loop.Deny, nil
		}
	}
	return loop.Deny, nil
}

// lastArgs are the arguments of the replayed turn's last call of tool.
func (e *engine) lastArgs(tool string) json.RawMessage {
	if e.got == nil || len(e.got.rec.Turns) == 0 {
		return nil
	}
	its := e.got.rec.Turns[len(e.got.rec.Turns)-1].Iterations
	for i := len(its) - 1; i >= 0; i-- {
		for j := len(its[i].Calls) - 1; j >= 0; j-- {
			if c := its[i].Calls[j]; c.Tool == tool {
				return c.Args
			}
		}
	}
	return nil
}
