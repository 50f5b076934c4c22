package tui

import (
	"fmt"
	"time"

	"github.com/exocortex/exocortex/core/loop"
)

// slowExt is an extension over its time budget (the loop's over_budget
// event), for the status line: the latest one is shown while the turn runs,
// dimmed once it ended, and forgotten when the next turn starts (budgets,
// and a stream extension's stop, are per monologue).
type slowExt struct {
	plugin, extension, hook string
	took                    time.Duration
	stopped                 bool
	// others counts the other extensions over budget in the same turn.
	others int
	// done is set when the turn it happened in ended.
	done bool
}

// overBudget records an over_budget event.
func (m *Model) overBudget(e loop.Event) {
	key := e.Plugin + "/" + e.Extension + "@" + e.Hook
	if m.slowSeen == nil {
		m.slowSeen = map[string]bool{}
	}
	m.slowSeen[key] = true
	m.slow = &slowExt{plugin: e.Plugin, extension: e.Extension, hook: e.Hook,
		took: time.Duration(e.DurationUS) * time.Microsecond, stopped: e.Skipped, others: len(m.slowSeen) - 1}
}

// clearSlow forgets the last turn's slow extensions (a new turn starts).
func (m *Model) clearSlow() { m.slow, m.slowSeen = nil, nil }

// slowStatus is the status line's part for a slow extension ("" for none):
// "⚠ slow: plugin/extension 3.1s at response_stream_chunk", or "⚠ stopped:
// …" when it was not called for the rest of the monologue.
func (m *Model) slowStatus() string {
	s := m.slow
	if s == nil {
		return ""
	}
	verb := "slow"
	if s.stopped {
		verb = "stopped"
	}
	text := fmt.Sprintf("⚠ %s: %s/%s %s at %s", verb, s.plugin, s.extension, roundTook(s.took), s.hook)
	if s.others > 0 {
		text += fmt.Sprintf(" (+%d)", s.others)
	}
	if s.done {
		return m.st.dim.Render(text)
	}
	return m.st.warn.Render(text)
}

// roundTook rounds a duration for the status line: 3.1s, 180ms.
func roundTook(d time.Duration) string {
	if d >= time.Second {
		return fmt.Sprintf("%.1fs", d.Seconds())
	}
	return d.Round(time.Millisecond).String()
}
