package tui

import (
	"strings"
	"testing"
	"time"
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
