package loop

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/core/llm"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// History compression. When the verbatim turns exceed the history budget, the
// oldest leave the prompt: each is first offered to long-term memory (the
// archive field of message_loop_prompts_before; the memory plugin writes them
// to the fragments area with their provenance), and the summary of the earlier
// conversation takes their place. The summary is written by the utility model
// when one is configured, within CompressTimeout; otherwise, or when that
// model fails or is late, it is extractive and deterministic: one line per
// message, plus excerpts of tool results the verbatim turns still refer to.
// The newest turns stay verbatim.

// DefaultCompressTimeout bounds a utility model's summary.
const DefaultCompressTimeout = 20 * time.Second

// Compression is the payload of the compression event.
type Compression struct {
	// Messages left the verbatim window: positions From to To−1 of the history.
	Messages int `json:"messages"`
	From     int `json:"from"`
	To       int `json:"to"`
	// Method is "utility" or "extractive"; Fallback says why the utility
	// model's summary was not used.
	Method   string `json:"method"`
	Fallback string `json:"fallback,omitempty"`
	// KeptResults are the tool results kept as excerpts because later turns
	// refer to them.
	KeptResults   int    `json:"kept_results,omitempty"`
	SummaryTokens int    `json:"summary_tokens"`
	DurationMS    int64  `json:"duration_ms"`
	Summary       string `json:"summary"`
}

// visibleHistory is what of the history the prompt shows verbatim.
func (a *Agent) visibleHistory() []*exocortexv1.Message {
	return a.history[min(a.verbatimFrom, len(a.history)):]
}

// historyTokens counts the verbatim turns as the prompt shows them, with the
// pinned messages among them.
func (a *Agent) historyTokens(budget int) int {
	return a.tokens.messages(a.promptHistory(budget))
}

// promptMessage is a history message as the prompt shows it: clipped to half
// the history budget when larger.
func (a *Agent) promptMessage(m *exocortexv1.Message, budget int) llm.Message {
	lm := toLLM(m)
	limit := budget / 2
	if limit > 0 && a.tokens.message(lm) > limit {
		lm.Content = clip(lm.Content, int(float64(limit-messageOverhead)/a.perByte()))
	}
	return lm
}

// summaryMessage is the summary as the prompt shows it.
func summaryMessage(summary string) llm.Message {
	return llm.Message{Role: llm.RoleSystem, Content: "[Summary of the earlier conversation; its messages are in long-term memory, area fragments]\n" + summary}
}

// compressIfNeeded moves the verbatim window forward when the history exceeds
// budget, queues the messages that left for the archive, and rewrites the
// summary.
func (a *Agent) compressIfNeeded(ctx context.Context, t *turn, budget int) {
	visible := a.visibleHistory()
	used := a.historyTokens(budget)
	if a.summary != "" {
		used += a.tokens.message(summaryMessage(a.summary))
	}
	if used <= budget || len(visible) < 2 {
		return
	}
	start := time.Now()
	// Newest first, keep what fits the low-water mark (the newest message
	// always stays, clipped if needed).
	target := int(float64(budget) * verbatimLowWater)
	acc, keep := 0, 0
	for i := len(visible) - 1; i >= 0; i-- {
		n := a.tokens.message(a.promptMessage(visible[i], budget)) + a.insertTokensAfter(a.verbatimFrom+i)
		if keep > 0 && acc+n > target {
			break
		}
		acc += n
		keep++
	}
	if keep == len(visible) {
		return // only clipping helps; the messages are clipped already
	}
	from := a.verbatimFrom
	leaving := visible[:len(visible)-keep]
	kept := visible[len(visible)-keep:]
	a.verbatimFrom += len(leaving)
	a.dropCompressedInserts()
	for i, m := range leaving {
		a.queueArchive(m, from+i)
	}
	// A clipped message of the verbatim window is not whole in the prompt:
	// it is archived too.
	for i, m := range kept {
		if toLLM(m).Content != a.promptMessage(m, budget).Content {
			a.queueArchive(m, a.verbatimFrom+i)
		}
	}

	c := Compression{Messages: len(leaving), From: from, To: a.verbatimFrom}
	capTokens := int(float64(budget) * summaryShare)
	refs := referredResults(leaving, kept)
	c.KeptResults = len(refs)
	summary, method, fallback := a.summarize(ctx, t, leaving, refs, capTokens)
	a.summary = summary
	c.Method, c.Fallback, c.Summary = method, fallback, summary
	c.SummaryTokens = a.tokens.message(summaryMessage(summary))
	c.DurationMS = time.Since(start).Milliseconds()
	a.compressions++
	a.lastCompression = &c
	a.emit(Event{Type: EventCompression, Iteration: t.iteration, Compression: &c})
	a.saveContext(ctx)
}

// queueArchive offers m to long-term memory at the next
// message_loop_prompts_before (unless it was archived already).
func (a *Agent) queueArchive(m *exocortexv1.Message, position int) {
	if a.archived[m.GetId()] {
		return
	}
	for _, p := range a.pending {
		if p.GetId() == m.GetId() {
			return
		}
	}
	c := &exocortexv1.Message{
		Id: m.GetId(), Role: m.GetRole(), SenderId: m.GetSenderId(), Content: m.GetContent(), Signal: m.GetSignal(),
		ToolName: m.GetToolName(), TimestampUtc: m.GetTimestampUtc(), Metadata: map[string]string{},
	}
	for k, v := range m.GetMetadata() {
		c.Metadata[k] = v
	}
	c.Metadata["session"] = a.sessionID
	c.Metadata["position"] = strconv.Itoa(position)
	a.pending = append(a.pending, c)
}

// archivedBy takes an extension's list of archived ids.
func (a *Agent) archivedBy(ids []string) {
	done := map[string]bool{}
	for _, id := range ids {
		done[id] = true
		a.archived[id] = true
	}
	kept := a.pending[:0]
	for _, p := range a.pending {
		if !done[p.GetId()] {
			kept = append(kept, p)
		}
	}
	a.pending = kept
}

// summarize writes the new summary: the utility model's within the deadline,
// else the extractive one.
func (a *Agent) summarize(ctx context.Context, t *turn, leaving []*exocortexv1.Message, refs map[string][]string, capTokens int) (summary, method, fallback string) {
	if a.opts.UtilityModel != "" {
		s, err := a.utilitySummary(ctx, t, leaving, capTokens)
		if err == nil {
			return a.capSummary(s+excerpts(leaving, refs), capTokens), "utility", ""
		}
		fallback = err.Error()
		a.log.Warn("history compression: the utility model's summary is not used", "model", a.opts.UtilityModel, "err", err)
	}
	var lines []string
	if a.summary != "" {
		lines = strings.Split(a.summary, "\n")
	}
	for _, m := range leaving {
		if l := summaryLine(m); l != "" {
			lines = append(lines, l)
		}
	}
	return a.capSummary(strings.Join(lines, "\n")+excerpts(leaving, refs), capTokens), "extractive", fallback
}

// capSummary drops the oldest lines of a summary until it fits capTokens,
// counting them in its first line.
func (a *Agent) capSummary(s string, capTokens int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	dropped := 0
	if n, err := fmt.Sscanf(lines[0], droppedMark, &dropped); n == 1 && err == nil {
		lines = lines[1:]
	}
	render := func() string {
		body := strings.Join(lines, "\n")
		if dropped > 0 {
			return fmt.Sprintf(droppedMark, dropped) + "\n" + body
		}
		return body
	}
	for len(lines) > 1 && a.tokens.message(summaryMessage(render())) > capTokens {
		lines = lines[1:]
		dropped++
	}
	out := render()
	if a.tokens.message(summaryMessage(out)) > capTokens {
		out = shorten(out, int(float64(capTokens-messageOverhead-30)/a.perByte()))
	}
	return out
}

// droppedMark opens a summary whose oldest points were dropped.
const droppedMark = "(%d earlier points are only in long-term memory)"

// utilitySummary asks the utility model, within CompressTimeout, firing
// util_model_call_before and util_model_call_after around the call (purpose
// "compress_history"); a failure of either (a required extension) fails the
// summary, and the extractive one is used.
func (a *Agent) utilitySummary(ctx context.Context, t *turn, leaving []*exocortexv1.Message, capTokens int) (string, error) {
	timeout := a.opts.CompressTimeout
	if timeout <= 0 {
		timeout = DefaultCompressTimeout
	}
	var b strings.Builder
	if a.summary != "" {
		b.WriteString("Summary so far:\n" + a.summary + "\n\nMessages to add to it:\n")
	}
	for _, m := range leaving {
		fmt.Fprintf(&b, "%s: %s\n", speaker(m), clip(m.GetContent(), 1500))
	}
	words := max(40, int(float64(capTokens)*0.6))
	client := a.opts.UtilityLLM
	if client == nil {
		client = a.opts.LLM
	}
	const purpose = "compress_history"
	system := fmt.Sprintf("Summarise the conversation below in at most %d words, as short lines starting with \"- \". Keep names, numbers, paths, decisions and open questions; leave out pleasantries.", words)
	message := b.String()
	if err := fire(ctx, a, t, exocortexv1.Hook_HOOK_UTIL_MODEL_CALL_BEFORE,
		func(c *exocortexv1.HookCall, _ fields) *exocortexv1.UtilModelCallBeforeRequest {
			return &exocortexv1.UtilModelCallBeforeRequest{Call: c, Iteration: int32(t.iteration), Purpose: purpose, Model: a.opts.UtilityModel, System: system, Message: message}
		}, exocortexv1.PluginClient.UtilModelCallBefore,
		func(_ *host.Extension, r *exocortexv1.UtilModelCallBeforeResponse) error {
			if r.System != nil {
				system = r.GetSystem()
			}
			if r.Message != nil {
				message = r.GetMessage()
			}
			return nil
		}); err != nil {
		return "", fmt.Errorf("util_model_call_before: %w", err)
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	r, err := client.Chat(cctx, llm.ChatRequest{
		Model: a.opts.UtilityModel, NumCtx: min(a.NumCtx(), 8192),
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: system},
			{Role: llm.RoleUser, Content: message},
		},
	}, nil)
	switch {
	case cctx.Err() != nil:
		return "", fmt.Errorf("no summary from %s within %s (the extractive summary was used)", a.opts.UtilityModel, timeout)
	case err != nil:
		return "", fmt.Errorf("summary from %s: %w", a.opts.UtilityModel, err)
	}
	response := r.Content
	if err := fire(ctx, a, t, exocortexv1.Hook_HOOK_UTIL_MODEL_CALL_AFTER,
		func(c *exocortexv1.HookCall, _ fields) *exocortexv1.UtilModelCallAfterRequest {
			return &exocortexv1.UtilModelCallAfterRequest{Call: c, Iteration: int32(t.iteration), Purpose: purpose, Model: a.opts.UtilityModel,
				System: system, Message: message, Response: response}
		}, exocortexv1.PluginClient.UtilModelCallAfter,
		func(_ *host.Extension, r *exocortexv1.UtilModelCallAfterResponse) error {
			if r.Response != nil {
				response = r.GetResponse()
			}
			return nil
		}); err != nil {
		return "", fmt.Errorf("util_model_call_after: %w", err)
	}
	if strings.TrimSpace(response) == "" {
		return "", errors.New("the utility model's summary was empty")
	}
	return strings.TrimSpace(response), nil
}

func speaker(m *exocortexv1.Message) string {
	switch m.GetRole() {
	case "user":
		if m.GetSenderId() == "operator" {
			return "operator"
		}
		return "note"
	case "assistant":
		return "agent"
	case "tool":
		return "tool " + m.GetToolName()
	}
	return m.GetRole()
}

// summaryLine is the extractive summary of one message: the operator's words
// and tool results start a line with their first sentence; the agent's step is
// its headline and tool.
func summaryLine(m *exocortexv1.Message) string {
	content := strings.TrimSpace(m.GetContent())
	switch m.GetRole() {
	case "assistant":
		var r struct {
			Headline string          `json:"headline"`
			Tool     string          `json:"tool_name"`
			Args     json.RawMessage `json:"tool_args"`
		}
		if json.Unmarshal([]byte(content), &r) == nil && r.Tool != "" {
			line := "- agent called " + r.Tool
			if r.Headline != "" {
				line += ": " + r.Headline
			}
			if r.Tool == "response" {
				var args struct {
					Text string `json:"text"`
				}
				if json.Unmarshal(r.Args, &args) == nil && args.Text != "" {
					line = "- agent answered: " + firstSentence(args.Text, 200)
				}
			}
			return line
		}
		return "- agent: " + firstSentence(content, 160)
	case "user":
		if m.GetSignal() != "" {
			return "" // the core's own corrections say nothing about the task
		}
	}
	return "- " + speaker(m) + ": " + firstSentence(content, 200)
}

// firstSentence is the first sentence of s (or its first n bytes), on one line.
func firstSentence(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if i := strings.IndexAny(s, ".!?"); i > 0 && i < n {
		return s[:i+1]
	}
	if len(s) > n {
		return strings.ToValidUTF8(s[:n], "") + "…"
	}
	return s
}

// referredResults finds the tool results among leaving that the kept turns
// refer to: a distinctive word of the result (a name, a number, a path; six
// characters or more, or with a digit) occurs in a later message. It returns
// the referring words per result id.
func referredResults(leaving, kept []*exocortexv1.Message) map[string][]string {
	later := map[string]bool{}
	for _, m := range kept {
		if m.GetRole() == "tool" {
			continue
		}
		for _, w := range distinctive(m.GetContent()) {
			later[w] = true
		}
	}
	// Words common to many results (the tools' own boilerplate) refer to none.
	seen := map[string]int{}
	for _, m := range leaving {
		if m.GetRole() == "tool" {
			for _, w := range uniq(distinctive(m.GetContent())) {
				seen[w]++
			}
		}
	}
	out := map[string][]string{}
	for _, m := range leaving {
		if m.GetRole() != "tool" {
			continue
		}
		var words []string
		for _, w := range uniq(distinctive(m.GetContent())) {
			if later[w] && seen[w] == 1 {
				words = append(words, w)
			}
		}
		if len(words) > 0 {
			out[m.GetId()] = words
		}
	}
	return out
}

func distinctive(s string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(s, func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '/' || r == '.' || r == '-')
	}) {
		w = strings.ToLower(strings.Trim(w, ".-/"))
		if len(w) >= 6 || (len(w) >= 3 && strings.ContainsAny(w, "0123456789")) {
			out = append(out, w)
		}
	}
	return out
}

func uniq(ws []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, w := range ws {
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}

// excerpts renders the lines of referred tool results that hold the referring
// words, at most three lines of 200 bytes each per result.
func excerpts(leaving []*exocortexv1.Message, refs map[string][]string) string {
	var b strings.Builder
	for _, m := range leaving {
		words := refs[m.GetId()]
		if len(words) == 0 {
			continue
		}
		var lines []string
		for _, line := range strings.Split(m.GetContent(), "\n") {
			low := strings.ToLower(line)
			for _, w := range words {
				if strings.Contains(low, w) {
					lines = append(lines, firstSentence(line, 200))
					break
				}
			}
			if len(lines) == 3 {
				break
			}
		}
		fmt.Fprintf(&b, "\n- kept from the result of %s (referred to later): %s", m.GetToolName(), strings.Join(lines, " | "))
	}
	return b.String()
}
