package tui

import (
	"time"

	"github.com/exocortex/exocortex/core/llm"
)

// A model request answered 429 or 5xx (or not answered) is retried by the
// provider after a short wait. The operator sees each retry as it happens: a
// line in the transcript, and the status line says "↻ retrying in ≤2s
// (HTTP 503) 1/3" until the model answers or the turn ends.

// retryMsg carries a retry from the provider's goroutine through the inbox.
type retryMsg struct{ r llm.Retry }

// retryShown is how long a retry stays in the status line when no turn is
// running (an embedding request's retry, say).
const retryShown = 10 * time.Second

// retried shows retry r.
func (m *Model) retried(r llm.Retry) {
	m.retry, m.retryAt = &r, m.now()
	m.note(m.st.warn, "↻", r.Short()+" · "+r.Address+" ("+r.Path+")")
}

// retryStatus is the status line's part for the latest retry, "" when there
// is none to show.
func (m *Model) retryStatus() string {
	if m.retry == nil || (m.turn == nil && m.now().Sub(m.retryAt) >= retryShown) {
		return ""
	}
	return m.st.warn.Render("↻ " + m.retry.Short())
}
