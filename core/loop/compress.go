package loop

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/exocortex/exocortex/core/llm"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// History compression. When the verbatim turns exceed the history budget, the
// oldest leave the prompt: each is first offered to long-term memory (the
// archive field of message_loop_prompts_before; the memory plugin writes them
// to the fragments area with their provenance), and a summary of them takes
// their place. The summary is written by the utility model when one is
// configured, within CompressTimeout; otherwise, or when that model fails or
// is late, it is extractive and deterministic: one line per message, plus
// excerpts of tool results the verbatim turns still refer to. The newest turns
// stay verbatim.
//
// The summary is append-only: each compression adds a part, a message of its
// own after the earlier parts, which stay byte for byte as they were. So the
// request that follows a compression repeats the previous one up to the end of
// the summary so far (the fixed prompt and every earlier part), and the
// server's KV cache keeps that much. A part is at most summaryPartShare of the
// summary's share (the utility model is asked for that many words; the
// extractive summary keeps the newest lines of the messages leaving, the
// others being in long-term memory), so several parts fit. Only when the parts
// together exceed the summary's share of the history budget are they merged
// into one, down to summaryMergeTo of that share by dropping the oldest points:
// a merge repeats only the fixed prompt, as every compression did before the
// summary had parts, and it is rare.

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
	KeptResults int `json:"kept_results,omitempty"`
	// Added is the part of the summary this compression wrote (about the
	// messages that left); Summary is the whole summary after it, every part,
	// of SummaryTokens in Parts messages.
	Added         string `json:"added"`
	Summary       string `json:"summary"`
	SummaryTokens int    `json:"summary_tokens"`
	Parts         int    `json:"parts"`
	// Merged says the parts exceeded the summary's share and were merged
	// into one, the oldest points dropped (the request repeats only the
	// fixed prompt of the previous one).
	Merged     bool  `json:"merged,omitempty"`
	DurationMS int64 `json:"duration_ms"`
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

// The summary's messages open with these lines: the first part, and each
// later one.
const (
	summaryHead     = "[Summary of the earlier conversation; its messages are in long-term memory, area fragments]"
	summaryHeadNext = "[Summary of the earlier conversation, continued]"
)

// summaryMessage is part i of the summary as the prompt shows it.
func summaryMessage(i int, part string) llm.Message {
	head := summaryHead
	if i > 0 {
		head = summaryHeadNext
	}
	return llm.Message{Role: llm.RoleSystem, Content: head + "\n" + part}
}

// summaryMessages are the summary's parts as the prompt shows them.
func summaryMessages(parts []string) []llm.Message {
	out := make([]llm.Message, len(parts))
	for i, p := range parts {
		out[i] = summaryMessage(i, p)
	}
	return out
}

// summaryText is the whole summary: its parts, one after the other.
func (a *Agent) summaryText() string { return strings.Join(a.summaries, "\n") }

// summaryTokens counts the summary's messages.
func (a *Agent) summaryTokens() int { return a.partsTokens(a.summaries) }

func (a *Agent) partsTokens(parts []string) int {
	if len(parts) == 0 {
		return 0
	}
	return a.tokens.messages(summaryMessages(parts))
}

// compressIfNeeded moves the verbatim window forward when the history exceeds
// budget, queues the messages that left for the archive, and appends their
// summary (merging the parts when they exceed their share).
func (a *Agent) compressIfNeeded(ctx context.Context, t *turn, budget int) error {
	used := a.historyTokens(budget) + a.summaryTokens()
	if used <= budget || len(a.visibleHistory()) < 2 {
		return nil
	}
	_, err := a.compress(ctx, t, budget, used, compressRequest{trigger: TriggerAuto})
	return err
}

// compress moves the verbatim window forward: the messages that leave are
// queued for the archive and summarised. An automatic compression keeps the
// newest messages that fit the low-water mark; the operator's (manual)
// keeps only the newest. It returns nil when nothing could leave.
func (a *Agent) compress(ctx context.Context, t *turn, budget, used int, r compressRequest) (*Compression, error) {
	visible := a.visibleHistory()
	start := time.Now()
	// Newest first, keep what fits the low-water mark (the newest message
	// always stays, clipped if needed).
	target := int(float64(budget) * verbatimLowWater)
	if r.trigger == TriggerManual {
		target = 0
	}
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
		return nil, nil // only clipping helps; the messages are clipped already
	}
	from := a.verbatimFrom
	leaving := visible[:len(visible)-keep]
	kept := visible[len(visible)-keep:]
	// history_compress_before: the extensions are told what leaves, and may
	// say what the summary must keep.
	r.leaving, r.from, r.tokens, r.budget = leaving, from, used, budget
	keepText, err := a.beforeCompress(ctx, t, r)
	if err != nil {
		return nil, err
	}
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
	added, method, fallback := a.summarize(ctx, t, leaving, refs, a.summaryCap(capTokens, summaryPartShare), keepText, r.instructions)
	parts := append(slices.Clip(a.summaries), added)
	if a.partsTokens(parts) > capTokens {
		// Merged into one, the oldest points dropped.
		parts = []string{a.capSummary(strings.Join(parts, "\n"), a.summaryCap(capTokens, summaryMergeTo))}
		c.Merged = true
	}
	a.summaries = parts
	c.Method, c.Fallback, c.Added, c.Summary = method, fallback, added, a.summaryText()
	c.SummaryTokens, c.Parts = a.summaryTokens(), len(parts)
	c.DurationMS = time.Since(start).Milliseconds()
	a.compressions++
	a.lastCompression = &c
	a.emit(Event{Type: EventCompression, Iteration: t.iteration, Compression: &c})
	a.saveContext(ctx)
	return &c, nil
}

// summaryCap is share of capTokens, the summary's share, but room for a few
// lines at least (in a small window the share is small: then a part takes
// all of it, and each compression merges).
func (a *Agent) summaryCap(capTokens int, share float64) int {
	least := a.tokens.message(summaryMessage(0, "")) + minSummaryTokens
	return max(int(float64(capTokens)*share), min(capTokens, least))
}

// minSummaryTokens is the least room a summary's part gets for its lines.
const minSummaryTokens = 64

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

// summarize writes the summary of the messages leaving the prompt (a new
// part; the parts before it stay as they are): the utility model's within the
// deadline, else the extractive one. It is at most capTokens.
func (a *Agent) summarize(ctx context.Context, t *turn, leaving []*exocortexv1.Message, refs map[string][]string, capTokens int, keep []string, instructions string) (summary, method, fallback string) {
	if a.opts.UtilityModel != "" {
		s, err := a.utilitySummary(ctx, t, leaving, capTokens, keep, instructions)
		if err == nil {
			return a.capSummary(s+excerpts(leaving, refs)+keptLines(keep), capTokens), "utility", ""
		}
		fallback = err.Error()
		a.log.Warn("history compression: the utility model's summary is not used", "model", a.opts.UtilityModel, "err", err)
	}
	lines := summaryLines(leaving)
	if len(lines) == 0 {
		lines = append(lines, fmt.Sprintf("- %d messages of the core", len(leaving)))
	}
	return a.capSummary(strings.Join(lines, "\n")+excerpts(leaving, refs)+keptLines(keep), capTokens), "extractive", fallback
}

// capSummary drops the oldest lines of a summary until its message (as the
// first part) fits capTokens, counting them in its first line.
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
	// The rendered message's size, kept as lines are dropped (linear in the
	// summary's length).
	body := len(lines) - 1
	for _, l := range lines {
		body += len(l)
	}
	size := func() int {
		n := len(summaryHead) + 1 + body
		if dropped > 0 {
			n += len(fmt.Sprintf(droppedMark, dropped)) + 1
		}
		return messageOverhead + a.tokens.ofBytes(n)
	}
	for len(lines) > 1 && size() > capTokens {
		body -= len(lines[0]) + 1
		lines = lines[1:]
		dropped++
	}
	out := render()
	if a.tokens.message(summaryMessage(0, out)) > capTokens {
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
func (a *Agent) utilitySummary(ctx context.Context, t *turn, leaving []*exocortexv1.Message, capTokens int, keep []string, instructions string) (string, error) {
	timeout := a.opts.CompressTimeout
	if timeout <= 0 {
		timeout = DefaultCompressTimeout
	}
	var b strings.Builder
	if len(a.summaries) > 0 {
		b.WriteString("Summary so far (it stays as it is; do not repeat it):\n" + a.summaryText() + "\n\nMessages to summarise:\n")
	}
	for _, m := range leaving {
		fmt.Fprintf(&b, "%s: %s\n", speaker(m), clip(m.GetContent(), 1500))
	}
	words := max(40, int(float64(capTokens)*0.6))
	system := fmt.Sprintf("Summarise the messages below in at most %d words, as short lines starting with \"- \". Keep names, numbers, paths, decisions and open questions; leave out pleasantries. When a summary so far is given, write only what the new messages add.", words)
	if instructions = strings.TrimSpace(instructions); instructions != "" {
		system += "\nThe operator's instructions for this summary: " + instructions
	}
	if len(keep) > 0 {
		system += "\nThese points are kept word for word after your summary; do not repeat them:\n" + strings.Join(keep, "\n")
	}
	response, _, err := a.utilityCall(ctx, t, "compress_history", system, b.String(), timeout, nil)
	switch {
	case errors.Is(err, errUtilityLate):
		return "", fmt.Errorf("no summary from %s within %s (the extractive summary was used)", a.opts.UtilityModel, timeout)
	case err != nil:
		return "", err
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

// summaryLines is the extractive summary of msgs, a line per step: the
// operator's words and notes with their first sentence; the agent's call of a
// tool with its headline, its arguments and the first sentence of the result
// that follows it (one line for the call and its result); the agent's answer
// with its first sentence. The core's own corrections are left out.
func summaryLines(msgs []*exocortexv1.Message) []string {
	var lines []string
	// call is the line of the agent's last tool call, waiting for its result.
	call, callTool := "", ""
	flush := func() {
		if call != "" {
			lines = append(lines, call)
			call, callTool = "", ""
		}
	}
	for _, m := range msgs {
		content := strings.TrimSpace(m.GetContent())
		switch m.GetRole() {
		case "assistant":
			flush()
			var r struct {
				Headline string          `json:"headline"`
				Tool     string          `json:"tool_name"`
				Args     json.RawMessage `json:"tool_args"`
			}
			if json.Unmarshal([]byte(content), &r) != nil || r.Tool == "" {
				lines = append(lines, "- agent: "+firstSentence(content, 160))
				continue
			}
			if r.Tool == "response" {
				var args struct {
					Text string `json:"text"`
				}
				if json.Unmarshal(r.Args, &args) == nil && args.Text != "" {
					lines = append(lines, "- agent answered: "+firstSentence(args.Text, 200))
					continue
				}
			}
			call = "- agent called " + r.Tool
			if h := strings.TrimSpace(r.Headline); h != "" && h != r.Tool {
				call += " (" + firstSentence(h, 60) + ")"
			}
			if args := compactJSON(r.Args); args != "" && args != "{}" && args != "null" {
				call += " " + firstSentence(args, 80)
			}
			callTool = r.Tool
		case "tool":
			if call != "" && callTool == m.GetToolName() {
				lines = append(lines, call+" → "+firstSentence(content, 120))
				call, callTool = "", ""
				continue
			}
			flush()
			lines = append(lines, "- "+speaker(m)+": "+firstSentence(content, 120))
		case "user":
			flush()
			if m.GetSignal() != "" {
				continue // the core's own corrections say nothing about the task
			}
			lines = append(lines, "- "+speaker(m)+": "+firstSentence(content, 200))
		default:
			flush()
			lines = append(lines, "- "+speaker(m)+": "+firstSentence(content, 200))
		}
	}
	flush()
	return lines
}

// compactJSON is raw JSON on one line without spaces between tokens ("" when
// it is not JSON).
func compactJSON(raw json.RawMessage) string {
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return ""
	}
	return b.String()
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
