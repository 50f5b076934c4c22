package lint

import (
	"fmt"

	"github.com/exocortex/exocortex/core/hooks"
)

// requestFields checks the declarations that ask the host for request fields
// (EXO117): reads_history at a hook whose requests carry no history or prompt
// messages, reads_prompt at one that threads no prompt so far. The Go SDKs
// carry them only where they mean something; a hand-written manifest may not,
// and then the author believes the extension is sent what it never is.
func (c *checker) requestFields() {
	for _, e := range c.g.Extensions {
		if e.ShadowedBy != "" {
			continue
		}
		in, _ := hooks.Of(e.Spec.GetHook())
		if e.Spec.GetReadsHistory() && !in.CarriesHistory {
			c.add(Finding{Code: "EXO117", Severity: Warning, Plugin: e.Plugin.Name, Extension: e.Name,
				Message: fmt.Sprintf("extension %s of plugin %s declares reads_history at %s, whose requests carry no history: only message_loop_prompts_before, message_loop_prompts_after and monologue_end (history) and before_main_llm_call and chat_model_call_before (prompt) do; it gets the recent messages in its context like every extension", e.Name, e.Plugin.Name, e.Hook.Name),
				Fix:     "drop reads_history from the declaration at " + e.Hook.Name})
		}
		if e.Spec.GetReadsPrompt() && !in.ThreadsPrompt {
			c.add(Finding{Code: "EXO117", Severity: Warning, Plugin: e.Plugin.Name, Extension: e.Name,
				Message: fmt.Sprintf("extension %s of plugin %s declares reads_prompt at %s, whose requests carry no prompt so far: only system_prompt (system_prompt) and message_loop_prompts_after (extras, prompt_tokens) do", e.Name, e.Plugin.Name, e.Hook.Name),
				Fix:     "drop reads_prompt from the declaration at " + e.Hook.Name})
		}
	}
}
