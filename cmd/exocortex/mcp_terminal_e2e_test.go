package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/exocortex/exocortex/sdk/sdktest"
)

// TestMCPStdioBesideTerminalSession: a terminal session (in tmux) is open on
// a home and owns its memory service; an IDE then starts `exocortex mcp` (the
// real binary, on stdio, through the official Go SDK's client) on the same
// home. It is not refused and does not open the store itself: search_memory
// finds what the terminal saved with /memory add a moment before,
// memory_save's record is found by the terminal's /memory search and counted
// by its /memory stats; the terminal stays the owner throughout, the memory
// directory holds the same files (no second journal), every write is in the
// store once and memory replay --verify agrees.
func TestMCPStdioBesideTerminalSession(t *testing.T) {
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	home := serviceHome(t)
	project := t.TempDir()
	run := func(args ...string) string {
		t.Helper()
		o, e, code := runExo(t, exe, project, home, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, e)
		}
		return o
	}
	ownerPID := func() int {
		t.Helper()
		var st struct {
			OwnerPID int `json:"owner_pid"`
		}
		if err := json.Unmarshal([]byte(run("memory", "stats", "--json")), &st); err != nil {
			t.Fatal(err)
		}
		return st.OwnerPID
	}
	memDir := filepath.Join(home, "memory")
	// files are the memory directory's entries (the full-text index's
	// segments, inside fulltext/, come and go as it merges them).
	files := func() string {
		t.Helper()
		entries, err := os.ReadDir(memDir)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		return strings.Join(names, " ")
	}

	// An existing store, so the terminal warms (and owns) it at start-up.
	run("memory", "add", "--embedder", "none", "the old quay was rebuilt in granite")

	tm := newTmux(t)
	script := liveScript(t, t.TempDir(), "terminal.yaml", "model: terminal\nreplies:\n  - content: '{\"thoughts\": [\"-\"], \"tool_name\": \"response\", \"tool_args\": {\"text\": \"-\"}}'\n")
	sh, pidFile := runner(t, exe, home, project)
	tm.run("new-session", "-d", "-s", "term", "-x", "120", "-y", "40", "sh "+sh+" --model script:"+script)
	termPID := tm.track(pidFile)
	tm.waitFor("term", "◆ Exocortex", "ctrl+d quit")
	for end := time.Now().Add(45 * time.Second); ownerPID() != termPID; time.Sleep(200 * time.Millisecond) {
		if time.Now().After(end) {
			t.Fatalf("the terminal session (pid %d) did not become the memory's owner (owner %d):\n%s", termPID, ownerPID(), tm.screen("term"))
		}
	}
	tm.typeLine("term", "/memory add the terminal noted fog at the pier")
	tm.waitFor("term", "✓ saved memory")
	before := files()

	// The IDE starts `exocortex mcp` on the same home.
	mcpCmd := exec.CommandContext(ctx, exe, "mcp")
	mcpCmd.Dir = project
	mcpCmd.Env = append(os.Environ(), "EXOCORTEX_HOME="+home)
	var mcpErr bytes.Buffer
	mcpCmd.Stderr = &mcpErr
	client := mcp.NewClient(&mcp.Implementation{Name: "ide", Version: "1.0.0"}, nil)
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: mcpCmd}, nil)
	if err != nil {
		t.Fatalf("connecting to exocortex mcp beside the terminal: %v\nits stderr:\n%s", err, mcpErr.String())
	}
	defer cs.Close()
	call := func(name string, args map[string]any) *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
		if err != nil {
			t.Fatalf("%s: %v\nexocortex mcp's stderr:\n%s", name, err, mcpErr.String())
		}
		if res.IsError {
			t.Fatalf("%s failed: %s\nexocortex mcp's stderr:\n%s", name, resultText(res), mcpErr.String())
		}
		return res
	}
	hits := func(res *mcp.CallToolResult) []string {
		t.Helper()
		b, err := json.Marshal(res.StructuredContent)
		if err != nil {
			t.Fatal(err)
		}
		var out struct {
			Hits []struct {
				Text string `json:"text"`
			} `json:"hits"`
		}
		if err := json.Unmarshal(b, &out); err != nil {
			t.Fatalf("search_memory's structured content %s: %v", b, err)
		}
		var texts []string
		for _, h := range out.Hits {
			texts = append(texts, h.Text)
		}
		return texts
	}
	for query, want := range map[string]string{"fog at the pier": "the terminal noted fog at the pier", "granite quay": "the old quay was rebuilt in granite"} {
		if got := hits(call("search_memory", map[string]any{"query": query, "k": 5})); !strings.Contains(strings.Join(got, "\n"), want) {
			t.Errorf("search_memory %q over MCP found %q, want %q (the terminal's memory)", query, got, want)
		}
	}
	saved := resultText(call("memory_save", map[string]any{"key": "ide_note", "value": "the IDE logged a lantern on the breakwater", "tags": []string{"ide"}}))
	if saved != "Memory item 'ide_note' saved successfully." {
		t.Errorf("memory_save answered %q", saved)
	}
	if pid := ownerPID(); pid != termPID {
		t.Errorf("with exocortex mcp running the owner is pid %d, want the terminal's %d", pid, termPID)
	}

	// The terminal sees the IDE's save.
	tm.typeLine("term", "/memory search lantern breakwater")
	tm.waitAfter("term", "memory search", "the IDE logged a lantern on the breakwater")
	tm.typeLine("term", "/memory stats")
	tm.waitFor("term", "records   3")
	if err := cs.Close(); err != nil {
		t.Logf("closing the MCP session: %v", err)
	}
	if after := files(); after != before {
		t.Errorf("the memory directory changed while exocortex mcp ran beside the terminal:\nbefore: %s\nafter:  %s", before, after)
	}
	if s := mcpErr.String(); strings.Contains(strings.ToLower(s), "held by") || strings.Contains(strings.ToLower(s), "locked") {
		t.Errorf("exocortex mcp's stderr speaks of a held store:\n%s", s)
	}
	tm.typeLine("term", "/quit")
	if code := tm.paneDead("term"); code != 0 {
		t.Fatalf("the terminal session exited %d:\n%s", code, tm.screen("term"))
	}

	_, texts := exportCounts(t, run("memory", "export"))
	for _, text := range []string{"the old quay was rebuilt in granite", "the terminal noted fog at the pier", "the IDE logged a lantern on the breakwater"} {
		if texts[text] != 1 {
			t.Errorf("%q: %d times in the store, want once (export: %v)", text, texts[text], texts)
		}
	}
	var rep struct {
		OK bool `json:"ok"`
	}
	if err := json.Unmarshal([]byte(run("memory", "replay", "--verify", "--json")), &rep); err != nil || !rep.OK {
		t.Fatalf("replay --verify: %+v %v", rep, err)
	}
}

// resultText is a tool result's text parts.
func resultText(r *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range r.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}
