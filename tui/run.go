package tui

import (
	"context"
	"errors"
	"io"
	"os"
	"time"

	tea "charm.land/bubbletea/v2"
)

// Run opens the session on the terminal and returns when the operator
// leaves or ctx ends (the caller turns SIGTERM and SIGHUP into that). opts
// are passed to the Bubble Tea program; inline, Run first writes LeadIn to
// stdout, the terminal it draws on. The
// engine is closed before Run returns.
//
// Bubble Tea's own SIGINT/SIGTERM handler is off: in raw mode Ctrl+C is a
// key, and that handler, when a signal arrives as ctx ends, blocks the
// program's shutdown sending to a loop that has stopped.
func Run(ctx context.Context, eng *Engine, opts ...tea.ProgramOption) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	m, err := New(ctx, eng)
	if err != nil {
		return err
	}
	if !eng.Config().Fullscreen {
		// The live area starts on a line of its own, below what the shell
		// left on the screen, and never on the screen's first row: a
		// terminal that scrolls the screen into its history when it is
		// erased from the top-left corner (tmux) would keep a copy of the
		// area there. Written before the renderer starts, so it draws from
		// there (a print through the renderer before its first frame would
		// be placed at the screen's top, over the shell's lines).
		_, _ = io.WriteString(os.Stdout, LeadIn)
	}
	p := tea.NewProgram(m, append([]tea.ProgramOption{tea.WithContext(ctx), tea.WithoutSignalHandler()}, opts...)...)
	_, err = p.Run()
	// Stop a turn still running and let the loop record its end before the
	// session and the plugins close.
	cancel()
	eng.WaitIdle(10 * time.Second)
	eng.Close()
	if errors.Is(err, tea.ErrProgramKilled) {
		// The caller's context ended (SIGTERM): a normal way out.
		return nil
	}
	return err
}

// LeadIn is what Run writes to the terminal before an inline session draws.
const LeadIn = "\r\n"

// WaitIdle waits until no turn runs, at most d.
func (e *Engine) WaitIdle(d time.Duration) bool {
	deadline := time.Now().Add(d)
	for e.Busy() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}
