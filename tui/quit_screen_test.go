package tui

import (
	"context"
	"strings"
	"testing"
	"time"
)

// TestCtrlDLeavesNoInputBox: after ctrl+d the terminal shows the goodbye
// line and none of the live area (the input box, its placeholder, the
// status line), replayed in a real terminal.
func TestCtrlDLeavesNoInputBox(t *testing.T) {
	const width, height = 80, 30
	e := newEnv(t)
	eng, _ := e.engine(t, "bye")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m, err := New(ctx, eng)
	if err != nil {
		t.Fatal(err)
	}
	out := &termRecorder{}
	_, _ = out.Write([]byte(LeadIn))
	p, done := recordedProgram(ctx, m, out, width, height, nil)
	waitWelcomed(t, p) // and the input box drawn after it
	p.Send(ctrlD)
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(deadline):
		t.Fatal("ctrl+d did not end the program")
	}
	scr := replayInTmux(t, out.bytes(), width, height)
	if !strings.Contains(scr, "bye · session bye saved") {
		t.Fatalf("no goodbye line:\n%s", scr)
	}
	for _, gone := range []string{"Ask anything", "ctx 0%"} {
		if strings.Contains(scr, gone) {
			t.Errorf("%q is left on the terminal after ctrl+d:\n%s", gone, scr)
		}
	}
	lines := strings.Split(strings.TrimRight(scr, "\n "), "\n")
	if last := strings.TrimSpace(lines[len(lines)-1]); !strings.HasPrefix(last, "bye · session") {
		t.Errorf("the last line is %q, want the goodbye line", last)
	}
}
