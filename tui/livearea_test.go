package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/exocortex/exocortex/core/llm/scripted"
)

// TestSpinnerStaysBelowTheStreamingText: while an answer streams, the
// spinner line is under the text being written, never between the printed
// part of the answer and its open paragraph.
func TestSpinnerStaysBelowTheStreamingText(t *testing.T) {
	e := newEnv(t)
	text := "FIRSTPARA is printed once it is finished.\n\nOPENPARA is still being written " + strings.Repeat("word ", 200)
	eng, _ := e.engine(t, "spin", answerReply(text, 4, 10*time.Millisecond))
	u := start(t, eng)
	u.submit("write")
	var view string
	u.waitFor("the open paragraph in the live area", func(m *Model) bool {
		if m.turn == nil {
			return false
		}
		view = plain(m.View().Content)
		return strings.Contains(view, "OPENPARA") && strings.Contains(plain(m.Printed()), "FIRSTPARA")
	})
	spin, open := -1, -1
	for i, l := range strings.Split(view, "\n") {
		if strings.Contains(l, "esc or ctrl+c stops") {
			spin = i
		}
		if strings.Contains(l, "OPENPARA") {
			open = i
		}
	}
	if spin < 0 || spin < open {
		t.Fatalf("the spinner line (%d) is not below the streaming text (%d):\n%s", spin, open, view)
	}
	u.key(ctrlC)
	u.idle()
}

// TestCtrlCKeepsTheHeadline: an answer stopped while its first paragraph is
// still being written keeps its headline above what was written, and a
// resumed session shows both again.
func TestCtrlCKeepsTheHeadline(t *testing.T) {
	e := newEnv(t)
	long := strings.Repeat("word ", 400)
	eng, _ := e.engine(t, "head",
		scripted.Reply{Content: `{"headline":"Writing the essay","tool_name":"response","tool_args":{"text":"` + long + `"}}`, ChunkSize: 4, Delay: 20 * time.Millisecond})
	u := start(t, eng)
	u.submit("write a lot")
	u.waitFor("streaming", func(m *Model) bool { return m.turn != nil && m.turn.reply.Len() > 120 })
	u.key(ctrlC)
	u.idle()
	u.waitPrinted("stopped (ctrl+c)")
	check := func(p string) {
		t.Helper()
		h, w := strings.Index(p, "● Writing the essay"), strings.Index(p, "word word")
		if h < 0 || w < 0 || h > w {
			t.Fatalf("the headline (at %d) is not above the stopped answer (at %d):\n%s", h, w, p)
		}
	}
	check(u.printed())
	u2 := u.resumed(e, eng, "head")
	u2.waitPrinted("word word")
	check(u2.printed())
}
