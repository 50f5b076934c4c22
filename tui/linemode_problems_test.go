package tui

import (
	"context"
	"io"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/exocortex/exocortex/extensions/mcpclient"
	"github.com/exocortex/exocortex/toolsettings"
)

// TestMCPServerProblemsInLineMode: line mode (--plain, or stdin not a
// terminal) reports the MCP servers the mcp-servers plugin could not start
// through its real status file (mcpclient.Connect writes it, mcpclient.Problems
// reads it, as the command wires Config.Problems), on stderr: a misspelled
// command and a server that hangs (it never answers initialize) found at start
// are "!" lines after the plugins line, each naming the server, its stderr and
// what to check; a server that crashes later is a line of its own once it is
// found, shown once; a report older than the session shows nothing; the
// prompts are answered on stdout meanwhile.
func TestMCPServerProblemsInLineMode(t *testing.T) {
	e := newEnv(t)
	status := filepath.Join(e.home, "run", "mcp-servers.json")
	ctx := context.Background()
	old := mcpclient.Connect(ctx, map[string]toolsettings.MCPServer{"stale": {Command: "stale-server-not-here"}}, mcpclient.Options{StatusFile: status})
	old.Close()
	started := time.Now().UTC()
	set := mcpclient.Connect(ctx, map[string]toolsettings.MCPServer{
		"docs":   {Command: "mcp-server-docz"},
		"silent": {Command: "sh", Args: []string{"-c", "echo waiting for a licence key >&2; exec sleep 3600"}, InitTimeout: 1},
	}, mcpclient.Options{StatusFile: status})
	t.Cleanup(func() { set.Close() })
	eng, _ := e.engine(t, "plain-mcp", answer("first answer"), answer("second answer"))
	eng.cfg.Problems = func() []string { return mcpclient.Problems(status, started) }

	in, feed := io.Pipe()
	var out lockedBuf
	errOut := &lockedBuf{}
	done := make(chan error, 1)
	go func() { done <- LineMode(context.Background(), eng, in, &out, errOut) }()
	waitLine := func(what string, wants ...string) string {
		t.Helper()
		end := time.Now().Add(deadline)
		for {
			got := errOut.String()
			missing := ""
			for _, w := range wants {
				if !strings.Contains(got, w) {
					missing = w
					break
				}
			}
			if missing == "" {
				return got
			}
			if time.Now().After(end) {
				t.Fatalf("%s: stderr lacks %q:\n%s", what, missing, got)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	startLines := waitLine("at start", "plugins: gate", "! MCP server docs", "! MCP server silent")
	for _, want := range []string{
		`! MCP server docs (mcp-server-docz) is failed: cannot start "mcp-server-docz"`, "check:", "PATH",
		"! MCP server silent (sh -c", "did not answer initialize within 1s", "its stderr ends: waiting for a licence key",
	} {
		if !strings.Contains(startLines, want) {
			t.Errorf("the start-up lines lack %q:\n%s", want, startLines)
		}
	}
	if strings.Index(startLines, "plugins: gate") > strings.Index(startLines, "! MCP server") {
		t.Errorf("the problems come before the plugins line:\n%s", startLines)
	}
	if strings.Contains(startLines, "stale") {
		t.Errorf("a report from before the session is shown:\n%s", startLines)
	}
	if _, err := io.WriteString(feed, "first\n"); err != nil {
		t.Fatal(err)
	}

	// Later the server is started again and exits at once (a crash): the
	// plugin rewrites the status file; line mode prints it when it reads it.
	later := mcpclient.Connect(ctx, map[string]toolsettings.MCPServer{"docs": {Command: "sh",
		Args: []string{"-c", "echo starting docs >&2; echo 'error: DOCS_TOKEN is not set' >&2; exit 3"}}}, mcpclient.Options{StatusFile: status})
	t.Cleanup(func() { later.Close() })
	waitLine("after the crash", "! MCP server docs (sh -c", "DOCS_TOKEN is not set")
	if _, err := io.WriteString(feed, "second\n"); err != nil {
		t.Fatal(err)
	}
	// A reading later the same problem is not printed again.
	time.Sleep(lineProblemsEvery + time.Second)
	feed.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(errOut.String(), "its stderr ends: starting docs"); n != 1 {
		t.Errorf("the crash is shown %d times, want once:\n%s", n, errOut)
	}
	if n := strings.Count(errOut.String(), "! MCP server silent"); n != 1 {
		t.Errorf("the hang is shown %d times, want once:\n%s", n, errOut)
	}
	if o := out.String(); !strings.Contains(o, "first answer") || !strings.Contains(o, "second answer") {
		t.Errorf("stdout %q, want both answers", o)
	}
}
