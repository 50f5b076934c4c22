package tui

import (
	"strings"
	"testing"

	"charm.land/lipgloss/v2"
)

// TestWelcomeCardHangsLongValues: a value longer than the card is wide wraps
// under the value column, inside the card, not back at its edge.
func TestWelcomeCardHangsLongValues(t *testing.T) {
	eng := NewEngine(Config{Model: "m", Address: "http://127.0.0.1:11434", Session: "wrap"})
	m, err := New(t.Context(), eng)
	if err != nil {
		t.Fatal(err)
	}
	m.boot.sessDone, m.boot.hostDone, m.boot.probeDone, m.boot.memDone = true, true, true, true
	m.boot.memory = "17 records · 12.0 KiB journal · no vectors on disk yet · embedder glove (compact, 50k words, built in) (configured)"
	for _, width := range []int{50, 64, 80} {
		card := plain(m.welcomeCardAt(width))
		lines := strings.Split(card, "\n")
		at := -1
		for i, l := range lines {
			if lipgloss.Width(l) > width {
				t.Errorf("width %d: line %d is %d wide: %q", width, i, lipgloss.Width(l), l)
			}
			if strings.Contains(l, "memory   17 records") {
				at = i
			}
		}
		if at < 0 || at+1 >= len(lines) {
			t.Fatalf("width %d: no memory line:\n%s", width, card)
		}
		next := strings.TrimPrefix(lines[at+1], "│ ")
		if !strings.HasPrefix(next, strings.Repeat(" ", labelWidth)) || strings.TrimSpace(strings.Trim(next, "│")) == "" {
			t.Errorf("width %d: the memory line goes on at the card's edge, not under its value:\n%s", width, card)
		}
		if !strings.Contains(strings.Join(strings.Fields(card), " "), "(configured)") {
			t.Errorf("width %d: the end of the memory line is lost:\n%s", width, card)
		}
	}
}
