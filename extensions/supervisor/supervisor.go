// Package supervisor watches for a looping agent at message_loop_end and
// escalates, from typed signals and counts rather than from prompt text.
//
// Rules, evaluated once per iteration:
//   - The iteration is "stuck" when a message added in it carries the repeat or
//     misformat signal, or when a tool has failed 3 or more times in a row
//     (failure_tracker).
//   - While a tier-4 action waits for the operator (action_gate_active), nothing
//     escalates: waiting for a human is not a stall.
//   - A stuck iteration raises the tier by one (1, 2, 3), sets loop_active and
//     p4_loop_fired (sleep consolidation adjudicates memories of loop periods),
//     and queues the tier's intervention message for the next iteration.
//   - A stuck iteration at tier 3 stops the monologue.
//   - A clean iteration after a loop clears loop_active and the tier (recovery).
package supervisor

import (
	"context"
	"fmt"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
	"github.com/exocortex/exocortex/signals"
)

// FailureLimit is the consecutive failures of one tool that count as stuck.
const FailureLimit = 3

func supState() sdk.Key[*exocortexv1.SupervisorState] {
	return sdk.KeyOf[*exocortexv1.SupervisorState]()
}
func loopActive() sdk.Key[*exocortexv1.LoopActive]   { return sdk.KeyOf[*exocortexv1.LoopActive]() }
func failures() sdk.Key[*exocortexv1.FailureTracker] { return sdk.KeyOf[*exocortexv1.FailureTracker]() }
func actionGate() sdk.Key[*exocortexv1.ActionGate]   { return sdk.KeyOf[*exocortexv1.ActionGate]() }

// Loop is the supervisor extension.
type Loop struct{}

// Spec declares the supervisor.
func (Loop) Spec() sdk.Spec {
	return sdk.Spec{
		Name:            "supervisor_loop",
		Order:           50,
		Reads:           []sdk.KeyRef{supState(), loopActive(), failures(), actionGate()},
		Writes:          []sdk.KeyRef{supState(), loopActive()},
		Resets:          []sdk.KeyRef{loopActive()},
		ConsumesSignals: []string{signals.Repeat, signals.Misformat},
		Description:     "Escalates tier 1-3 interventions on repeat/misformat signals and failing tools; sets loop_active.",
	}
}

// intervention is the message of tiers 1 to 3.
func intervention(tier int32) string {
	switch tier {
	case 1:
		return "You are going in circles: your last step did not move the task forward. Re-read the last tool result and take a different step."
	case 2:
		return "You are still stuck. Change your approach: use another tool or other arguments, or hand a sub-task to call_subordinate."
	}
	return "This is the last warning before the supervisor stops you. Use the response tool now to tell the operator what you tried and where you are stuck."
}

// MessageLoopEnd applies the rules.
func (Loop) MessageLoopEnd(_ context.Context, c *sdk.Call, req *exocortexv1.MessageLoopEndRequest) (*exocortexv1.MessageLoopEndResponse, error) {
	st, _ := supState().Get(c)
	if st == nil {
		st = &exocortexv1.SupervisorState{}
	}
	if g, ok := actionGate().Get(c); ok && g.GetActive() {
		return nil, nil
	}
	why := stuck(c, req)
	if why == "" {
		st.QuietIterations++
		if la, ok := loopActive().Get(c); ok && la.GetActive() {
			loopActive().Reset(c)
			st.LoopTier = 0
		}
		supState().Set(c, st)
		return nil, nil
	}
	st.QuietIterations = 0
	if st.LoopTier >= 3 {
		supState().Set(c, st)
		return &exocortexv1.MessageLoopEndResponse{Stop: ptr(fmt.Sprintf("the agent is still stuck after the tier-3 intervention (%s)", why))}, nil
	}
	st.LoopTier++
	st.Interventions++
	st.P4LoopFired = true
	supState().Set(c, st)
	if la, ok := loopActive().Get(c); !ok || !la.GetActive() {
		loopActive().Set(c, &exocortexv1.LoopActive{Active: true, SinceIteration: req.GetIteration()})
	}
	msg := fmt.Sprintf("Supervisor, tier %d (%s): %s", st.LoopTier, why, intervention(st.LoopTier))
	return &exocortexv1.MessageLoopEndResponse{Intervention: &msg}, nil
}

// stuck says why the iteration counts as stuck, or "".
func stuck(c *sdk.Call, req *exocortexv1.MessageLoopEndRequest) string {
	for _, m := range req.GetAdded() {
		switch m.GetSignal() {
		case signals.Repeat:
			return "the reply repeated the previous one"
		case signals.Misformat:
			return "the reply was not a valid tool request"
		}
	}
	if ft, ok := failures().Get(c); ok {
		for tool, n := range ft.GetFailures() {
			if n >= FailureLimit {
				return fmt.Sprintf("%s failed %d times in a row", tool, n)
			}
		}
	}
	return ""
}

func ptr(s string) *string { return &s }
