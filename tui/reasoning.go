package tui

import (
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/exocortex/exocortex/core/loop"
)

// A thinking model's reasoning is shown folded: while it streams, the
// spinner line says how much there is; when the reply starts (or the call
// ends) one line stays in the scrollback, "✻ Thought for 2.1s · 1,234
// chars", and ctrl+o or /expand N opens it, as for a tool call. The
// reasoning is never part of the answer or of the session's history.

// foldThinking prints the reasoning gathered so far in the running turn as
// one folded line and keeps it for /expand; nothing when there is none.
func (m *Model) foldThinking() {
	t := m.turn
	if t == nil || t.think.Len() == 0 {
		return
	}
	text, took := t.think.String(), m.now().Sub(t.thinkStart)
	t.think.Reset()
	if strings.TrimSpace(text) == "" {
		return
	}
	n := len(m.tools) + 1
	m.tools = append(m.tools, toolRecord{n: n, thought: strings.TrimSpace(text), took: took, done: true})
	m.print("  " + m.st.dim.Render(thoughtSummary(text, took)+fmt.Sprintf(" (ctrl+o or /expand %d)", n)))
}

// thoughtSummary is the folded line's text: "✻ Thought for 2.1s · 1,234 chars".
func thoughtSummary(text string, took time.Duration) string {
	n := utf8.RuneCountInString(strings.TrimSpace(text))
	unit := " chars"
	if n == 1 {
		unit = " char"
	}
	return "✻ Thought for " + tenths(took) + " · " + thousands(n) + unit
}

// tenths writes d in seconds to a tenth ("2.1s", "<0.1s", "2m5s").
func tenths(d time.Duration) string {
	switch {
	case d < 100*time.Millisecond:
		return "<0.1s"
	case d >= time.Minute:
		return d.Round(time.Second).String()
	}
	return fmt.Sprintf("%.1fs", d.Seconds())
}

// thousands writes n with thousands separators.
func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// ReasoningFold folds reasoning events for a line-oriented output (--plain,
// run -p): Observe returns one line when a stretch of reasoning ends, and
// nothing for the reasoning itself. It is safe for concurrent use
// (subordinate agents reason too).
type ReasoningFold struct {
	now  func() time.Time
	mu   sync.Mutex
	open map[string]*openThought // by agent
}

type openThought struct {
	start time.Time
	text  strings.Builder
}

// NewReasoningFold returns a fold reading the time from now (time.Now when nil).
func NewReasoningFold(now func() time.Time) *ReasoningFold {
	if now == nil {
		now = time.Now
	}
	return &ReasoningFold{now: now, open: map[string]*openThought{}}
}

// Observe takes every event of a monologue and returns the folded line, with
// ok, when e ends a stretch of reasoning (the reply text starts, the reply
// or a tool call arrives, the monologue ends).
func (f *ReasoningFold) Observe(e loop.Event) (line string, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	o := f.open[e.Agent]
	switch e.Type {
	case loop.EventReasoning:
		if o == nil {
			o = &openThought{start: f.now()}
			f.open[e.Agent] = o
		}
		o.text.WriteString(e.Text)
		return "", false
	case loop.EventLLMChunk, loop.EventLLMReply, loop.EventToolCall, loop.EventResponse, loop.EventMonologueEnd:
		if o == nil {
			return "", false
		}
		delete(f.open, e.Agent)
		if strings.TrimSpace(o.text.String()) == "" {
			return "", false
		}
		return thoughtSummary(o.text.String(), f.now().Sub(o.start)), true
	}
	return "", false
}
