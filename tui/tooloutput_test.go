package tui

import (
	"context"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/core/loop"
)

// TestLiveAreaShowsToolOutput: while a tool runs, the live area shows the last
// lines of what the operator is shown of its output (the loop's tool_output
// events, after tool_output_update); the result ends it, and a subordinate's
// output does not take the operator's live area.
func TestLiveAreaShowsToolOutput(t *testing.T) {
	tests := []struct {
		name          string
		events        []loop.Event
		want, notWant []string
	}{
		{"running", []loop.Event{
			{Type: loop.EventToolCall, Tool: "code_execution", Args: []byte(`{"code":"make"}`)},
			{Type: loop.EventToolOutput, Tool: "code_execution", Text: "step 1\n"},
			{Type: loop.EventToolOutput, Tool: "code_execution", Text: "step 1\nstep 2\n"},
		}, []string{"Running code_execution", "│ step 1", "│ step 2"}, nil},
		{"last lines only", []loop.Event{
			{Type: loop.EventToolCall, Tool: "code_execution"},
			{Type: loop.EventToolOutput, Tool: "code_execution", Text: "l1\nl2\nl3\nl4\nl5\nl6\nl7\nl8\n"},
		}, []string{"│ l3", "│ l8"}, []string{"│ l2"}},
		{"done", []loop.Event{
			{Type: loop.EventToolCall, Tool: "code_execution"},
			{Type: loop.EventToolOutput, Tool: "code_execution", Text: "partial\n"},
			{Type: loop.EventToolResult, Tool: "code_execution", Result: "partial"},
		}, nil, []string{"│ partial"}},
		{"subordinate", []loop.Event{
			{Type: loop.EventToolCall, Tool: "code_execution"},
			{Type: loop.EventToolOutput, Agent: "coder#1", Tool: "code_execution", Text: "theirs\n"},
		}, nil, []string{"│ theirs"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m, err := New(context.Background(), NewEngine(Config{Model: "test", Address: "http://127.0.0.1:1"}))
			if err != nil {
				t.Fatal(err)
			}
			m.resize(100, 40)
			m.boot.welcomed = true
			m.turn = &turn{kind: kindPrompt, start: m.now()}
			m.event(loop.Event{Type: loop.EventIteration, Iteration: 1})
			for _, e := range tc.events {
				m.event(e)
			}
			view := plain(m.liveTurn())
			for _, w := range tc.want {
				if !strings.Contains(view, w) {
					t.Errorf("the live area lacks %q:\n%s", w, view)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(view, w) {
					t.Errorf("the live area shows %q:\n%s", w, view)
				}
			}
		})
	}
}
