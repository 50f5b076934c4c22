package tui

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"
	"github.com/charmbracelet/x/ansi"
)

// termRecorder is the program's terminal output, kept whole for a replay. It
// signals a write that erases to the end of the screen (a redraw of the
// whole live area) which wants would accept.
type termRecorder struct {
	mu     sync.Mutex
	buf    bytes.Buffer
	accept func(string) bool
	seen   chan struct{}
}

func (r *termRecorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.accept != nil && strings.Contains(string(p), ansi.EraseScreenBelow) && r.accept(string(p)) {
		r.accept = nil
		close(r.seen)
	}
	return r.buf.Write(p)
}

// expect arms the termRecorder: the returned channel closes at the next write
// that redraws the live area and that accept takes.
func (r *termRecorder) expect(accept func(string) bool) <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.accept, r.seen = accept, make(chan struct{})
	return r.seen
}

func (r *termRecorder) bytes() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return bytes.Clone(r.buf.Bytes())
}

// replayInTmux writes out into a fresh tmux pane of the given size and
// returns the pane's screen with its scrollback: what an operator's
// terminal shows after the program wrote out.
func replayInTmux(t *testing.T, out []byte, width, height int) string {
	t.Helper()
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed, so the replay in a real terminal cannot run (apt-get install -y tmux)")
	}
	dir := t.TempDir()
	raw, conf, sock := filepath.Join(dir, "out.raw"), filepath.Join(dir, "tmux.conf"), filepath.Join(dir, "tmux.sock")
	if err := os.WriteFile(raw, out, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(conf, []byte("set -g remain-on-exit on\nset -g history-limit 10000\nset -g status off\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tmux := func(args ...string) string {
		t.Helper()
		b, err := exec.Command("tmux", append([]string{"-S", sock, "-f", conf}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, b)
		}
		return string(b)
	}
	t.Cleanup(func() { _ = exec.Command("tmux", "-S", sock, "kill-server").Run() })
	// The replay ends with a mark, and the screen is read once the mark is on
	// it: tmux may see the command exit before it has read all of its output,
	// so waiting for the pane to die can capture a screen still empty.
	const mark = "<<replayed>>"
	tmux("new-session", "-d", "-s", "r", "-x", strconv.Itoa(width), "-y", strconv.Itoa(height),
		"cat "+raw+"; printf '%s' '"+mark+"'; sleep 60")
	for end := time.Now().Add(30 * time.Second); ; {
		if scr := tmux("capture-pane", "-p", "-J", "-t", "r", "-S", "-3000"); strings.Contains(scr, mark) {
			return strings.Replace(scr, mark, "", 1)
		}
		if time.Now().After(end) {
			t.Fatal("the replay did not end")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// recordedProgram runs m in a Bubble Tea program of the given size that
// writes to out, serving inspectMsg and calling before (when set) on the
// event loop ahead of every other message. done receives Run's error.
func recordedProgram(ctx context.Context, m *Model, out *termRecorder, width, height int, before func()) (p *tea.Program, done <-chan error) {
	filter := func(_ tea.Model, msg tea.Msg) tea.Msg {
		if im, ok := msg.(inspectMsg); ok {
			im.fn(m)
			close(im.done)
			return nil
		}
		if before != nil {
			before()
		}
		return msg
	}
	p = tea.NewProgram(m, tea.WithContext(ctx), tea.WithoutSignalHandler(), tea.WithInput(nil),
		tea.WithOutput(out), tea.WithWindowSize(width, height), tea.WithFilter(filter))
	ch := make(chan error, 1)
	go func() { _, err := p.Run(); ch <- err }()
	return p, ch
}

// waitWelcomed waits until the welcome card's print is acknowledged, then a
// few frames (60 a second), so the live area after it is on the terminal.
func waitWelcomed(t *testing.T, p *tea.Program) {
	t.Helper()
	end := time.Now().Add(deadline)
	for {
		ok, seen := false, make(chan struct{})
		p.Send(inspectMsg{fn: func(m *Model) { ok = m.boot.welcomed && !m.printing && len(m.printQ) == 0 }, done: seen})
		<-seen
		if ok {
			break
		}
		if time.Now().After(end) {
			t.Fatal("the welcome card was never printed")
		}
		time.Sleep(20 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond)
}

// TestWelcomeCardLeavesNoPendingCopy: when the session is up, the welcome
// card leaves the live area (which shrinks to the input) and is printed
// above it. On a loaded machine the renderer may draw the shrunken area
// before the print reaches the terminal; the filter below makes that order
// certain. The area's old lines must still all be erased: replayed into a
// real terminal, the screen and its scrollback hold the printed card once
// and no line of the pending one ("starting…", "counting…").
//
// The CI saw this (TestLongAnswerInTmux/80): Bubble Tea's renderer, drawing
// an inline area that shrank below the row its cursor was on, moved up by
// the new height instead of the cursor's row, and left the top of the old
// area in the scrollback.
func TestWelcomeCardLeavesNoPendingCopy(t *testing.T) {
	const width, height = 80, 30
	e := newEnv(t)
	eng, _ := e.engine(t, "stale")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m, err := New(ctx, eng)
	if err != nil {
		t.Fatal(err)
	}
	out := &termRecorder{}
	_, _ = out.Write([]byte(LeadIn)) // as Run writes it
	var shrunk <-chan struct{}
	held := false
	// The hook runs on the event loop before each message, so m is read
	// without a race. Until the card is printed, a redraw without it is
	// expected; the first message after the welcoming update (the card's
	// print, or one before it) waits for that redraw, so the shrunken area
	// reaches the terminal before the card does.
	before := func() {
		switch {
		case !m.boot.welcomed:
			shrunk = out.expect(func(s string) bool { return !strings.Contains(s, "╭") })
		case !held:
			held = true
			select {
			case <-shrunk:
			case <-time.After(deadline):
				t.Error("the live area was not drawn again after the card left it")
			}
		}
	}
	p, done := recordedProgram(ctx, m, out, width, height, before)
	waitWelcomed(t, p)
	p.Quit()
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	scr := replayInTmux(t, out.bytes(), width, height)
	for _, pending := range []string{"starting…", "counting…", "asking…"} {
		if strings.Contains(scr, pending) {
			t.Errorf("a line of the pending card (%q) was left in the terminal:\n%s", pending, scr)
		}
	}
	if n := strings.Count(scr, "◆ Exocortex"); n != 1 {
		t.Errorf("the card's title is in the terminal %d times, want once:\n%s", n, scr)
	}
}
