// Package watchdog watches how full the model's context window is. At
// message_loop_prompts_after (the last point where text reaches this iteration's
// model call) it records the estimate in context_fill and, from WarnAt on, adds a
// prompt block telling the model to wrap up or summarise.
package watchdog

import (
	"context"
	"fmt"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

// WarnAt is the fill ratio from which the model is warned.
const WarnAt = 0.75

func fill() sdk.Key[*exocortexv1.ContextFill] { return sdk.KeyOf[*exocortexv1.ContextFill]() }

// Context is the watchdog extension.
type Context struct{}

// Spec declares the watchdog.
func (e Context) Spec() sdk.Spec {
	return sdk.Spec{
		Name:          "context_watchdog",
		Hooks:         []sdk.Hook{sdk.MessageLoopPromptsAfter(e)},
		Order:         20,
		Writes:        []sdk.KeyRef{fill()},
		InjectsPrompt: true,
		Description:   fmt.Sprintf("Records context fill; warns the model from %.0f%% of num_ctx.", WarnAt*100),
		// The fill is that of the prompt so far (prompt_tokens), which the host
		// sends only to extensions that declare reading it.
		ReadsPrompt:     true,
		EffectsDeclared: true,
	}
}

// MessageLoopPromptsAfter measures and warns.
func (Context) MessageLoopPromptsAfter(_ context.Context, c *sdk.Call, req *exocortexv1.MessageLoopPromptsAfterRequest) (*exocortexv1.MessageLoopPromptsAfterResponse, error) {
	if req.GetNumCtx() <= 0 {
		return nil, nil
	}
	ratio := float64(req.GetPromptTokens()) / float64(req.GetNumCtx())
	v := &exocortexv1.ContextFill{PromptTokens: req.GetPromptTokens(), NumCtx: req.GetNumCtx(), Fill: ratio}
	resp := &exocortexv1.MessageLoopPromptsAfterResponse{}
	if ratio >= WarnAt {
		v.Warned = true
		resp.PromptBlocks = []*exocortexv1.PromptBlock{{
			Title: "CONTEXT",
			Content: fmt.Sprintf("The context window is %.0f%% full (%d of %d tokens). Finish the task soon or summarise what you know before older messages are lost.",
				ratio*100, req.GetPromptTokens(), req.GetNumCtx()),
		}}
	}
	fill().Set(c, v)
	return resp, nil
}
