// Package htn is the HTN plan selector: for a task of a domain it has a plan for,
// it picks the plan (a fixed sequence of steps, the top of a hierarchical task
// network), follows which steps are done from the tools that succeeded, and shows
// the plan with the current step.
//
// HTN plan selector (message_loop_prompts_before, order 15). The seed ran it at
// before_main_llm_call, where its block never reached the model. Rules:
//   - a plan is selected when the primary domain of bst_store has one in Plans
//     and the operator's message has at least MinWords words (a one-line
//     question needs no plan) and is about the plan's task (isAbout: a cue
//     word of the domain's count alone is no task); the same plan is kept
//     for the whole monologue;
//   - progress is replayed from the evidence ledger in order: a successful call
//     of one of the current step's tools completes the step and moves to the
//     next, so steps are done in order and a failed call completes nothing;
//   - the PLAN block lists the steps as done, now (with its hint) or to do.
package htn

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/exocortex/exocortex/extensions/internal/turn"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

// MinWords is the length of an operator message from which a plan is selected.
const MinWords = 6

// Plan is a named sequence of steps.
type Plan struct {
	Name  string
	Steps []*exocortexv1.PlanStep
}

func step(name, hint string, tools ...string) *exocortexv1.PlanStep {
	return &exocortexv1.PlanStep{Name: name, Hint: hint, Tools: tools}
}

// Plans returns the plan of each domain that has one.
func Plans() map[string]Plan {
	return map[string]Plan{
		"debugging": {"fix a failure", []*exocortexv1.PlanStep{
			step("Reproduce the failure", "run the failing command or test and read the error", "code_execution"),
			step("Locate the cause", "read the code or file the error points to", "text_editor", "code_execution"),
			step("Fix it", "change the code with text_editor", "text_editor"),
			step("Verify the fix", "run the same command again; it must pass now", "code_execution"),
			step("Report", "answer with what was wrong and what you changed", "response"),
		}},
		"coding": {"change code", []*exocortexv1.PlanStep{
			step("Read the relevant code", "open the files the change touches", "text_editor", "code_execution"),
			step("Make the change", "edit with text_editor", "text_editor"),
			step("Build and test", "run the build and the tests", "code_execution"),
			step("Report", "answer with what changed and how it was tested", "response"),
		}},
		"investigation": {"find out", []*exocortexv1.PlanStep{
			step("Gather facts", "look with tools instead of guessing", "code_execution", "text_editor", "web_search", "memory_load", "library_search"),
			step("Cross-check", "confirm each finding with a second source or command", "code_execution", "text_editor", "web_search", "library_search"),
			step("Report", "answer with the findings and the evidence for each", "response"),
		}},
		"research": {"research a question", []*exocortexv1.PlanStep{
			step("Search for sources", "search the library and the web", "library_search", "web_search", "memory_load"),
			step("Read the best sources", "open the most relevant ones", "web_search", "library_search", "text_editor", "code_execution"),
			step("Synthesise", "write the answer citing the sources", "response"),
		}},
		"analysis": {"analyse data", []*exocortexv1.PlanStep{
			step("Load the data", "look at its shape and columns first", "data_analyze", "code_execution", "text_editor"),
			step("Compute", "run the analysis", "data_analyze", "code_execution", "data_visualize"),
			step("Check the results", "sanity-check the numbers (counts, ranges)", "data_analyze", "code_execution"),
			step("Report", "answer with the numbers and how they were obtained", "response"),
		}},
		"operations": {"change a system", []*exocortexv1.PlanStep{
			step("Inspect the current state", "read configs and status before changing anything", "code_execution", "text_editor"),
			step("Apply the change", "risky commands need the operator's approval", "code_execution", "text_editor"),
			step("Verify", "check the service or file is as intended", "code_execution"),
			step("Report", "answer with what changed and how to undo it", "response"),
		}},
	}
}

func key() sdk.Key[*exocortexv1.HTNPlan]        { return sdk.KeyOf[*exocortexv1.HTNPlan]() }
func bstKey() sdk.Key[*exocortexv1.BeliefState] { return sdk.KeyOf[*exocortexv1.BeliefState]() }
func ledgerKey() sdk.Key[*exocortexv1.EvidenceLedger] {
	return sdk.KeyOf[*exocortexv1.EvidenceLedger]()
}

// Progress replays the ledger over the plan's steps.
func Progress(p *exocortexv1.HTNPlan, l *exocortexv1.EvidenceLedger) {
	for _, s := range p.Steps {
		s.Done, s.DoneIteration = false, 0
	}
	cur := 0
	for _, e := range l.GetEntries() {
		if cur >= len(p.Steps) {
			break
		}
		if e.GetOk() && slices.Contains(p.Steps[cur].GetTools(), e.GetToolName()) {
			p.Steps[cur].Done, p.Steps[cur].DoneIteration = true, e.GetIteration()
			cur++
		}
	}
	p.Current = int32(cur)
}

// Render is the PLAN block's text.
func Render(p *exocortexv1.HTNPlan) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Plan for this %s task (%s). Follow it; adapt it if the facts demand.\n", p.GetDomain(), p.GetPlan())
	for i, s := range p.GetSteps() {
		switch {
		case s.GetDone():
			fmt.Fprintf(&b, "%d. [done] %s\n", i+1, s.GetName())
		case int32(i) == p.GetCurrent():
			fmt.Fprintf(&b, "%d. [now] %s: %s\n", i+1, s.GetName(), s.GetHint())
		default:
			fmt.Fprintf(&b, "%d. [ ] %s\n", i+1, s.GetName())
		}
	}
	return strings.TrimSpace(b.String())
}

// Selector is the HTN plan selector.
type Selector struct{}

// Spec declares it.
func (e Selector) Spec() sdk.Spec {
	return sdk.Spec{
		Name:            "htn_plan_selector",
		Hooks:           []sdk.Hook{sdk.MessageLoopPromptsBefore(e)},
		Order:           15,
		Reads:           []sdk.KeyRef{key(), bstKey(), ledgerKey()},
		Writes:          []sdk.KeyRef{key()},
		InjectsPrompt:   true,
		Description:     "Selects the plan of the task's primary domain (bst_store), tracks its steps from the evidence ledger in htn_plan, and adds the PLAN block.",
		EffectsDeclared: true,
	}
}

// MessageLoopPromptsBefore selects and shows the plan.
func (Selector) MessageLoopPromptsBefore(_ context.Context, c *sdk.Call, _ *exocortexv1.MessageLoopPromptsBeforeRequest) (*exocortexv1.MessageLoopPromptsBeforeResponse, error) {
	p, ok := key().Get(c)
	if !ok {
		bs, _ := bstKey().Get(c)
		plan, has := Plans()[bs.GetPrimaryDomain()]
		m := turn.UserMessage(c)
		if !has || m == nil || len(strings.Fields(m.GetContent())) < MinWords || !isAbout(bs.GetPrimaryDomain(), m.GetContent()) {
			return nil, nil
		}
		p = &exocortexv1.HTNPlan{Domain: bs.GetPrimaryDomain(), Plan: plan.Name, Steps: plan.Steps}
	}
	l, _ := ledgerKey().Get(c)
	Progress(p, l)
	key().Set(c, p)
	return &exocortexv1.MessageLoopPromptsBeforeResponse{PromptBlocks: []*exocortexv1.PromptBlock{{Title: "PLAN", Content: Render(p)}}}, nil
}
