package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/exocortex/exocortex/sdk/sdktest"
)

// slowEnv is an env with core/loop's slow plugin alone (slow_display sleeps
// SLOW_CHUNK per response_stream_chunk call; it provides the response tool,
// as the gate plugin does).
func slowEnv(t *testing.T) env {
	t.Helper()
	e := env{home: t.TempDir(), work: t.TempDir()}
	e.plugins = filepath.Join(e.home, "plugins")
	if err := os.MkdirAll(e.plugins, 0o755); err != nil {
		t.Fatal(err)
	}
	bin := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/core/loop/testdata/slowplugin")
	if err := os.Rename(bin, filepath.Join(e.plugins, "slow")); err != nil {
		t.Fatal(err)
	}
	return e
}

// TestStatusLineShowsSlowExtension: a real plugin whose stream extension
// takes 250ms a chunk against the default 100ms budget is shown on the
// status line while the turn runs ("⚠ slow: slow/slow_display … at
// response_stream_chunk"), then as stopped for the monologue after three
// calls in a row; the line keeps it, dimmed, once the turn ended, and the
// next turn starts without it.
func TestStatusLineShowsSlowExtension(t *testing.T) {
	t.Setenv("SLOW_CHUNK", "250ms")
	e := slowEnv(t)
	long := strings.Repeat("a long answer that streams in many pieces ", 12)
	eng, _ := e.engine(t, "slow", answerReply(long, 40, 40*time.Millisecond), answerReply("short", 400, 0))
	u := start(t, eng)
	u.tm.Send(tea.WindowSizeMsg{Width: 200, Height: 40})
	u.waitFor("the slow plugin running", func(m *Model) bool { return strings.Contains(plain(m.statusLine()), "plugins 1/1") })

	status := func() (line string, running bool) {
		u.inspect(func(m *Model) { line, running = plain(m.statusLine()), m.turn != nil })
		return
	}
	u.submit("answer at length")
	u.waitFor("the slow extension on the status line during the turn", func(m *Model) bool {
		return m.turn != nil && strings.Contains(plain(m.statusLine()), "⚠ slow: slow/slow_display ")
	})
	line, _ := status()
	if !strings.Contains(line, "at response_stream_chunk") || !strings.Contains(line, "ms at") {
		t.Fatalf("status line: %s", line)
	}
	u.waitFor("the stopped extension on the status line during the turn", func(m *Model) bool {
		return m.turn != nil && strings.Contains(plain(m.statusLine()), "⚠ stopped: slow/slow_display ")
	})
	u.idle()
	if line, _ := status(); !strings.Contains(line, "⚠ stopped: slow/slow_display ") {
		t.Fatalf("the status line forgot the slow extension when the turn ended: %s", line)
	}

	u.submit("and briefly")
	u.waitFor("the next turn", func(m *Model) bool { return m.turn != nil })
	if line, running := status(); running && strings.Contains(line, "⚠") {
		t.Fatalf("the next turn starts with the last one's slow extension: %s", line)
	}
	u.idle()
	if line, _ := status(); !strings.Contains(line, "⚠ slow: slow/slow_display ") {
		t.Fatalf("the second turn's slow call is not shown: %s", line)
	}
}
