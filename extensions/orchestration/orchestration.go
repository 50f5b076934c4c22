// Package orchestration decides whether a task should be split and delegated, and
// tells the model how.
//
// Orchestration gate (message_loop_start, order 17). The seed ran it at
// before_main_llm_call and had it inject text there, which never reached the
// model (its own note: "use _57_orchestration_mode"). Here it is pure state work,
// moved to message_loop_start so that orchestration_mode sees its decision in the
// same iteration. Rules:
//   - for a new operator message, its sub-tasks are its list items (lines
//     starting with "1.", "2)", "-", "*" or "•", of at least two words) or, without
//     a list, its parts joined by "and then", "; then" or ", then";
//   - three or more sub-tasks: delegate ("N separate parts");
//   - otherwise a compound domain signature (bst_store, two domains) on a message
//     of at least CompoundWords words: delegate ("a compound task");
//   - otherwise direct;
//   - at any iteration, a supervisor tier of 2 or more switches a direct task to
//     delegate ("stuck at tier N").
//
// Orchestration mode (message_loop_prompts_after, order 57, as in the seed): when
// the mode is delegate, adds the ORCHESTRATION block: the sub-tasks, how to hand
// one to call_subordinate (a self-contained message: the child does not see this
// conversation) and to combine the answers. Without call_subordinate among this
// iteration's tools (tool_catalog), it asks to work through the parts one at a
// time instead.
package orchestration

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"github.com/exocortex/exocortex/extensions/internal/textfacts"
	"github.com/exocortex/exocortex/extensions/internal/turn"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

// Modes.
const (
	Direct   = "direct"
	Delegate = "delegate"
)

// CompoundWords is the length from which a compound task is delegated.
const CompoundWords = 40

// MinSubtasks is the number of sub-tasks from which a task is delegated.
const MinSubtasks = 3

func key() sdk.Key[*exocortexv1.Orchestration]      { return sdk.KeyOf[*exocortexv1.Orchestration]() }
func bstKey() sdk.Key[*exocortexv1.BeliefState]     { return sdk.KeyOf[*exocortexv1.BeliefState]() }
func supKey() sdk.Key[*exocortexv1.SupervisorState] { return sdk.KeyOf[*exocortexv1.SupervisorState]() }
func catalogKey() sdk.Key[*exocortexv1.ToolCatalog] { return sdk.KeyOf[*exocortexv1.ToolCatalog]() }

var (
	itemRE = regexp.MustCompile(`(?m)^\s*(?:\d+[.)]|[-*•])\s+(.+)$`)
	thenRE = regexp.MustCompile(`(?i)\s*(?:,|;)?\s+and then\s+|\s*;\s*then\s+|\s*,\s*then\s+`)
)

// Subtasks returns the sub-tasks of a message.
func Subtasks(text string) []string {
	var out []string
	for _, m := range itemRE.FindAllStringSubmatch(text, -1) {
		if len(strings.Fields(m[1])) >= 2 {
			out = append(out, strings.TrimSpace(m[1]))
		}
	}
	if len(out) > 0 {
		return out
	}
	parts := thenRE.Split(strings.TrimSpace(text), -1)
	if len(parts) < 2 {
		return nil
	}
	for _, p := range parts {
		if p = strings.TrimSpace(strings.TrimRight(p, ".")); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// Gate is the orchestration gate.
type Gate struct{}

// Spec declares it.
func (e Gate) Spec() sdk.Spec {
	return sdk.Spec{
		Name:            "orchestration_gate",
		Hooks:           []sdk.Hook{sdk.MessageLoopStart(e)},
		Order:           17,
		Reads:           []sdk.KeyRef{key(), bstKey(), supKey()},
		Writes:          []sdk.KeyRef{key()},
		Description:     "Decides direct or delegate for the task (sub-tasks, compound domain, supervisor tier) in orchestration.",
		EffectsDeclared: true,
	}
}

// MessageLoopStart decides.
func (Gate) MessageLoopStart(_ context.Context, c *sdk.Call, req *exocortexv1.MessageLoopStartRequest) (*exocortexv1.MessageLoopStartResponse, error) {
	o, _ := key().Get(c)
	m := turn.UserMessage(c)
	changed := false
	if m != nil && m.GetId() != o.GetMessageId() {
		o = decide(m.GetContent())
		o.MessageId = m.GetId()
		o.DecidedIteration = req.GetIteration()
		if b, ok := bstKey().Get(c); ok && o.Mode == Direct && strings.Contains(b.GetCompoundSig(), "+") && len(strings.Fields(m.GetContent())) >= CompoundWords {
			o.Mode, o.Reason = Delegate, "a compound task ("+b.GetCompoundSig()+")"
		}
		changed = true
	}
	if o == nil {
		return nil, nil
	}
	if s, ok := supKey().Get(c); ok && s.GetLoopTier() >= 2 && o.GetMode() != Delegate {
		o.Mode, o.Reason = Delegate, fmt.Sprintf("stuck at supervisor tier %d: hand a part to a helper", s.GetLoopTier())
		o.DecidedIteration = req.GetIteration()
		changed = true
	}
	if changed {
		key().Set(c, o)
	}
	return nil, nil
}

func decide(text string) *exocortexv1.Orchestration {
	subs := Subtasks(text)
	if len(subs) >= MinSubtasks {
		return &exocortexv1.Orchestration{Mode: Delegate, Reason: fmt.Sprintf("%d separate parts", len(subs)), Subtasks: subs}
	}
	return &exocortexv1.Orchestration{Mode: Direct, Subtasks: subs}
}

// Mode is the orchestration-mode extension.
type Mode struct{}

// Spec declares it.
func (e Mode) Spec() sdk.Spec {
	return sdk.Spec{
		Name:            "orchestration_mode",
		Hooks:           []sdk.Hook{sdk.MessageLoopPromptsAfter(e)},
		Order:           57,
		Reads:           []sdk.KeyRef{key(), catalogKey()},
		InjectsPrompt:   true,
		Description:     "When the gate chose delegate, adds the ORCHESTRATION block: the sub-tasks and how to delegate them with call_subordinate.",
		EffectsDeclared: true,
	}
}

// MessageLoopPromptsAfter adds the scaffolding.
func (Mode) MessageLoopPromptsAfter(_ context.Context, c *sdk.Call, _ *exocortexv1.MessageLoopPromptsAfterRequest) (*exocortexv1.MessageLoopPromptsAfterResponse, error) {
	o, ok := key().Get(c)
	if !ok || o.GetMode() != Delegate {
		return nil, nil
	}
	canDelegate := false
	if cat, ok := catalogKey().Get(c); ok {
		for _, t := range cat.GetTools() {
			if t.GetName() == "call_subordinate" {
				canDelegate = true
			}
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "This task calls for orchestration: %s.\n", o.GetReason())
	if len(o.GetSubtasks()) > 0 {
		b.WriteString("Its parts:\n")
		for i, s := range o.GetSubtasks() {
			fmt.Fprintf(&b, "%d. %s\n", i+1, textfacts.Shorten(s, 160))
		}
	}
	if canDelegate {
		b.WriteString("Hand each independent part to call_subordinate with a self-contained message: the helper does not see this conversation, so give it the files, facts and the exact question. Do the parts that depend on others yourself, in order. Then combine the answers and check them before you respond.")
	} else {
		b.WriteString("Work through the parts one at a time, say which part you are on, and check each result before moving on.")
	}
	return &exocortexv1.MessageLoopPromptsAfterResponse{PromptBlocks: []*exocortexv1.PromptBlock{{Title: "ORCHESTRATION", Content: b.String()}}}, nil
}
