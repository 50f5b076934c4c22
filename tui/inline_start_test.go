package tui

import (
	"testing"

	tea "charm.land/bubbletea/v2"
)

// TestNothingIsPrintedBeforeTheFirstFrame: inline, a print waits until the
// renderer has drawn a frame at the terminal's size. Printed earlier, the
// renderer would insert it as if the live area filled the screen, over the
// lines the shell left there (the tmux test TestInlineStartKeepsTheScreen
// shows them kept).
func TestNothingIsPrintedBeforeTheFirstFrame(t *testing.T) {
	eng := NewEngine(Config{})
	m, err := New(t.Context(), eng)
	if err != nil {
		t.Fatal(err)
	}
	m.print("before the first frame")
	if cmd := m.flush(); cmd != nil {
		t.Fatal("a print went out before the size was known")
	}
	if cmd := m.update(tea.WindowSizeMsg{Width: 80, Height: 24}); cmd == nil {
		t.Fatal("no wait for the first frame after the size")
	}
	if cmd := m.flush(); cmd != nil {
		t.Fatal("a print went out before the first frame was drawn")
	}
	m.update(firstFrameMsg{})
	if cmd := m.flush(); cmd == nil {
		t.Fatal("the queued print did not go out after the first frame")
	}
	if m.update(tea.WindowSizeMsg{Width: 100, Height: 24}) != nil {
		t.Error("a later resize waited for a first frame again")
	}
}
