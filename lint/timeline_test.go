package lint

import (
	"testing"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/wiring"
)

// TestTimeline pins the timing model of rule 3 (see the package doc): for one
// key of a given scope, one writer and one reader at given hooks and orders, the
// finding reported for the reader, if any.
func TestTimeline(t *testing.T) {
	type at struct {
		hook  exocortexv1.Hook
		order int32
		once  bool
	}
	const (
		agentInit  = exocortexv1.Hook_HOOK_AGENT_INIT
		monoStart  = exocortexv1.Hook_HOOK_MONOLOGUE_START
		histAdd    = exocortexv1.Hook_HOOK_HIST_ADD_BEFORE
		loopStart  = exocortexv1.Hook_HOOK_MESSAGE_LOOP_START
		before     = exocortexv1.Hook_HOOK_MESSAGE_LOOP_PROMPTS_BEFORE
		after      = exocortexv1.Hook_HOOK_MESSAGE_LOOP_PROMPTS_AFTER
		toolBefore = exocortexv1.Hook_HOOK_TOOL_EXECUTE_BEFORE
		toolAfter  = exocortexv1.Hook_HOOK_TOOL_EXECUTE_AFTER
		loopEnd    = exocortexv1.Hook_HOOK_MESSAGE_LOOP_END
		monoEnd    = exocortexv1.Hook_HOOK_MONOLOGUE_END
		output     = exocortexv1.Hook_HOOK_TOOL_OUTPUT_UPDATE
		histTool   = exocortexv1.Hook_HOOK_HIST_ADD_TOOL_RESULT
		readAfter  = exocortexv1.Hook_HOOK_TEXT_EDITOR_READ_AFTER
		writeAfter = exocortexv1.Hook_HOOK_TEXT_EDITOR_WRITE_AFTER
		embedding  = exocortexv1.Hook_HOOK_EMBEDDING_MODEL_CHANGED
		mainCall   = exocortexv1.Hook_HOOK_BEFORE_MAIN_LLM_CALL
		iteration  = exocortexv1.Scope_SCOPE_ITERATION
		monologue  = exocortexv1.Scope_SCOPE_MONOLOGUE
		session    = exocortexv1.Scope_SCOPE_SESSION
		persistent = exocortexv1.Scope_SCOPE_PERSISTENT
	)
	tests := []struct {
		name           string
		scope          exocortexv1.Scope
		writer, reader at
		want           string // "" for no finding
	}{
		{"written earlier in the iteration", iteration, at{before, 10, false}, at{after, 10, false}, ""},
		{"iteration key written after the reader", iteration, at{toolAfter, 10, false}, at{after, 10, false}, "EXO033"},
		{"monologue key written after the reader", monologue, at{toolAfter, 10, false}, at{after, 10, false}, "EXO034"},
		{"monologue key written only at monologue_end", monologue, at{monoEnd, 10, false}, at{loopEnd, 10, false}, "EXO033"},
		{"monologue key written at agent_init, reset at monologue_start", monologue, at{agentInit, 10, false}, at{loopStart, 10, false}, "EXO033"},
		{"session key written at monologue_start", session, at{monoStart, 10, false}, at{after, 10, false}, ""},
		{"session key written at agent_init, read at monologue_end", session, at{agentInit, 10, false}, at{monoEnd, 10, false}, ""},
		{"session key read at agent_init, written later", session, at{monoEnd, 10, false}, at{agentInit, 10, false}, "EXO033"},
		{"persistent key read at agent_init, written later", persistent, at{monoEnd, 10, false}, at{agentInit, 10, false}, "EXO034"},
		{"same hook, writer's order higher", session, at{loopEnd, 20, false}, at{loopEnd, 10, false}, "EXO034"},
		{"same hook, writer's order lower", session, at{loopEnd, 10, false}, at{loopEnd, 20, false}, ""},
		{"iteration key from a once-per-session writer", iteration, at{loopStart, 10, true}, at{after, 10, false}, "EXO034"},
		{"iteration key written when the reply is added", iteration, at{histAdd, 10, false}, at{toolBefore, 10, false}, ""},
		{"reader at hist_add_before sees earlier values by design", monologue, at{toolAfter, 10, false}, at{histAdd, 10, false}, ""},
		{"monologue key written at hist_add_before for the user message", monologue, at{histAdd, 10, false}, at{monoStart, 10, false}, ""},
		// The tool-side hooks, where core/loop fires them around a tool call.
		{"iteration key from the partial output, read after the tool", iteration, at{output, 10, false}, at{toolAfter, 10, false}, ""},
		{"iteration key from the edited file's read, read as the result is stored", iteration, at{readAfter, 10, false}, at{histTool, 10, false}, ""},
		{"iteration key written as the result is stored, read at the next prompt", iteration, at{histTool, 10, false}, at{after, 10, false}, "EXO033"},
		{"iteration key written as the result is stored, read during the tool's run", iteration, at{histTool, 10, false}, at{output, 10, false}, "EXO033"},
		{"monologue key written after a file write, read at the prompt", monologue, at{writeAfter, 10, false}, at{after, 10, false}, "EXO034"},
		{"iteration key written when the store was re-embedded, read before the model call", iteration, at{embedding, 10, false}, at{mainCall, 10, false}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := func(name string, a at) *exocortexv1.ExtensionSpec {
				return &exocortexv1.ExtensionSpec{Name: name, Hook: a.hook, Order: a.order, OncePerSession: a.once}
			}
			w, r := spec("writer", tt.writer), spec("reader", tt.reader)
			w.Writes, r.Reads = []string{"k"}, []string{"k"}
			in := Input{Model: wiring.Model{Plugins: []wiring.Plugin{{Name: "p", Manifest: &exocortexv1.ManifestResponse{
				Extensions: []*exocortexv1.ExtensionSpec{w, r},
				StateKeys:  []*exocortexv1.StateKeySpec{{Name: "k", Type: "exocortex.v1.SupervisorState", Scope: tt.scope}},
			}}}}}
			var got string
			for _, f := range Check(in) {
				if f.Code == "EXO033" || f.Code == "EXO034" {
					if got != "" || f.Extension != "reader" || f.Key != "k" {
						t.Fatalf("unexpected %s: %s", f.Code, f.Message)
					}
					got = f.Code
				}
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
