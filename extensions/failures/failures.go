// Package failures counts consecutive failures per tool in the failure_tracker key:
// Tracker increments at error_format, Reset clears at tool_execute_after. The two
// share one declared key (state.proto), so they cannot drift apart the way the
// seed's TRACKER_KEY constant, defined in two files, did.
//
// Rules:
//   - error_format (order 30): the entry of the tool the unusable reply seemed to
//     ask for is incremented; a reply that named no tool counts under
//     "reply_format".
//   - tool_execute_after (order 20): a tool that succeeds clears its own entry and
//     "reply_format" (a well-formed, successful call ends a misformat streak).
package failures

import (
	"context"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
	"github.com/exocortex/exocortex/signals"
)

// FormatKey is the failure_tracker entry for replies that named no tool.
const FormatKey = "reply_format"

func key() sdk.Key[*exocortexv1.FailureTracker] { return sdk.KeyOf[*exocortexv1.FailureTracker]() }

// Tracker increments failure_tracker on every unusable reply.
type Tracker struct{}

// Spec declares the tracker.
func (e Tracker) Spec() sdk.Spec {
	return sdk.Spec{
		Name:            "failure_tracker",
		Hooks:           []sdk.Hook{sdk.ErrorFormat(e)},
		Order:           30,
		Reads:           []sdk.KeyRef{key()},
		Writes:          []sdk.KeyRef{key()},
		ConsumesSignals: []string{signals.Misformat},
		Description:     "Counts consecutive unusable replies per tool in failure_tracker.",
		EffectsDeclared: true,
	}
}

// ErrorFormat counts the failure.
func (Tracker) ErrorFormat(_ context.Context, c *sdk.Call, req *exocortexv1.ErrorFormatRequest) (*exocortexv1.ErrorFormatResponse, error) {
	ft, _ := key().Get(c)
	if ft == nil {
		ft = &exocortexv1.FailureTracker{}
	}
	if ft.Failures == nil {
		ft.Failures = map[string]int32{}
	}
	name := req.GetToolName()
	if name == "" {
		name = FormatKey
	}
	ft.Failures[name]++
	key().Set(c, ft)
	return nil, nil
}

// Reset clears a tool's failure count when the tool succeeds.
type Reset struct{}

// Spec declares the reset.
func (e Reset) Spec() sdk.Spec {
	return sdk.Spec{
		Name:            "reset_failure_counter",
		Hooks:           []sdk.Hook{sdk.ToolExecuteAfter(e)},
		Order:           20,
		Reads:           []sdk.KeyRef{key()},
		Writes:          []sdk.KeyRef{key()},
		Description:     "Clears a tool's failure_tracker entry when the tool succeeds.",
		EffectsDeclared: true,
	}
}

// ToolExecuteAfter clears the entries a success ends.
func (Reset) ToolExecuteAfter(_ context.Context, c *sdk.Call, req *exocortexv1.ToolExecuteAfterRequest) (*exocortexv1.ToolExecuteAfterResponse, error) {
	if req.GetResult().GetError() != "" {
		return nil, nil
	}
	ft, ok := key().Get(c)
	if !ok || len(ft.GetFailures()) == 0 {
		return nil, nil
	}
	name := req.GetToolCall().GetName()
	_, hadTool := ft.Failures[name]
	_, hadFormat := ft.Failures[FormatKey]
	if !hadTool && !hadFormat {
		return nil, nil
	}
	delete(ft.Failures, name)
	delete(ft.Failures, FormatKey)
	key().Set(c, ft)
	return nil, nil
}
