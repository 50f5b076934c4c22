package loop

import (
	"errors"
	"fmt"

	"github.com/exocortex/exocortex/core/host"
)

// A gate is a hook whose response can stop the action it precedes
// (hooks.Info.Gates: tool_execute_before, text_editor_write_before,
// text_editor_patch_before). An extension there is a guard, and a guard that
// cannot answer has not allowed anything: when it raises (an exception in a
// Python file, HandledException included; an error from a Go handler), crashes,
// hangs past its deadline or is quarantined, the action is stopped (it fails
// closed) and the model and the operator are told which guard failed and why.
// An extension that only watches there declares fail_open in its manifest, and
// its failure is skipped as at every other hook. A required extension's failure
// still stops the whole turn.

// gateFailure is the first failure of a fail-closed extension at the gate
// being fired.
type gateFailure struct {
	ext  *host.Extension
	err  error
	kind host.FailureKind
}

// reason is what the model and the operator are told.
func (g *gateFailure) reason() string {
	what := "failed"
	switch g.kind {
	case host.Crashed:
		what = "crashed"
	case host.TimedOut:
		what = "did not answer in time"
	case host.Unavailable:
		what = "is not available"
	case host.Returned:
		what = "raised an error"
	}
	return fmt.Sprintf("the guard %s (plugin %s) %s at %s, so the action is stopped (guards fail closed): %v", g.ext.Name(), g.ext.Plugin.Name(), what, g.ext.Hook.Name, g.err)
}

// failClosed records ext's failure at a gate, unless it declared fail_open;
// it reports whether it did (the action must then be stopped).
func (t *turn) failClosed(ext *host.Extension, err error) bool {
	if !ext.Hook.Gates || ext.Spec.GetFailOpen() {
		return false
	}
	if t.gate == nil {
		g := &gateFailure{ext: ext, err: err}
		var ce *host.CallError
		if errors.As(err, &ce) {
			g.kind = ce.Kind
			g.err = ce.Err
		}
		t.gate = g
	}
	return true
}

// takeGate returns the gate failure recorded since the last call, and clears it.
func (t *turn) takeGate() *gateFailure {
	g := t.gate
	t.gate = nil
	return g
}
