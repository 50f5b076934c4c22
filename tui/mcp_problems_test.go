package tui

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/exocortex/exocortex/extensions/mcpclient"
	"github.com/exocortex/exocortex/toolsettings"
)

// TestMCPServerProblemsInTheTerminal: the MCP servers the mcp-servers plugin
// could not start reach the terminal through its real status file
// (mcpclient.Connect writes it, mcpclient.Problems reads it, as the command
// wires Config.Problems): a misspelled command found at start is on the
// welcome card, naming the server and what to check; a server that fails
// later (it exits at a restart, saying why on stderr) is a transcript line
// with its stderr's last line, shown once; a report older than the session
// shows nothing.
func TestMCPServerProblemsInTheTerminal(t *testing.T) {
	e := newEnv(t)
	status := filepath.Join(e.home, "run", "mcp-servers.json")
	ctx := context.Background()
	old := mcpclient.Connect(ctx, map[string]toolsettings.MCPServer{"stale": {Command: "stale-server-not-here"}}, mcpclient.Options{StatusFile: status})
	old.Close()
	started := time.Now().UTC()
	set := mcpclient.Connect(ctx, map[string]toolsettings.MCPServer{"docs": {Command: "mcp-server-docz"}}, mcpclient.Options{StatusFile: status})
	t.Cleanup(func() { set.Close() })
	eng, _ := e.engine(t, "mcp-problems")
	eng.cfg.Problems = func() []string { return mcpclient.Problems(status, started) }
	u := start(t, eng)
	u.tm.Send(tea.WindowSizeMsg{Width: 120, Height: 40})
	u.waitPrinted("MCP server docs")
	card := strings.ReplaceAll(u.printed(), "\n", " ")
	for _, want := range []string{"mcp-server-docz", "is failed", "cannot start", "executable", "check:", "PATH"} {
		if !strings.Contains(card, want) {
			t.Errorf("the welcome card lacks %q:\n%s", want, card)
		}
	}
	if strings.Contains(card, "stale") {
		t.Errorf("a report from before the session is shown:\n%s", card)
	}

	// Later, the server is started again and exits at once (a crash): the
	// plugin rewrites the status file; the next status tick prints it.
	later := mcpclient.Connect(ctx, map[string]toolsettings.MCPServer{"docs": {Command: "sh",
		Args: []string{"-c", "echo starting docs >&2; echo 'error: DOCS_TOKEN is not set' >&2; exit 3"}}}, mcpclient.Options{StatusFile: status})
	t.Cleanup(func() { later.Close() })
	u.waitPrinted("! MCP server docs (sh -c", "DOCS_TOKEN is not set")
	// A status tick later (every 5 s) the same problem is not printed again.
	time.Sleep(6 * time.Second)
	if n := strings.Count(u.printed(), "its stderr ends:"); n != 1 {
		t.Errorf("the crash is shown %d times, want once:\n%s", n, u.printed())
	}
}
