package loop

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/core/llm"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// assembled is a prompt ready for the model.
type assembled struct {
	messages []llm.Message
	tokens   int
}

// preparePrompt sizes and builds the messages of one request (see budget.go):
// the system prompt (main, tool documentation, system_prompt blocks), the
// summary of compressed turns (a message per part, compress.go), the blocks from message_loop_prompts_before,
// the verbatim history with the earlier message_loop_prompts_after messages
// pinned where they were sent (pinned.go), and the extras from
// message_loop_prompts_after that changed as the last message, pinned there
// for later requests. History compression runs first, so the messages that
// leave are offered to long-term memory at message_loop_prompts_before, before
// any prompt goes without them.
func (a *Agent) preparePrompt(ctx context.Context, t *turn) (assembled, error) {
	window := a.resolveWindow(ctx)
	// host is the time spent here outside hook calls (the budget's cost).
	var hostTime time.Duration
	mark := time.Now()
	pause := func() { hostTime += time.Since(mark) }
	resume := func() { mark = time.Now() }
	reserve := reserveFor(window)
	limit := window - reserve
	system, toolsText, err := a.baseSystemPrompt()
	if err != nil {
		return assembled{}, err
	}
	sysTokens := a.tokens.message(llm.Message{Role: llm.RoleSystem, Content: system})
	if sysTokens > limit {
		return assembled{}, fmt.Errorf("the fixed prompt takes about %d tokens, more than the %d the context window of %d leaves after %d for the reply: raise num_ctx (config.yaml, --num-ctx) or load fewer tools", sysTokens, limit, window, reserve)
	}
	histBudget := int(float64(limit-sysTokens) * historyShare)
	if err := a.compressIfNeeded(ctx, t, histBudget); err != nil {
		return assembled{}, err
	}
	visible := a.visibleHistory()
	pause()

	var blocks []*promptBlock
	add := func(where int, ext *host.Extension, bs []*exocortexv1.PromptBlock) {
		for _, b := range bs {
			blocks = append(blocks, &promptBlock{PromptBlock: b, where: where, seq: len(blocks), ext: ext})
		}
	}
	err = fire(ctx, a, t, exocortexv1.Hook_HOOK_MESSAGE_LOOP_PROMPTS_BEFORE,
		func(c *exocortexv1.HookCall, f fields) *exocortexv1.MessageLoopPromptsBeforeRequest {
			return &exocortexv1.MessageLoopPromptsBeforeRequest{Call: c, Iteration: int32(t.iteration), History: ifFull(f.history, visible), Archive: ifFull(f.history, a.pending)}
		}, exocortexv1.PluginClient.MessageLoopPromptsBefore,
		func(ext *host.Extension, r *exocortexv1.MessageLoopPromptsBeforeResponse) error {
			add(1, ext, sourced(ext, r.GetPromptBlocks()))
			a.archivedBy(r.GetArchived())
			return nil
		})
	if err != nil {
		return assembled{}, err
	}
	if len(a.pending) > 0 && !a.warnedArchive {
		a.warnedArchive = true
		a.emit(Event{Type: EventNotice, Iteration: t.iteration, Text: fmt.Sprintf("%d messages left the prompt's verbatim window and no extension archived them to long-term memory (the memory-tools plugin does); the session file keeps them", len(a.pending))})
	}

	resume()
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
			add(0, ext, sourced(ext, r.GetPromptBlocks()))
			return nil
		})
	if err != nil {
		return assembled{}, err
	}

	resume()
	summaryTokens := a.summaryTokens()
	histTokens := a.historyTokens(histBudget)
	// The blocks get what the rest leaves (at least their share, since the
	// history keeps to its own), less the overhead of their two messages.
	blockBudget := limit - sysTokens - summaryTokens - histTokens - 2*messageOverhead
	// sentTokens is what the blocks so far take in the request as it will be
	// sent: a message_loop_prompts_after block already pinned in the history
	// unchanged is not sent again (unchangedBlocks), and the blocks never take
	// more than their budget (fitBlocks cuts the rest), so the prompt size an
	// extension is told (the watchdog's context fill) is the request's.
	pinned := a.pinnedSums()
	sentTokens := func() int {
		n := 0
		for _, b := range blocks {
			if b.where == 2 && pinned[blockKey(b.GetSource(), b.GetTitle())] == contentSum(b.GetContent()) {
				continue
			}
			n += a.tokens.text(b.GetTitle()) + a.tokens.text(b.GetContent()) + 2
		}
		return n
	}
	var extras []*exocortexv1.PromptBlock
	pause()
	err = fire(ctx, a, t, exocortexv1.Hook_HOOK_MESSAGE_LOOP_PROMPTS_AFTER,
		func(c *exocortexv1.HookCall, f fields) *exocortexv1.MessageLoopPromptsAfterRequest {
			sent := sentTokens()
			r := &exocortexv1.MessageLoopPromptsAfterRequest{
				Call: c, Iteration: int32(t.iteration), History: ifFull(f.history, visible), NumCtx: int32(window),
				BlockBudgetTokens: int32(max(1, blockBudget-sent)),
			}
			if f.prompt {
				r.Extras, r.PromptTokens = extras, int32(limit-blockBudget+min(sent, blockBudget))
			}
			return r
		}, exocortexv1.PluginClient.MessageLoopPromptsAfter,
		func(ext *host.Extension, r *exocortexv1.MessageLoopPromptsAfterResponse) error {
			bs := sourced(ext, r.GetPromptBlocks())
			extras = append(extras, bs...)
			add(2, ext, bs)
			return nil
		})
	if err == nil {
		// The recall extension opens the memory store at the hook above.
		err = a.fireEmbeddingChanges(ctx, t)
	}
	if err != nil {
		return assembled{}, err
	}

	resume()
	a.reportRepeatedBlocks(t, blocks)
	budget := Budget{Window: window, Reserve: reserve, Limit: limit, System: sysTokens, Tools: a.tokens.text(toolsText),
		Summary: summaryTokens, HistoryBudget: histBudget}
	budget.TokensPerByte, budget.Calibrated = a.tokens.state()
	for src := range a.blockLimit {
		delete(a.blockLimit, src)
	}
	sums := a.unchangedBlocks(blocks, t.requestID)
	budget.LeftOut = append(budget.LeftOut, a.fitBlocks(blocks, blockBudget)...)
	for _, m := range visible {
		if full, shown := toLLM(m).Content, a.promptMessage(m, histBudget).Content; full != shown {
			budget.LeftOut = append(budget.LeftOut, LeftOut{Kind: "message", Source: m.GetId(), Tokens: a.tokens.text(full) - a.tokens.text(shown),
				Kept: a.tokens.text(shown), Reason: fmt.Sprintf("clipped: a %s message larger than half the history's share of the window", m.GetRole())})
		}
	}
	if a.verbatimFrom > 0 {
		budget.LeftOut = append(budget.LeftOut, LeftOut{Kind: "messages", Tokens: 0, Kept: summaryTokens,
			Reason: fmt.Sprintf("the %d oldest messages are summarised (compressed %d times); they are in long-term memory", a.verbatimFrom, a.compressions)})
	}

	placed := func(where int) []*promptBlock {
		var out []*promptBlock
		for _, b := range blocks {
			if b.where == where && strings.TrimSpace(b.GetContent()) != "" {
				out = append(out, b)
			}
		}
		return out
	}
	render := func(where int) []*exocortexv1.PromptBlock {
		var out []*exocortexv1.PromptBlock
		for _, b := range placed(where) {
			out = append(out, b.PromptBlock)
		}
		return out
	}
	full := system
	if bs := render(0); len(bs) > 0 {
		full += "\n\n" + renderBlocks(bs)
	}
	msgs := []llm.Message{{Role: llm.RoleSystem, Content: full}}
	msgs = append(msgs, summaryMessages(a.summaries)...)
	parts := partsOf(nil, PartSystem, 1)
	parts = partsOf(parts, PartSummary, len(msgs)-1)
	if bs := render(1); len(bs) > 0 {
		msgs = append(msgs, llm.Message{Role: llm.RoleSystem, Content: renderBlocks(bs)})
		parts = append(parts, PartBlocks)
	}
	msgs = append(msgs, a.promptHistory(histBudget)...)
	parts = partsOf(parts, PartHistory, len(msgs)-len(parts))
	// The changed blocks first seen in this monologue are pinned; the others
	// (changed again within it) follow them, sent this time only.
	var toPin, once []*exocortexv1.PromptBlock
	var pinnedBlocks []*promptBlock
	for _, b := range placed(2) {
		if _, ok := sums[b]; ok {
			toPin, pinnedBlocks = append(toPin, b.PromptBlock), append(pinnedBlocks, b)
		} else {
			once = append(once, b.PromptBlock)
		}
	}
	pinText := renderBlocks(toPin)
	if len(toPin) > 0 {
		msgs = append(msgs, llm.Message{Role: llm.RoleUser, Content: pinText})
	}
	if len(once) > 0 {
		msgs = append(msgs, llm.Message{Role: llm.RoleUser, Content: renderBlocks(once)})
	}
	parts = partsOf(parts, PartBlocks, len(msgs)-len(parts))
	budget.Tokens = a.tokens.messages(msgs)
	budget.History = histTokens
	budget.Messages = len(visible)
	budget.Blocks = budget.Tokens - sysTokens - summaryTokens - histTokens
	if budget.Tokens > limit {
		// Rounding only (every part was sized above): never send it.
		return assembled{}, fmt.Errorf("the prompt came to %d tokens, more than the limit of %d (window %d): this is a bug in the prompt budget; please report it", budget.Tokens, limit, window)
	}
	if len(toPin) > 0 {
		a.pin(pinText, pinnedBlocks, sums, t.requestID)
	}
	pause()
	budget.HostUS = hostTime.Microseconds()
	a.lastBudget = &budget
	a.emit(Event{Type: EventBudget, Iteration: t.iteration, Budget: &budget, PromptTokens: budget.Tokens, ContextFill: budget.Fill()})
	a.emitRequest(t, system, append(append(placed(0), placed(1)...), placed(2)...), msgs, parts)
	return assembled{messages: msgs, tokens: budget.Tokens}, nil
}

func (a *Agent) baseSystemPrompt() (system, tools string, err error) {
	main, err := a.opts.Prompts.Render("agent.system.main", nil)
	if err != nil {
		return "", "", err
	}
	tools, err = a.opts.Prompts.Render("agent.system.tools", map[string]any{"tools": a.toolList()})
	if err != nil {
		return "", "", err
	}
	if sp := a.secretsPrompt(); sp != "" {
		main = strings.TrimSpace(main) + "\n\n" + sp
	}
	return strings.TrimSpace(main) + "\n\n" + strings.TrimSpace(tools), tools, nil
}

// toolList renders the tools for the system prompt, tiered (the seed's tiered
// tool injection): one line per tool, and the full documentation of a tool in
// its place once the tool was used or asked for, never both (Options.FullToolDocs:
// every tool in full). The tool that ends every task (finishTool) is in full
// from the start. The full documentation is the tool's prompt file when it names
// one (overridable like every prompt), else a heading, the description and the
// JSON Schema. The list keeps the hosts' order, so the text changes only where a
// tool is expanded: the request after an expansion repeats the previous one up
// to that tool's line (the server's KV cache keeps that much). The tool section
// ends the system prompt, so no placement that keeps "never both" breaks later
// (the full documentation gathered after the lines still removes the line), and
// expanding a turn's tools together at the next monologue was measured worse
// (docs/perf/context.md).
func (a *Agent) toolList() string {
	var b strings.Builder
	for _, t := range a.opts.Host.Tools() {
		name := t.Spec.GetName()
		if !a.opts.FullToolDocs && !a.expanded[name] && name != finishTool {
			b.WriteString(a.toolLines.get(t.Spec) + "\n")
			continue
		}
		b.WriteString("\n")
		if pf := t.Spec.GetPromptFile(); pf != "" {
			text, err := a.opts.Prompts.Render(pf, nil)
			if err == nil {
				b.WriteString(strings.TrimSpace(text) + "\n\n")
				continue
			}
			a.log.Warn("tool prompt file not used", "tool", name, "file", pf, "err", err)
		}
		fmt.Fprintf(&b, "### %s\n%s\n", name, strings.TrimSpace(t.Spec.GetDescription()))
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

// finishTool ends every task (the main prompt names it): every monologue
// calls it, so its full documentation would be in every request after the
// first. It is there from the first request: expanding it on its first use
// would change the system prompt in the second request and break the prefix
// the server's KV cache reuses, for no saving.
const finishTool = "response"

// toolLines keeps the tools' one-line entries by spec: toolLine parses the
// schema, which the tool section of every request did for every tool. A spec
// does not change (a reloaded plugin's tools come with new ones), so the line
// made from it is the same every time. The zero value is ready.
type toolLines struct {
	mu    sync.Mutex
	lines map[*exocortexv1.ToolSpec]string
}

func (l *toolLines) get(spec *exocortexv1.ToolSpec) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if line, ok := l.lines[spec]; ok {
		return line
	}
	if l.lines == nil {
		l.lines = map[*exocortexv1.ToolSpec]string{}
	}
	line := toolLine(spec)
	l.lines[spec] = line
	return line
}

// toolLine is a tool's one-line entry: name, arguments, first sentence.
func toolLine(spec *exocortexv1.ToolSpec) string {
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	_ = json.Unmarshal([]byte(spec.GetParametersJsonSchema()), &schema)
	var args []string
	for k := range schema.Properties {
		if !slices.Contains(schema.Required, k) {
			k += "?"
		}
		args = append(args, k)
	}
	sort.Strings(args)
	return fmt.Sprintf("- %s(%s): %s", spec.GetName(), strings.Join(args, ", "), firstSentence(spec.GetDescription(), 120))
}

// expandTool puts a tool's full documentation in the system prompt from the
// next request on.
func (a *Agent) expandTool(name string) {
	if _, ok := a.opts.Host.Tool(name); ok {
		a.expanded[name] = true
	}
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
