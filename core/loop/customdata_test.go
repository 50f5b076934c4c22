package loop

import (
	"strings"
	"testing"

	"github.com/exocortex/exocortex/core/hooks"
	"github.com/exocortex/exocortex/core/llm"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// TestContextCustomData: every hook context carries the host's token estimate,
// window and depth in custom_data, with the values in force when the context
// is built: the message shared between contexts is made anew once the count is
// calibrated or the window changes, and never changes under an earlier one.
func TestContextCustomData(t *testing.T) {
	a := &Agent{tokens: newTokenCounter(), window: 4096, depth: 1}
	info, _ := hooks.Of(exocortexv1.Hook_HOOK_MESSAGE_LOOP_END)
	tr := &turn{requestID: "r", iteration: 1}
	num := func(c *exocortexv1.Context, key string) float64 {
		return c.GetCustomData().GetFields()[key].GetNumberValue()
	}
	first := a.context(tr, info)
	second := a.context(tr, info)
	tests := []struct {
		name   string
		change func()
		window float64
		depth  float64
	}{
		{"unchanged", func() {}, 4096, 1},
		{"window learnt", func() { a.window = 8192 }, 8192, 1},
		{"calibrated", func() {
			a.tokens.observe([]llm.Message{{Role: "user", Content: strings.Repeat("word ", 200)}}, 400, 0)
		}, 8192, 1},
		{"subordinate depth", func() { a.depth = 2 }, 8192, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.change()
			c := a.context(tr, info)
			if got := num(c, CustomNumCtx); got != tt.window {
				t.Errorf("%s = %v, want %v", CustomNumCtx, got, tt.window)
			}
			if got := num(c, CustomAgentDepth); got != tt.depth {
				t.Errorf("%s = %v, want %v", CustomAgentDepth, got, tt.depth)
			}
			if got, want := num(c, CustomTokensPerByte), a.perByte(); got != want {
				t.Errorf("%s = %v, want %v", CustomTokensPerByte, got, want)
			}
			if got := num(c, CustomMessageOverhead); got != messageOverhead {
				t.Errorf("%s = %v, want %v", CustomMessageOverhead, got, float64(messageOverhead))
			}
		})
	}
	// The first contexts keep what they were built with.
	for _, c := range []*exocortexv1.Context{first, second} {
		if num(c, CustomNumCtx) != 4096 || num(c, CustomAgentDepth) != 1 || num(c, CustomTokensPerByte) != initialTokensPerByte {
			t.Errorf("an earlier context changed: %v", c.GetCustomData())
		}
	}
	if first.GetContextId() == second.GetContextId() {
		t.Error("two contexts share a context_id")
	}
}
