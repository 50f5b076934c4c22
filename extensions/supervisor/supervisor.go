// Package supervisor watches for a looping agent and escalates, from typed
// signals, counts and recorded evidence rather than from prompt text.
//
// The loop supervisor (message_loop_end, order 50) evaluates these rules once
// per iteration:
//   - While a tier-4 action waits for the operator (action_gate_active), nothing
//     escalates: waiting for a human is not a stall.
//   - The iteration is "stuck" when
//     a message added in it carries the repeat or misformat signal;
//     a tool has failed FailureLimit or more times in a row (failure_tracker);
//     the evidence ledger's last SameCallLimit entries, the newest from this
//     iteration, are the same tool with the same arguments (a loop the core's
//     exact-reply check misses when only the thoughts change);
//     the ledger's last FailStreakLimit entries, the newest from this iteration,
//     all failed;
//     or the proactive supervisor raised a signal in this iteration
//     (supervisor_signals: oscillation, near repeat, no progress), unless this
//     iteration then made a successful call unlike the four before it (the
//     signal described the chain before that progress).
//   - A stuck iteration raises the tier by one (1, 2, 3), sets loop_active and
//     p4_loop_fired (sleep consolidation adjudicates memories of loop periods),
//     and queues the tier's intervention message for the next iteration; the
//     message carries the last error diagnosis's advice when there is one, and
//     at tier 2 suggests splitting a compound task (bst_store) with
//     call_subordinate.
//   - A stuck iteration at tier 3 stops the monologue.
//   - A clean iteration after a loop clears loop_active and the tier (recovery).
//
// The proactive supervisor (before_main_llm_call, order 13; the seed's 12, which
// collides with completion_tracker at 12) reads the reasoning chain as it stands
// when the prompt is final and records what it finds in supervisor_signals:
//   - oscillation: the ledger's last four entries alternate between two calls
//     (A, B, A, B, same arguments each);
//   - near_repeat: the last two entries are the same tool with the same
//     arguments;
//   - no_progress: NoProgressLimit iterations of this monologue have passed since
//     the last successful tool call (completion's last_success_iteration), with at
//     least one tool call made.
//
// Each signal is recorded once per iteration in which it holds; the loop
// supervisor acts only on signals of its own iteration.
package supervisor

import (
	"context"
	"fmt"
	"strings"

	"github.com/exocortex/exocortex/extensions/internal/turn"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
	"github.com/exocortex/exocortex/signals"
)

// Limits of the stuck rules.
const (
	// FailureLimit is the consecutive unusable replies naming one tool that count
	// as stuck (failure_tracker).
	FailureLimit = 3
	// SameCallLimit is the number of identical calls in a row that count as stuck.
	SameCallLimit = 3
	// FailStreakLimit is the number of failed calls in a row that count as stuck.
	FailStreakLimit = 4
	// NoProgressLimit is the iterations without a successful tool call after
	// which the proactive supervisor signals no progress.
	NoProgressLimit = 5
)

func supState() sdk.Key[*exocortexv1.SupervisorState] {
	return sdk.KeyOf[*exocortexv1.SupervisorState]()
}
func loopActive() sdk.Key[*exocortexv1.LoopActive]   { return sdk.KeyOf[*exocortexv1.LoopActive]() }
func failures() sdk.Key[*exocortexv1.FailureTracker] { return sdk.KeyOf[*exocortexv1.FailureTracker]() }
func actionGate() sdk.Key[*exocortexv1.ActionGate]   { return sdk.KeyOf[*exocortexv1.ActionGate]() }
func ledger() sdk.Key[*exocortexv1.EvidenceLedger]   { return sdk.KeyOf[*exocortexv1.EvidenceLedger]() }
func diagnosis() sdk.Key[*exocortexv1.ErrorDiagnosis] {
	return sdk.KeyOf[*exocortexv1.ErrorDiagnosis]()
}
func supSignals() sdk.Key[*exocortexv1.SupervisorSignals] {
	return sdk.KeyOf[*exocortexv1.SupervisorSignals]()
}
func bst() sdk.Key[*exocortexv1.BeliefState]       { return sdk.KeyOf[*exocortexv1.BeliefState]() }
func completion() sdk.Key[*exocortexv1.Completion] { return sdk.KeyOf[*exocortexv1.Completion]() }

// Loop is the supervisor extension.
type Loop struct{}

// Spec declares the supervisor.
func (e Loop) Spec() sdk.Spec {
	return sdk.Spec{
		Name:            "supervisor_loop",
		Hooks:           []sdk.Hook{sdk.MessageLoopEnd(e)},
		Order:           50,
		Reads:           []sdk.KeyRef{supState(), loopActive(), failures(), actionGate(), ledger(), diagnosis(), supSignals(), bst()},
		Writes:          []sdk.KeyRef{supState(), loopActive()},
		Resets:          []sdk.KeyRef{loopActive()},
		ConsumesSignals: []string{signals.Repeat, signals.Misformat},
		Description:     "Escalates tier 1-3 interventions, then stops, on repeat/misformat signals, failing tools, repeated or failing calls in the evidence ledger and proactive signals; sets loop_active and p4_loop_fired.",
		EffectsDeclared: true,
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
	if d, ok := diagnosis().Get(c); ok && d.GetErrorClass() != "" && d.GetErrorClass() != "none" && st.LoopTier < 3 {
		msg += fmt.Sprintf(" The last error was %s", d.GetErrorClass())
		if len(d.GetSuggestedActions()) > 0 {
			msg += "; try: " + d.GetSuggestedActions()[0]
		}
		if len(d.GetAntiActions()) > 0 {
			msg += "; avoid: " + d.GetAntiActions()[0]
		}
		msg += "."
	}
	if b, ok := bst().Get(c); ok && st.LoopTier == 2 && strings.Contains(b.GetCompoundSig(), "+") {
		msg += fmt.Sprintf(" The task mixes %s: split it and give one part to call_subordinate.", strings.ReplaceAll(b.GetCompoundSig(), "+", " and "))
	}
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
	if l, ok := ledger().Get(c); ok {
		es := l.GetEntries()
		if n := len(es); n > 0 && es[n-1].GetIteration() == req.GetIteration() {
			if same := sameCalls(es); same >= SameCallLimit {
				return fmt.Sprintf("the same %s call was made %d times in a row", es[n-1].GetToolName(), same)
			}
			if fails := failStreak(es); fails >= FailStreakLimit {
				return fmt.Sprintf("%d tool calls in a row failed", fails)
			}
		}
	}
	if s, ok := supSignals().Get(c); ok && !progressed(c, req.GetIteration()) {
		for _, sig := range s.GetSignals() {
			if sig.GetIteration() == req.GetIteration() {
				return "proactive supervisor: " + sig.GetKind() + " (" + sig.GetEvidence() + ")"
			}
		}
	}
	return ""
}

// progressed reports whether this iteration made a successful tool call unlike
// the four calls before it: a proactive signal about the chain before this
// iteration is then out of date.
func progressed(c *sdk.Call, iteration int32) bool {
	l, _ := ledger().Get(c)
	es := l.GetEntries()
	n := len(es)
	if n == 0 || es[n-1].GetIteration() != iteration || !es[n-1].GetOk() {
		return false
	}
	key := func(e *exocortexv1.Evidence) string {
		return e.GetToolName() + "\x00" + turn.Canonical(e.GetArgsJson())
	}
	for i := max(0, n-5); i < n-1; i++ {
		if key(es[i]) == key(es[n-1]) {
			return false
		}
	}
	return true
}

// sameCalls counts the ledger's trailing entries equal to the last (same tool,
// same canonical arguments).
func sameCalls(es []*exocortexv1.Evidence) int {
	last := es[len(es)-1]
	key := last.GetToolName() + "\x00" + turn.Canonical(last.GetArgsJson())
	n := 0
	for i := len(es) - 1; i >= 0; i-- {
		if es[i].GetToolName()+"\x00"+turn.Canonical(es[i].GetArgsJson()) != key {
			break
		}
		n++
	}
	return n
}

// failStreak counts the ledger's trailing failed entries.
func failStreak(es []*exocortexv1.Evidence) int {
	n := 0
	for i := len(es) - 1; i >= 0 && !es[i].GetOk(); i-- {
		n++
	}
	return n
}

func ptr(s string) *string { return &s }

// Proactive is the proactive supervisor.
type Proactive struct{}

// Spec declares it.
func (e Proactive) Spec() sdk.Spec {
	return sdk.Spec{
		Name:            "proactive_supervisor",
		Hooks:           []sdk.Hook{sdk.BeforeMainLLMCall(e)},
		Order:           13,
		Reads:           []sdk.KeyRef{ledger(), completion(), supSignals()},
		Writes:          []sdk.KeyRef{supSignals()},
		Description:     "Reads the reasoning chain (evidence ledger, progress) when the prompt is final and records oscillation, near repeats and lack of progress in supervisor_signals.",
		EffectsDeclared: true,
	}
}

// BeforeMainLLMCall analyses the chain.
func (Proactive) BeforeMainLLMCall(_ context.Context, c *sdk.Call, req *exocortexv1.BeforeMainLLMCallRequest) (*exocortexv1.BeforeMainLLMCallResponse, error) {
	it := req.GetIteration()
	l, _ := ledger().Get(c)
	es := l.GetEntries()
	var found []*exocortexv1.SupervisorSignal
	key := func(e *exocortexv1.Evidence) string { return e.GetToolName() + " " + turn.Canonical(e.GetArgsJson()) }
	if n := len(es); n >= 4 {
		a, b := key(es[n-4]), key(es[n-3])
		if a != b && key(es[n-2]) == a && key(es[n-1]) == b {
			found = append(found, &exocortexv1.SupervisorSignal{Kind: "oscillation", Iteration: it,
				Evidence: fmt.Sprintf("alternating %s and %s", es[n-2].GetToolName(), es[n-1].GetToolName())})
		}
	}
	if n := len(es); n >= 2 && key(es[n-1]) == key(es[n-2]) {
		found = append(found, &exocortexv1.SupervisorSignal{Kind: "near_repeat", Iteration: it,
			Evidence: fmt.Sprintf("%s called twice with the same arguments", es[n-1].GetToolName())})
	}
	if cp, _ := completion().Get(c); len(es) > 0 && it-cp.GetLastSuccessIteration() > NoProgressLimit {
		found = append(found, &exocortexv1.SupervisorSignal{Kind: "no_progress", Iteration: it,
			Evidence: fmt.Sprintf("no tool call has succeeded for %d iterations", it-cp.GetLastSuccessIteration())})
	}
	if len(found) == 0 {
		return nil, nil
	}
	s, _ := supSignals().Get(c)
	if s == nil {
		s = &exocortexv1.SupervisorSignals{}
	}
	s.Signals = append(s.Signals, found...)
	if n := len(s.Signals) - 20; n > 0 {
		s.Signals = s.Signals[n:]
	}
	supSignals().Set(c, s)
	return nil, nil
}
