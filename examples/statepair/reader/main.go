// Command reader is the reading half of the statepair example: a plugin whose
// extensions act on what the writer left in failure_tracker and on the typed repeat
// signal.
//
// README: build with `go build ./examples/statepair/reader` together with
// examples/statepair/writer. At message_loop_end, "statepair_failure_alarm" (order
// 500) reads failure_tracker and queues an intervention when a tool has failed
// FailureLimit times in a row or more; "statepair_repeat_alarm" (order 501) queues one
// when a message added this iteration carries the signal signals.Repeat, comparing
// the signal constant, never the message text.
package main

import (
	"context"
	"fmt"
	"slices"
	"strings"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
	"github.com/exocortex/exocortex/signals"
)

// FailureLimit is the number of consecutive failures of one tool that triggers an
// intervention.
const FailureLimit = 2

func tracker() sdk.Key[*exocortexv1.FailureTracker] { return sdk.KeyOf[*exocortexv1.FailureTracker]() }

// failureAlarm warns the model about a tool that keeps failing.
type failureAlarm struct{}

func (e failureAlarm) Spec() sdk.Spec {
	return sdk.Spec{
		Name:        "statepair_failure_alarm",
		Hooks:       []sdk.Hook{sdk.MessageLoopEnd(e)},
		Order:       500,
		Reads:       []sdk.KeyRef{tracker()},
		Description: fmt.Sprintf("Queues an intervention when a tool has failed %d times in a row.", FailureLimit),
	}
}

func (failureAlarm) MessageLoopEnd(_ context.Context, c *sdk.Call, _ *exocortexv1.MessageLoopEndRequest) (*exocortexv1.MessageLoopEndResponse, error) {
	ft, ok := tracker().Get(c)
	if !ok {
		return nil, nil
	}
	var failing []string
	for name, n := range ft.GetFailures() {
		if n >= FailureLimit {
			failing = append(failing, fmt.Sprintf("%s (%d times)", name, n))
		}
	}
	if len(failing) == 0 {
		return nil, nil
	}
	slices.Sort(failing)
	msg := fmt.Sprintf("These tools failed repeatedly in a row: %s. Do not call them again the same way; "+
		"read the errors and change the arguments or the approach.", strings.Join(failing, ", "))
	return &exocortexv1.MessageLoopEndResponse{Intervention: &msg}, nil
}

// repeatAlarm reacts to the core's repeat signal.
type repeatAlarm struct{}

func (e repeatAlarm) Spec() sdk.Spec {
	return sdk.Spec{
		Name:            "statepair_repeat_alarm",
		Hooks:           []sdk.Hook{sdk.MessageLoopEnd(e)},
		Order:           501,
		ConsumesSignals: []string{signals.Repeat},
		Description:     "Queues an intervention when the model repeated its previous reply.",
	}
}

func (repeatAlarm) MessageLoopEnd(_ context.Context, _ *sdk.Call, req *exocortexv1.MessageLoopEndRequest) (*exocortexv1.MessageLoopEndResponse, error) {
	for _, m := range req.GetAdded() {
		if m.GetSignal() == signals.Repeat {
			msg := "You repeated your previous reply word for word. Stop and take a different step: " +
				"another tool, other arguments, or a response to the operator."
			return &exocortexv1.MessageLoopEndResponse{Intervention: &msg}, nil
		}
	}
	return nil, nil
}

func plugin() sdk.Plugin {
	return sdk.Plugin{
		Name:       "statepair_reader",
		Version:    "1.0.0",
		Extensions: []sdk.Extension{failureAlarm{}, repeatAlarm{}},
	}
}

func main() { sdk.Serve(plugin()) }
