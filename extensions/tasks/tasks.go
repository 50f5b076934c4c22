// Package tasks follows the monologue's task: the completion tracker collects the
// signs that it is done (or not), and the task tracker moves it through its
// states. The situational orientation shows the state to the model.
//
// Completion tracker (before_main_llm_call, order 12, as in the seed; state work
// when the prompt is final). Once per iteration, from the context's recent
// messages (the tail of the history the prompt ends with; the latest tool result
// and reply are always among them, so the tracker does not declare ReadsHistory
// and is not sent the whole prompt):
//   - last_success_iteration is the latest iteration with a successful call in
//     the evidence ledger;
//   - the latest tool result with a success marker (passed, ok, success,
//     created, saved, written, completed, 0 failures, no errors) and a
//     successful ledger entry adds a success_marker signal;
//   - the model's latest reply whose thoughts or headline say the work is done
//     (done, finished, complete, all set, ready to answer) sets claimed_done and
//     adds a claims_done signal;
//   - a failed ledger entry of the previous iteration adds a setback signal.
//
// Task tracker (message_loop_end, order 48, as in the seed). Status rules, in
// this order, for the iteration just ended:
//
//	done              the response tool ended the monologue
//	waiting_approval  action_gate_active is set (a tier-4 call waits)
//	blocked           the iteration's tool call failed
//	verifying         the model said it is done but has not answered
//	working           the iteration's tool call succeeded
//	(unchanged)       no tool ran (an unusable or repeated reply)
//
// The first iteration starts the task ("started") with the operator's message as
// its goal. Each change of status is recorded as a transition with its reason.
package tasks

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/exocortex/exocortex/extensions/internal/textfacts"
	"github.com/exocortex/exocortex/extensions/internal/toolresult"
	"github.com/exocortex/exocortex/extensions/internal/turn"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

// Statuses of a task.
const (
	Started         = "started"
	Working         = "working"
	Blocked         = "blocked"
	WaitingApproval = "waiting_approval"
	Verifying       = "verifying"
	Done            = "done"
)

// MaxSignals bounds the completion signals kept.
const MaxSignals = 20

// CompletionKey is the completion key.
func CompletionKey() sdk.Key[*exocortexv1.Completion] { return sdk.KeyOf[*exocortexv1.Completion]() }

// StateKey is the task_state key.
func StateKey() sdk.Key[*exocortexv1.TaskState] { return sdk.KeyOf[*exocortexv1.TaskState]() }

func ledgerKey() sdk.Key[*exocortexv1.EvidenceLedger] {
	return sdk.KeyOf[*exocortexv1.EvidenceLedger]()
}
func gateKey() sdk.Key[*exocortexv1.ActionGate] { return sdk.KeyOf[*exocortexv1.ActionGate]() }

var (
	successRE = regexp.MustCompile(`(?i)\b(passed|pass|ok|success|successfully|succeeded|created|saved|written|wrote|completed|0 failures|no errors)\b`)
	doneRE    = regexp.MustCompile(`(?i)\b(done|finished|complete|completed|all set|ready to answer|task is complete|that's it)\b`)
)

// Completion is the completion tracker.
type Completion struct{}

// Spec declares it.
func (e Completion) Spec() sdk.Spec {
	return sdk.Spec{
		Name:            "completion_tracker",
		Hooks:           []sdk.Hook{sdk.BeforeMainLLMCall(e)},
		Order:           12,
		Reads:           []sdk.KeyRef{CompletionKey(), ledgerKey()},
		Writes:          []sdk.KeyRef{CompletionKey()},
		Description:     "Tracks completion signals (success markers in tool output, the model saying it is done, setbacks) in completion.",
		EffectsDeclared: true,
	}
}

// BeforeMainLLMCall reads the end of the conversation when the prompt is final.
func (Completion) BeforeMainLLMCall(_ context.Context, c *sdk.Call, req *exocortexv1.BeforeMainLLMCallRequest) (*exocortexv1.BeforeMainLLMCallResponse, error) {
	it := req.GetIteration()
	cp, _ := CompletionKey().Get(c)
	if cp == nil {
		cp = &exocortexv1.Completion{}
	}
	if cp.GetCheckedIteration() >= it {
		return nil, nil
	}
	cp.CheckedIteration = it
	l, _ := ledgerKey().Get(c)
	es := l.GetEntries()
	for _, e := range es {
		if e.GetOk() && e.GetIteration() > cp.LastSuccessIteration {
			cp.LastSuccessIteration = e.GetIteration()
		}
	}
	add := func(kind, text string) {
		cp.Signals = append(cp.Signals, &exocortexv1.CompletionSignal{Kind: kind, Text: textfacts.Shorten(text, 120), Iteration: it})
	}
	recent := c.Context().GetInteractionHistory().GetRecentMessages()
	for i := len(recent) - 1; i >= 0; i-- {
		if m := recent[i]; m.GetRole() == "tool" {
			if n := len(es); n > 0 && es[n-1].GetOk() {
				if loc := successRE.FindStringIndex(m.GetContent()); loc != nil {
					add("success_marker", lineAt(m.GetContent(), loc[0]))
				}
			}
			break
		}
	}
	cp.ClaimedDone = false
	for i := len(recent) - 1; i >= 0; i-- {
		if recent[i].GetRole() != "assistant" {
			continue
		}
		if said := thoughts(recent[i].GetContent()); doneRE.MatchString(said) {
			cp.ClaimedDone = true
			add("claims_done", said)
		}
		break
	}
	if n := len(es); n > 0 && !es[n-1].GetOk() && es[n-1].GetIteration() == it-1 {
		add("setback", es[n-1].GetToolName()+" failed: "+es[n-1].GetExcerpt())
	}
	if n := len(cp.Signals) - MaxSignals; n > 0 {
		cp.Signals = cp.Signals[n:]
	}
	CompletionKey().Set(c, cp)
	return nil, nil
}

// thoughts returns a reply's thoughts and headline, or the reply itself when it
// is not the JSON reply format.
func thoughts(reply string) string {
	var r struct {
		Thoughts []string `json:"thoughts"`
		Headline string   `json:"headline"`
	}
	start, end := strings.IndexByte(reply, '{'), strings.LastIndexByte(reply, '}')
	if start < 0 || end <= start || json.Unmarshal([]byte(reply[start:end+1]), &r) != nil {
		return reply
	}
	return strings.TrimSpace(strings.Join(r.Thoughts, " ") + " " + r.Headline)
}

func lineAt(text string, off int) string {
	s := strings.LastIndexByte(text[:off], '\n') + 1
	e := strings.IndexByte(text[off:], '\n')
	if e < 0 {
		return strings.TrimSpace(text[s:])
	}
	return strings.TrimSpace(text[s : off+e])
}

// Tracker is the task tracker.
type Tracker struct{}

// Spec declares it.
func (e Tracker) Spec() sdk.Spec {
	return sdk.Spec{
		Name:            "task_tracker",
		Hooks:           []sdk.Hook{sdk.MessageLoopEnd(e)},
		Order:           48,
		Reads:           []sdk.KeyRef{StateKey(), CompletionKey(), gateKey()},
		Writes:          []sdk.KeyRef{StateKey()},
		Description:     "Moves the monologue's task through started, working, blocked, waiting_approval, verifying and done in task_state.",
		EffectsDeclared: true,
	}
}

// MessageLoopEnd applies the status rules.
func (Tracker) MessageLoopEnd(_ context.Context, c *sdk.Call, req *exocortexv1.MessageLoopEndRequest) (*exocortexv1.MessageLoopEndResponse, error) {
	ts, _ := StateKey().Get(c)
	if ts == nil {
		ts = &exocortexv1.TaskState{Status: Started}
		if m := turn.UserMessage(c); m != nil {
			ts.Goal = textfacts.Shorten(m.GetContent(), 200)
		}
		ts.Transitions = append(ts.Transitions, &exocortexv1.TaskTransition{To: Started, Iteration: req.GetIteration(), Reason: "the operator asked"})
	}
	tc, res := req.GetToolCall(), req.GetToolResult()
	if tc != nil && res != nil {
		ts.ToolCalls++
		if toolresult.Failed(res) {
			ts.ToolFailures++
		} else {
			ts.LastProgressIteration = req.GetIteration()
		}
	}
	cp, _ := CompletionKey().Get(c)
	next, reason := ts.GetStatus(), ""
	switch g, _ := gateKey().Get(c); {
	case res.GetBreakLoop():
		next, reason = Done, tc.GetName()+" gave the answer"
	case g.GetActive():
		next, reason = WaitingApproval, "waiting for the operator to approve: "+textfacts.Shorten(g.GetAction(), 80)
	case tc != nil && res != nil && toolresult.Failed(res):
		next, reason = Blocked, fmt.Sprintf("%s failed: %s", tc.GetName(), textfacts.Shorten(res.GetError()+" "+res.GetContent(), 100))
	case cp.GetClaimedDone() && cp.GetCheckedIteration() == req.GetIteration():
		next, reason = Verifying, "the model said it is done"
	case tc != nil && res != nil:
		next, reason = Working, tc.GetName()+" succeeded"
	}
	if next != ts.GetStatus() {
		ts.Transitions = append(ts.Transitions, &exocortexv1.TaskTransition{From: ts.GetStatus(), To: next, Iteration: req.GetIteration(), Reason: reason})
		ts.Status = next
	}
	StateKey().Set(c, ts)
	return nil, nil
}
