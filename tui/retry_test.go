package tui

import (
	"strings"
	"testing"

	"github.com/exocortex/exocortex/core/llm"
	"github.com/exocortex/exocortex/core/llm/scripted"
)

// TestRetryShown: an OpenAI-compatible server answering 503 twice is
// retried, and the terminal shows each retry in the transcript and the
// latest in the status line while it waits; the answer then comes through
// and the status line no longer shows the retry.
func TestRetryShown(t *testing.T) {
	e := newEnv(t)
	eng, srv := e.engineOn(t, llm.ProviderOpenAI, "r1",
		scripted.Reply{Error: "overloaded", Status: 503},
		scripted.Reply{Error: "overloaded", Status: 503},
		answer("made it"))
	u := start(t, eng)
	u.submit("hello")
	u.waitFor("the retry in the status line", func(m *Model) bool {
		return m.turn != nil && strings.Contains(plain(m.View().Content), "↻ retrying in ≤")
	})
	u.idle()
	u.waitPrinted("↻ retrying in ≤0.5s (HTTP 503) 1/3 · "+srv.URL(), "(chat/completions)", "↻ retrying in ≤1s (HTTP 503) 2/3", "made it")
	if v := u.view(); strings.Contains(v, "retrying") {
		t.Errorf("the status line still shows the retry after the answer: %s", v)
	}
}
