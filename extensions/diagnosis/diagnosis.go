// Package diagnosis understands tool failures: error comprehension classifies
// every tool output into error_diagnosis, the fallback advisor stops a call that
// would repeat the failure just diagnosed, and the fallback logger tells the model
// which other tool to try after repeated failures.
//
// Error comprehension (tool_execute_after, order 19; the seed's 20, which collides
// with reset_failure_counter at 20; 19 keeps the seed's effective order, where
// "_20_error_comprehension" sorted before "_20_reset_failure_counter"):
//   - a result is a failure when it has an error, or when its output holds a
//     failure marker (a Python traceback, a Go panic, "command not found", a
//     non-zero "exit status");
//   - a failure is classified by the first row of Table with a pattern matching
//     the error or the output (so a specific class in the output beats a
//     generic "exit status 1" in the error): blocked, permission, not_found,
//     missing_dependency, syntax, invalid_arguments, timeout, network, resource,
//     test_failure, runtime; none matching gives unknown (confidence 0.3);
//   - error_diagnosis gets the class, a causal chain (the evidence line, then the
//     class's usual cause), the suggested actions, the anti-actions and the
//     confidence; a success writes class none;
//   - a success clears action_gate_active: whatever waited for the operator is
//     over (the seed's rule; without it the gate sticks and the supervisor stays
//     silent for the rest of the session).
//
// Fallback advisor (tool_execute_before, order 30): when the call about to run
// is the same tool with the same arguments (compared as canonical JSON) as the
// last call in the evidence ledger, that call failed, and its diagnosis is not
// transient (timeout, network), the call is blocked without asking the operator.
// The block's reason carries the diagnosis and its suggested actions: it is the
// core's tool_blocked message, so the advice reaches the model. (The seed's
// advisor "injected" advice at tool_execute_before, where nothing reaches the
// model.)
//
// Fallback logger (tool_execute_after, order 30): when a tool has failed
// FallbackAfter times in a row (counted from the evidence ledger, which includes
// the current call), the result is annotated with the tools to try instead
// (Fallbacks, limited to the tools offered this iteration when tool_catalog is
// known) and the event is logged.
package diagnosis

import (
	"context"
	"fmt"
	"strings"

	"github.com/exocortex/exocortex/extensions/internal/turn"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

// FallbackAfter is the number of consecutive failures of one tool after which the
// fallback logger advises another tool.
const FallbackAfter = 2

func diagKey() sdk.Key[*exocortexv1.ErrorDiagnosis] { return sdk.KeyOf[*exocortexv1.ErrorDiagnosis]() }
func gateKey() sdk.Key[*exocortexv1.ActionGate]     { return sdk.KeyOf[*exocortexv1.ActionGate]() }
func ledgerKey() sdk.Key[*exocortexv1.EvidenceLedger] {
	return sdk.KeyOf[*exocortexv1.EvidenceLedger]()
}
func catalogKey() sdk.Key[*exocortexv1.ToolCatalog] { return sdk.KeyOf[*exocortexv1.ToolCatalog]() }
func bstKey() sdk.Key[*exocortexv1.BeliefState]     { return sdk.KeyOf[*exocortexv1.BeliefState]() }

// Comprehension is the error-comprehension extension.
type Comprehension struct{}

// Spec declares it.
func (e Comprehension) Spec() sdk.Spec {
	return sdk.Spec{
		Name:            "error_comprehension",
		Hooks:           []sdk.Hook{sdk.ToolExecuteAfter(e)},
		Order:           19,
		Reads:           []sdk.KeyRef{gateKey()},
		Writes:          []sdk.KeyRef{diagKey(), gateKey()},
		Resets:          []sdk.KeyRef{gateKey()},
		Description:     "Classifies each tool output into error_diagnosis (class, causal chain, suggested and anti-actions, confidence); a success clears action_gate_active.",
		EffectsDeclared: true,
	}
}

// ToolExecuteAfter diagnoses the result.
func (Comprehension) ToolExecuteAfter(_ context.Context, c *sdk.Call, req *exocortexv1.ToolExecuteAfterRequest) (*exocortexv1.ToolExecuteAfterResponse, error) {
	d := Diagnose(req.GetToolCall().GetName(), req.GetResult())
	diagKey().Set(c, d)
	if d.GetErrorClass() == None {
		if g, ok := gateKey().Get(c); ok && g.GetActive() {
			gateKey().Reset(c)
		}
	}
	return nil, nil
}

// Advisor is the tool-fallback advisor.
type Advisor struct{}

// Spec declares it.
func (e Advisor) Spec() sdk.Spec {
	return sdk.Spec{
		Name:            "tool_fallback_advisor",
		Hooks:           []sdk.Hook{sdk.ToolExecuteBefore(e)},
		Order:           30,
		Reads:           []sdk.KeyRef{diagKey(), ledgerKey()},
		Description:     "Blocks a call that repeats the call that just failed (same tool and arguments, not a transient error), giving the diagnosis and what to do instead.",
		EffectsDeclared: true,
		// Advice, not a guard: when it fails the call goes ahead, as it would
		// without the advisor.
		FailOpen: true,
	}
}

// ToolExecuteBefore blocks an exact repeat of a diagnosed failure.
func (Advisor) ToolExecuteBefore(_ context.Context, c *sdk.Call, req *exocortexv1.ToolExecuteBeforeRequest) (*exocortexv1.ToolExecuteBeforeResponse, error) {
	d, ok := diagKey().Get(c)
	if !ok || d.GetErrorClass() == None || IsTransient(d.GetErrorClass()) || d.GetErrorClass() == "blocked" {
		return nil, nil
	}
	l, _ := ledgerKey().Get(c)
	entries := l.GetEntries()
	if len(entries) == 0 {
		return nil, nil
	}
	last := entries[len(entries)-1]
	tc := req.GetToolCall()
	if last.GetOk() || last.GetToolName() != tc.GetName() || turn.Canonical(last.GetArgsJson()) != turn.Canonical(tc.GetArgsJson()) {
		return nil, nil
	}
	reason := fmt.Sprintf("this exact call failed just before (%s: %s). Do instead: %s. Avoid: %s.",
		d.GetErrorClass(), strings.Join(d.GetCausalChain(), "; "),
		strings.Join(d.GetSuggestedActions(), "; "), strings.Join(d.GetAntiActions(), "; "))
	c.Logger().Info("blocked a repeat of a failed call", "tool", tc.GetName(), "class", d.GetErrorClass())
	return &exocortexv1.ToolExecuteBeforeResponse{Block: &exocortexv1.ToolBlock{Reason: reason}}, nil
}

// Fallbacks returns the tools to try when tool keeps failing, best first.
func Fallbacks(tool, domain string) []string {
	switch tool {
	case "code_execution":
		return []string{"text_editor (read the files instead of running them)", "call_subordinate (hand the sub-task to a helper agent)"}
	case "text_editor":
		return []string{"code_execution (ls or cat to check the path first)", "call_subordinate"}
	case "web_search":
		if domain == "research" {
			return []string{"library_search (documents already collected)", "memory_load (what was learned before)"}
		}
		return []string{"memory_load (what was learned before)", "library_search"}
	case "memory_load", "memory_retrieve":
		return []string{"memory_retrieve (by tags)", "library_search"}
	case "library_search":
		return []string{"web_search", "memory_load"}
	case "data_analyze", "data_visualize":
		return []string{"code_execution (a short Python script)"}
	}
	return []string{"call_subordinate (hand the sub-task to a helper agent)", "response (tell the operator what blocks you)"}
}

// Logger is the tool-fallback logger.
type Logger struct{}

// Spec declares it.
func (e Logger) Spec() sdk.Spec {
	return sdk.Spec{
		Name:            "tool_fallback_logger",
		Hooks:           []sdk.Hook{sdk.ToolExecuteAfter(e)},
		Order:           30,
		Reads:           []sdk.KeyRef{diagKey(), ledgerKey(), catalogKey(), bstKey()},
		Description:     fmt.Sprintf("After %d failures in a row of one tool, annotates the result with the tools to try instead and logs it.", FallbackAfter),
		EffectsDeclared: true,
	}
}

// ToolExecuteAfter advises a fallback after repeated failures.
func (Logger) ToolExecuteAfter(_ context.Context, c *sdk.Call, req *exocortexv1.ToolExecuteAfterRequest) (*exocortexv1.ToolExecuteAfterResponse, error) {
	tool := req.GetToolCall().GetName()
	if !Failed(req.GetResult()) {
		return nil, nil
	}
	l, _ := ledgerKey().Get(c)
	streak := 0
	for i := len(l.GetEntries()) - 1; i >= 0; i-- {
		e := l.GetEntries()[i]
		if e.GetToolName() != tool || e.GetOk() {
			break
		}
		streak++
	}
	if streak < FallbackAfter {
		return nil, nil
	}
	bs, _ := bstKey().Get(c)
	options := Fallbacks(tool, bs.GetPrimaryDomain())
	if cat, ok := catalogKey().Get(c); ok && len(cat.GetTools()) > 0 {
		have := map[string]bool{}
		for _, t := range cat.GetTools() {
			have[t.GetName()] = true
		}
		var kept []string
		for _, o := range options {
			if have[strings.Fields(o)[0]] {
				kept = append(kept, o)
			}
		}
		options = kept
	}
	if len(options) == 0 {
		return nil, nil
	}
	d, _ := diagKey().Get(c)
	c.Logger().Info("fallback advised", "tool", tool, "failures", streak, "class", d.GetErrorClass(), "options", options)
	note := fmt.Sprintf("%s has failed %d times in a row (%s). Try another way: %s.", tool, streak, d.GetErrorClass(), strings.Join(options, "; or "))
	return &exocortexv1.ToolExecuteAfterResponse{Annotations: []string{note}}, nil
}
