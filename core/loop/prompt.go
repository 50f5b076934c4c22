package loop

import (
	"context"
	"fmt"
	"strings"

	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/core/llm"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// assembled is a prompt ready for the model.
type assembled struct {
	messages []llm.Message
	tokens   int
}

// preparePrompt runs the three prompt-assembly hooks and builds the messages:
// the system prompt (main, tools, system_prompt blocks), the blocks from
// message_loop_prompts_before, the history, and the extras from
// message_loop_prompts_after as the last message.
func (a *Agent) preparePrompt(ctx context.Context, t *turn) (assembled, error) {
	var before []*exocortexv1.PromptBlock
	err := fire(ctx, a, t, exocortexv1.Hook_HOOK_MESSAGE_LOOP_PROMPTS_BEFORE,
		func(c *exocortexv1.HookCall, f fields) *exocortexv1.MessageLoopPromptsBeforeRequest {
			return &exocortexv1.MessageLoopPromptsBeforeRequest{Call: c, Iteration: int32(t.iteration), History: ifFull(f.history, a.history)}
		}, exocortexv1.PluginClient.MessageLoopPromptsBefore,
		func(ext *host.Extension, r *exocortexv1.MessageLoopPromptsBeforeResponse) error {
			before = append(before, sourced(ext, r.GetPromptBlocks())...)
			return nil
		})
	if err != nil {
		return assembled{}, err
	}

	system, err := a.baseSystemPrompt()
	if err != nil {
		return assembled{}, err
	}
	var toolSpecs []*exocortexv1.ToolSpec
	for _, tl := range a.opts.Host.Tools() {
		toolSpecs = append(toolSpecs, tl.Spec)
	}
	err = fire(ctx, a, t, exocortexv1.Hook_HOOK_SYSTEM_PROMPT,
		func(c *exocortexv1.HookCall, f fields) *exocortexv1.SystemPromptRequest {
			r := &exocortexv1.SystemPromptRequest{Call: c, Tools: toolSpecs}
			if f.prompt {
				r.SystemPrompt = system
			}
			return r
		}, exocortexv1.PluginClient.SystemPrompt,
		func(ext *host.Extension, r *exocortexv1.SystemPromptResponse) error {
			if bs := sourced(ext, r.GetPromptBlocks()); len(bs) > 0 {
				system += "\n\n" + renderBlocks(bs)
			}
			return nil
		})
	if err != nil {
		return assembled{}, err
	}

	msgs := []llm.Message{{Role: llm.RoleSystem, Content: system}}
	if len(before) > 0 {
		msgs = append(msgs, llm.Message{Role: llm.RoleSystem, Content: renderBlocks(before)})
	}
	for _, m := range a.history {
		msgs = append(msgs, toLLM(m))
	}
	var extras []*exocortexv1.PromptBlock
	err = fire(ctx, a, t, exocortexv1.Hook_HOOK_MESSAGE_LOOP_PROMPTS_AFTER,
		func(c *exocortexv1.HookCall, f fields) *exocortexv1.MessageLoopPromptsAfterRequest {
			r := &exocortexv1.MessageLoopPromptsAfterRequest{
				Call: c, Iteration: int32(t.iteration), History: ifFull(f.history, a.history), NumCtx: int32(a.opts.NumCtx),
			}
			if f.prompt {
				r.Extras, r.PromptTokens = extras, int32(estimateTokens(msgs)+blockTokens(extras))
			}
			return r
		}, exocortexv1.PluginClient.MessageLoopPromptsAfter,
		func(ext *host.Extension, r *exocortexv1.MessageLoopPromptsAfterResponse) error {
			extras = append(extras, sourced(ext, r.GetPromptBlocks())...)
			return nil
		})
	if err != nil {
		return assembled{}, err
	}
	if len(extras) > 0 {
		msgs = append(msgs, llm.Message{Role: llm.RoleUser, Content: renderBlocks(extras)})
	}
	return assembled{messages: msgs, tokens: estimateTokens(msgs)}, nil
}

func (a *Agent) baseSystemPrompt() (string, error) {
	main, err := a.opts.Prompts.Render("agent.system.main", nil)
	if err != nil {
		return "", err
	}
	tools, err := a.opts.Prompts.Render("agent.system.tools", map[string]any{"tools": a.toolList()})
	if err != nil {
		return "", err
	}
	return strings.TrimSpace(main) + "\n\n" + strings.TrimSpace(tools), nil
}

// toolList renders the tools for the system prompt: the tool's prompt file when
// it names one (overridable like every prompt, and written with its own heading
// and arguments), else a heading, the description and the JSON Schema.
func (a *Agent) toolList() string {
	var b strings.Builder
	for _, t := range a.opts.Host.Tools() {
		if pf := t.Spec.GetPromptFile(); pf != "" {
			text, err := a.opts.Prompts.Render(pf, nil)
			if err == nil {
				b.WriteString(strings.TrimSpace(text) + "\n\n")
				continue
			}
			a.log.Warn("tool prompt file not used", "tool", t.Spec.GetName(), "file", pf, "err", err)
		}
		fmt.Fprintf(&b, "### %s\n%s\n", t.Spec.GetName(), strings.TrimSpace(t.Spec.GetDescription()))
		if s := t.Spec.GetParametersJsonSchema(); s != "" {
			fmt.Fprintf(&b, "Arguments (JSON Schema): %s\n", s)
		}
		b.WriteString("\n")
	}
	if b.Len() == 0 {
		return "(no tools are loaded)"
	}
	return strings.TrimSpace(b.String())
}

func (a *Agent) toolNames() string {
	var names []string
	for _, t := range a.opts.Host.Tools() {
		names = append(names, t.Spec.GetName())
	}
	return strings.Join(names, ", ")
}

func sourced(ext *host.Extension, bs []*exocortexv1.PromptBlock) []*exocortexv1.PromptBlock {
	for _, b := range bs {
		b.Source = ext.Name()
	}
	return bs
}

func renderBlocks(bs []*exocortexv1.PromptBlock) string {
	var b strings.Builder
	for i, blk := range bs {
		if i > 0 {
			b.WriteString("\n\n")
		}
		if blk.GetTitle() != "" {
			fmt.Fprintf(&b, "[%s]\n", blk.GetTitle())
		}
		b.WriteString(strings.TrimSpace(blk.GetContent()))
	}
	return b.String()
}

// toLLM converts a history message for the model. Tool results and the core's
// own messages go as user messages, as in Agent Zero's JSON reply format.
func toLLM(m *exocortexv1.Message) llm.Message {
	switch m.GetRole() {
	case "assistant":
		return llm.Message{Role: llm.RoleAssistant, Content: m.GetContent()}
	case "tool":
		return llm.Message{Role: llm.RoleUser, Content: fmt.Sprintf("Result of tool %s:\n%s", m.GetToolName(), m.GetContent())}
	case "system":
		return llm.Message{Role: llm.RoleSystem, Content: m.GetContent()}
	}
	return llm.Message{Role: llm.RoleUser, Content: m.GetContent()}
}

// estimateTokens is a rough count (4 bytes a token) for the context-fill figure
// before the model reports the real one.
func estimateTokens(msgs []llm.Message) int {
	n := 0
	for _, m := range msgs {
		n += len(m.Content)/4 + 4
	}
	return n
}

func blockTokens(bs []*exocortexv1.PromptBlock) int {
	n := 0
	for _, b := range bs {
		n += (len(b.GetTitle())+len(b.GetContent()))/4 + 2
	}
	return n
}
