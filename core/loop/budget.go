package loop

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/core/llm"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// The prompt budget. Ollama cuts the front of a prompt longer than num_ctx
// without a word, so every request is sized before it is sent, by the
// calibrated count of tokens.go:
//
//	window   num_ctx from config or flag, else the model's context length
//	         (/api/show), capped by MaxNumCtx
//	reserve  kept free for the reply (an eighth of the window, at least 256)
//	limit    window − reserve: no request is larger
//	system   the fixed prompt: main prompt and tool documentation (tiered)
//	history  historyShare of what the system prompt leaves: the summary of
//	         compressed turns (append-only parts, at most summaryShare of
//	         it) and the newest turns verbatim, with the
//	         message_loop_prompts_after messages pinned among them (a message
//	         larger than half of it is clipped in the prompt, head and tail
//	         kept)
//	blocks   the rest: the extensions' new prompt blocks, the lowest priority
//	         shortened first, then dropped
//
// Everything left out is listed in the budget event of the request, and an
// extension whose block was cut finds the characters that fitted in its next
// prompt-assembly call (ResponseConstraints.max_length).
const (
	// historyShare is large because the message_loop_prompts_after blocks,
	// once sent, are part of the history (pinned.go).
	historyShare = 0.8
	// verbatimLowWater is the share of the history budget the verbatim turns
	// keep after a compression (hysteresis: the history is compressed when it
	// exceeds its budget, down to the summary and this much), so the next
	// compression is many turns away and the prompt's prefix stays
	// byte-stable in between.
	verbatimLowWater = 0.10
	// summaryShare bounds the summary (every part), as a share of the
	// history budget. Each compression appends a part of at most
	// summaryPartShare of it, so several parts fit before they are merged,
	// down to summaryMergeTo of it (compress.go).
	summaryShare     = 0.25
	summaryPartShare = 0.25
	summaryMergeTo   = 0.5
	minReserve       = 256
)

// Window is what the loop asks a model client about a model's context; a
// provider that cannot tell returns 0.
type Window interface {
	ContextLength(ctx context.Context, model string) (int, error)
}

// Budget is how one request was sized, in tokens (the loop's calibrated
// count). It is the payload of the budget event.
type Budget struct {
	Window  int `json:"window"`
	Reserve int `json:"reserve"`
	// Limit is Window − Reserve: the request is never larger.
	Limit int `json:"limit"`
	// Tokens is the request's size.
	Tokens int `json:"tokens"`
	// System is the fixed prompt, Tools the tool documentation inside it.
	System int `json:"system"`
	Tools  int `json:"tools"`
	Blocks int `json:"blocks"`
	// Summary is the summary of the compressed turns, History the verbatim
	// turns (Messages of them).
	Summary  int `json:"summary"`
	History  int `json:"history"`
	Messages int `json:"messages"`
	// HistoryBudget is the history's share.
	HistoryBudget int `json:"history_budget"`
	// Calibrated says the count was calibrated from the model's own counts;
	// TokensPerByte is the factor in use.
	Calibrated    bool    `json:"calibrated"`
	TokensPerByte float64 `json:"tokens_per_byte"`
	// LeftOut lists what did not fit, and why.
	LeftOut []LeftOut `json:"left_out,omitempty"`
	// HostUS is the host's own time for sizing this request (counting,
	// compression, fitting; hook calls not included), in microseconds.
	HostUS int64 `json:"host_us"`
}

// Fill is the request's share of the window.
func (b Budget) Fill() float64 {
	if b.Window == 0 {
		return 0
	}
	return float64(b.Tokens) / float64(b.Window)
}

// LeftOut is something shortened or dropped to fit the window.
type LeftOut struct {
	// Kind is "block", "message" (clipped in the prompt; the whole message is
	// in long-term memory) or "messages" (compressed into the summary).
	Kind string `json:"kind"`
	// Source is the extension of a block, or the message's id.
	Source   string `json:"source,omitempty"`
	Title    string `json:"title,omitempty"`
	Priority int32  `json:"priority,omitempty"`
	// Tokens were left out; Kept are what remained (0: dropped).
	Tokens int    `json:"tokens"`
	Kept   int    `json:"kept"`
	Reason string `json:"reason"`
}

// window resolves the context window once per agent.
func (a *Agent) resolveWindow(ctx context.Context) int {
	if a.window > 0 {
		return a.window
	}
	maxCtx := a.opts.MaxNumCtx
	if maxCtx <= 0 {
		maxCtx = llm.DefaultNumCtx
	}
	switch {
	case a.opts.NumCtx > 0:
		a.window = a.opts.NumCtx
	default:
		a.window = min(llm.DefaultNumCtx, maxCtx)
		if w, ok := any(a.opts.LLM).(Window); ok {
			n, err := w.ContextLength(ctx, a.opts.Model)
			if err != nil {
				a.log.Warn("the model's context length is unknown; using the default window", "model", a.opts.Model, "err", err)
			} else if n > 0 {
				a.window = min(n, maxCtx)
			}
		}
	}
	return a.window
}

// NumCtx is the context window the agent's requests use (resolved on the
// first request; until then the configured one, or 0).
func (a *Agent) NumCtx() int {
	if a.window > 0 {
		return a.window
	}
	return a.opts.NumCtx
}

func reserveFor(window int) int { return max(minReserve, window/8) }

// promptBlock is an extension block waiting for its place in the prompt.
type promptBlock struct {
	*exocortexv1.PromptBlock
	where int // 0 system prompt, 1 before the history, 2 after it
	seq   int
	// ext is the extension that returned it (nil in tests that build blocks).
	ext *host.Extension
}

// fitBlocks shortens and drops blocks, lowest priority first (later ones first
// among equals), until they take at most budget tokens. It returns what it cut.
func (a *Agent) fitBlocks(blocks []*promptBlock, budget int) []LeftOut {
	size := func(b *promptBlock) int { return a.tokens.text(b.GetTitle()) + a.tokens.text(b.GetContent()) + 2 }
	total := 0
	for _, b := range blocks {
		total += size(b)
	}
	if total <= budget {
		return nil
	}
	order := append([]*promptBlock(nil), blocks...)
	sort.SliceStable(order, func(i, j int) bool {
		if order[i].GetPriority() != order[j].GetPriority() {
			return order[i].GetPriority() < order[j].GetPriority()
		}
		return order[i].seq > order[j].seq
	})
	var cuts []LeftOut
	for _, b := range order {
		over := total - budget
		if over <= 0 {
			break
		}
		n := size(b)
		cut := LeftOut{Kind: "block", Source: b.GetSource(), Title: b.GetTitle(), Priority: b.GetPriority()}
		keepTokens := n - over
		if keepTokens < 64 || keepTokens < n/4 {
			cut.Tokens, cut.Reason = n, fmt.Sprintf("dropped: the extension blocks exceeded their share of the window by %d tokens", over)
			b.Content = ""
			total -= n
		} else {
			chars := int(float64(keepTokens-2-a.tokens.text(b.GetTitle())) / a.perByte())
			b.Content = shorten(b.GetContent(), chars)
			kept := size(b)
			cut.Tokens, cut.Kept = n-kept, kept
			cut.Reason = fmt.Sprintf("shortened: the extension blocks exceeded their share of the window by %d tokens", over)
			total -= n - kept
		}
		cuts = append(cuts, cut)
		a.blockLimit[b.GetSource()] = len(b.GetContent())
	}
	return cuts
}

func (a *Agent) perByte() float64 {
	f, _ := a.tokens.state()
	return f
}

// shorten cuts s to at most n bytes at a line or word boundary, saying so.
func shorten(s string, n int) string {
	const mark = "\n[… shortened to fit the context window]"
	if len(s) <= n {
		return s
	}
	n -= len(mark)
	if n <= 0 {
		return ""
	}
	cut := s[:n]
	if i := strings.LastIndexAny(cut, "\n "); i > n/2 {
		cut = cut[:i]
	}
	return strings.ToValidUTF8(cut, "") + mark
}

// clip keeps the head and the tail of a message too large for its place in
// the prompt (the whole message is in long-term memory).
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	mark := fmt.Sprintf("\n[… %d characters left out here to fit the context window; the whole message is in long-term memory (area fragments) …]\n", len(s))
	keep := n - len(mark)
	if keep < 64 {
		return strings.ToValidUTF8(s[:max(0, min(len(s), n))], "")
	}
	head := keep * 2 / 3
	tail := keep - head
	return strings.ToValidUTF8(s[:head], "") + mark + strings.ToValidUTF8(s[len(s)-tail:], "")
}

// ContextReport is the state of the agent's context window, for /context and
// `run --json`.
type ContextReport struct {
	Window int `json:"window"`
	// Last is the budget of the last request (nil before the first).
	Last *Budget `json:"last,omitempty"`
	// Summary is the current summary of the compressed turns (every part),
	// in SummaryParts messages of the prompt.
	Summary      string `json:"summary,omitempty"`
	SummaryParts int    `json:"summary_parts,omitempty"`
	Compressions int    `json:"compressions"`
	// LastCompression is the latest compression (nil before the first).
	LastCompression *Compression `json:"last_compression,omitempty"`
	// Verbatim is the number of history messages the prompt shows whole;
	// Compressed the number summarised.
	Verbatim   int `json:"verbatim"`
	Compressed int `json:"compressed"`
	// PendingArchive are messages not yet written to long-term memory.
	PendingArchive int `json:"pending_archive"`
	// ExpandedTools are the tools whose full documentation is in the prompt.
	ExpandedTools []string `json:"expanded_tools,omitempty"`
}

// Context reports the state of the context window. Like the agent's other
// methods, it must not be called while a monologue runs.
func (a *Agent) Context() ContextReport {
	r := ContextReport{Window: a.NumCtx(), Last: a.lastBudget, Summary: a.summaryText(), SummaryParts: len(a.summaries), Compressions: a.compressions,
		LastCompression: a.lastCompression, Verbatim: len(a.visibleHistory()), Compressed: min(a.verbatimFrom, len(a.history)),
		PendingArchive: len(a.pending)}
	for name := range a.expanded {
		r.ExpandedTools = append(r.ExpandedTools, name)
	}
	sort.Strings(r.ExpandedTools)
	return r
}

// String renders the report for the operator.
func (r ContextReport) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "window       %d tokens\n", r.Window)
	if l := r.Last; l != nil {
		fmt.Fprintf(&b, "last request %d tokens (%.0f%% of the window; limit %d, %d kept for the reply)\n", l.Tokens, 100*l.Fill(), l.Limit, l.Reserve)
		fmt.Fprintf(&b, "  system     %d (tool documentation %d)\n  blocks     %d\n  summary    %d\n  history    %d in %d messages (share %d)\n",
			l.System, l.Tools, l.Blocks, l.Summary, l.History, l.Messages, l.HistoryBudget)
		cal := "estimated (no reply yet)"
		if l.Calibrated {
			cal = "calibrated from the model's counts"
		}
		fmt.Fprintf(&b, "  counting   %.3f tokens a byte, %s\n", l.TokensPerByte, cal)
		for _, c := range l.LeftOut {
			what := c.Kind
			if c.Title != "" {
				what += " " + c.Title
			}
			if c.Source != "" {
				what += " (" + c.Source + ")"
			}
			fmt.Fprintf(&b, "  left out   %s: %s\n", what, c.Reason)
		}
	}
	fmt.Fprintf(&b, "history      %d messages verbatim, %d summarised in %d compressions; %d waiting for long-term memory\n",
		r.Verbatim, r.Compressed, r.Compressions, r.PendingArchive)
	if len(r.ExpandedTools) > 0 {
		fmt.Fprintf(&b, "tools        full documentation: %s\n", strings.Join(r.ExpandedTools, ", "))
	}
	if r.Summary != "" {
		fmt.Fprintf(&b, "summary      %d parts\n%s\n", r.SummaryParts, r.Summary)
	}
	return b.String()
}

// WindowFit says whether the fixed prompt fits the window.
type WindowFit struct {
	Window int `json:"window"`
	// Limit is what a request may take (the window less the reply's reserve).
	Limit int `json:"limit"`
	// Fixed is the fixed prompt (main prompt and tool documentation), by the
	// count in use (conservative before the model has answered).
	Fixed int `json:"fixed"`
}

// Fits reports whether the fixed prompt leaves room for anything else.
func (f WindowFit) Fits() bool { return f.Fixed < f.Limit }

// Warning is the operator's warning when the fixed prompt does not fit, "".
func (f WindowFit) Warning() string {
	if f.Fits() {
		return ""
	}
	return fmt.Sprintf("the model's window (%d tokens, %d for the prompt) is smaller than the fixed prompt needs (about %d): raise num_ctx or load fewer tools", f.Window, f.Limit, f.Fixed)
}

// FitWindow resolves the window (asking the model when none is configured)
// and measures the fixed prompt against it, before any request (the welcome
// card's check). Not while a monologue runs.
func (a *Agent) FitWindow(ctx context.Context) (WindowFit, error) {
	w := a.resolveWindow(ctx)
	system, _, err := a.baseSystemPrompt()
	if err != nil {
		return WindowFit{}, err
	}
	return WindowFit{Window: w, Limit: w - reserveFor(w), Fixed: a.tokens.message(llm.Message{Role: llm.RoleSystem, Content: system})}, nil
}
