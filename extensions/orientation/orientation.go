// Package orientation gives the model its bearings at the start of each step:
// what went wrong last, what to do about it, where the task
// stands.
//
// Situational orientation (message_loop_prompts_after, order 14). The seed ran it
// at before_main_llm_call, where nothing it wrote reached the model. It adds a
// SITUATION block when, and only when, there is something to act on:
//   - the last tool call failed (error_diagnosis, class other than none): the
//     tool, the class and confidence, the causal chain, what to do and what not
//     to do: this is how a diagnosis reaches the next prompt;
//   - the last code run's tests failed (code_quality): which;
//   - a file written in the previous iteration failed the write validator
//     (write_log): which, what is wrong, and the way back (restore_backup);
//   - the task is blocked or the model said it is done without answering
//     (task_state).
//
// The block also names the task's domain (bst_store) when it shows.
package orientation

import (
	"context"
	"fmt"
	"strings"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

func diagKey() sdk.Key[*exocortexv1.ErrorDiagnosis] { return sdk.KeyOf[*exocortexv1.ErrorDiagnosis]() }
func bstKey() sdk.Key[*exocortexv1.BeliefState]     { return sdk.KeyOf[*exocortexv1.BeliefState]() }
func taskKey() sdk.Key[*exocortexv1.TaskState]      { return sdk.KeyOf[*exocortexv1.TaskState]() }
func qualityKey() sdk.Key[*exocortexv1.CodeQuality] { return sdk.KeyOf[*exocortexv1.CodeQuality]() }
func writeLogKey() sdk.Key[*exocortexv1.WriteLog]   { return sdk.KeyOf[*exocortexv1.WriteLog]() }

// Extension is the situational-orientation extension.
type Extension struct{}

// Spec declares it.
func (e Extension) Spec() sdk.Spec {
	return sdk.Spec{
		Name:            "situational_orientation",
		Hooks:           []sdk.Hook{sdk.MessageLoopPromptsAfter(e)},
		Order:           14,
		Reads:           []sdk.KeyRef{diagKey(), bstKey(), taskKey(), qualityKey(), writeLogKey()},
		InjectsPrompt:   true,
		Description:     "Adds the SITUATION block when there is something to act on: the last error's diagnosis and advice, an action waiting for approval, failing tests, a bad file write, a blocked task.",
		EffectsDeclared: true,
	}
}

// Situation renders the block's lines; empty when there is nothing to act on.
func Situation(d *exocortexv1.ErrorDiagnosis, q *exocortexv1.CodeQuality, ts *exocortexv1.TaskState) []string {
	var lines []string
	if d.GetErrorClass() != "" && d.GetErrorClass() != "none" {
		lines = append(lines, fmt.Sprintf("The last %s call failed: %s (confidence %.2f).", d.GetToolName(), d.GetErrorClass(), d.GetConfidence()))
		for _, c := range d.GetCausalChain() {
			lines = append(lines, "- "+c)
		}
		if len(d.GetSuggestedActions()) > 0 {
			lines = append(lines, "Do: "+strings.Join(d.GetSuggestedActions(), "; ")+".")
		}
		if len(d.GetAntiActions()) > 0 {
			lines = append(lines, "Avoid: "+strings.Join(d.GetAntiActions(), "; ")+".")
		}
	}
	if q.GetVerdict() == "tests_failed" {
		lines = append(lines, "Failing tests: "+strings.Join(q.GetFailingTests(), ", ")+". The task is not done while they fail.")
	}
	switch ts.GetStatus() {
	case "verifying":
		lines = append(lines, "You said the work is done: check it with a tool, then answer with the response tool.")
	case "blocked":
		if len(lines) == 0 {
			lines = append(lines, "The task is blocked: "+lastReason(ts)+".")
		}
	}
	return lines
}

func lastReason(ts *exocortexv1.TaskState) string {
	if n := len(ts.GetTransitions()); n > 0 {
		return ts.GetTransitions()[n-1].GetReason()
	}
	return "the last step failed"
}

// MessageLoopPromptsAfter adds the block.
func (Extension) MessageLoopPromptsAfter(_ context.Context, c *sdk.Call, _ *exocortexv1.MessageLoopPromptsAfterRequest) (*exocortexv1.MessageLoopPromptsAfterResponse, error) {
	d, _ := diagKey().Get(c)
	q, _ := qualityKey().Get(c)
	ts, _ := taskKey().Get(c)
	lines := Situation(d, q, ts)
	if wl, ok := writeLogKey().Get(c); ok {
		it := c.Context().GetIteration()
		for _, w := range wl.GetWrites() {
			if w.GetValidated() && w.GetProblem() != "" && w.GetIteration() == it-1 {
				lines = append(lines, fmt.Sprintf("Your write to %s has a problem: %s. Put the old version back with restore_backup, or write the file again in full.", w.GetPath(), w.GetProblem()))
			}
		}
	}
	if len(lines) == 0 {
		return nil, nil
	}
	if b, ok := bstKey().Get(c); ok && b.GetCompoundSig() != "" {
		lines = append(lines, fmt.Sprintf("Task domain: %s.", b.GetCompoundSig()))
	}
	return &exocortexv1.MessageLoopPromptsAfterResponse{PromptBlocks: []*exocortexv1.PromptBlock{{Title: "SITUATION", Content: strings.Join(lines, "\n")}}}, nil
}
