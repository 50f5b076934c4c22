package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/exocortex/exocortex/sdk/sdktest"
)

// TestMCPServersToolsInAMonologue: the agent gets the tools of
// @modelcontextprotocol/server-everything and server-filesystem (started on
// stdio from config.yaml's mcp_servers) as SERVER.TOOL; a scripted monologue
// calls them, and each call goes through tool_execute_before and
// tool_execute_after like a plugin tool; fs.write_file, which its server marks
// destructive, is held for approval and, with no operator to ask, refused. Beside them a misspelled command, a
// server that never answers initialize, a remote URL that refuses and an
// mcp_servers_file that is not there are each reported by name on run's
// --json, with what to check, and the turn completes.
func TestMCPServersToolsInAMonologue(t *testing.T) {
	nodeDir := mcpNode(t)
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	base := t.TempDir()
	home, files := filepath.Join(base, "home"), filepath.Join(base, "files")
	for _, d := range []string{home, files} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(files, "note.txt"), []byte("the secret word is marmalade\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	pkg := filepath.Join(nodeDir, "node_modules", "@modelcontextprotocol")
	conf := `mcp_servers_file: missing.json
mcp_servers:
  everything:
    command: node
    args: [` + filepath.Join(pkg, "server-everything", "dist", "index.js") + `]
    init_timeout: 8s
  fs:
    command: node
    args: [` + filepath.Join(pkg, "server-filesystem", "dist", "index.js") + `, ` + files + `]
    init_timeout: 8
  typo:
    command: nodee
    args: [server.js]
  silent:
    command: sleep
    args: ["3600"]
    init_timeout: 1
  refused:
    url: http://127.0.0.1:1/mcp
    headers: {Authorization: Bearer x}
`
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	calls := []struct {
		tool string
		args map[string]any
	}{
		{"everything.echo", map[string]any{"message": "hello from the monologue"}},
		{"everything.get-sum", map[string]any{"a": 19, "b": 23}},
		{"fs.read_text_file", map[string]any{"path": filepath.Join(files, "note.txt")}},
		{"fs.write_file", map[string]any{"path": filepath.Join(files, "new.txt"), "content": "should not be written"}},
	}
	var replies []map[string]any
	for _, c := range calls {
		b, _ := json.Marshal(map[string]any{"thoughts": []string{"calling " + c.tool}, "headline": c.tool, "tool_name": c.tool, "tool_args": c.args})
		replies = append(replies, map[string]any{"content": string(b)})
	}
	final, _ := json.Marshal(map[string]any{"thoughts": []string{"done"}, "tool_name": "response", "tool_args": map[string]any{"text": "Done with the MCP tools."}})
	replies = append(replies, map[string]any{"content": string(final)})
	script, _ := json.Marshal(map[string]any{"model": "mcp", "replies": replies})
	scriptFile := filepath.Join(base, "script.yaml")
	if err := os.WriteFile(scriptFile, script, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "run", "-p", "Use the MCP tools.", "--json", "--model", "script:"+scriptFile)
	cmd.Env = append(os.Environ(), "EXOCORTEX_HOME="+home)
	cmd.Dir = base
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	t0 := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("run: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	t.Logf("run took %s", time.Since(t0))
	type event struct {
		Type, Hook, Tool, Result, Text, Plugin, Error string
	}
	var events []event
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) == nil {
			events = append(events, e)
		}
	}
	results := map[string]string{}
	hooksAround := map[string][]string{}
	current := ""
	var notices, approvals []string
	for _, e := range events {
		switch {
		case e.Type == "approval":
			approvals = append(approvals, e.Tool+": "+e.Result)
		case e.Type == "tool_call":
			current = e.Tool
		case e.Type == "hook" && current != "" && (e.Hook == "tool_execute_before" || e.Hook == "tool_execute_after"):
			hooksAround[current] = append(hooksAround[current], e.Hook)
		case e.Type == "tool_result":
			results[e.Tool] = e.Result + e.Error
			current = ""
		case e.Type == "notice":
			notices = append(notices, e.Text)
		case e.Type == "response" && e.Text != "Done with the MCP tools.":
			t.Errorf("the response is %q", e.Text)
		}
	}
	want := map[string]string{
		"everything.echo":    "hello from the monologue",
		"everything.get-sum": "42",
		"fs.read_text_file":  "marmalade",
	}
	for tool, w := range want {
		if !strings.Contains(results[tool], w) {
			t.Errorf("%s answered %q, want %q; notices:\n%s", tool, results[tool], w, strings.Join(notices, "\n"))
		}
		hooks := strings.Join(hooksAround[tool], " ")
		if !strings.Contains(hooks, "tool_execute_before") || !strings.Contains(hooks, "tool_execute_after") {
			t.Errorf("around %s the hooks %q fired, want tool_execute_before and tool_execute_after", tool, hooks)
		}
	}
	// fs.write_file is marked destructive by its server: held, and refused
	// with no operator to ask (run -p, approval default).
	if a := strings.Join(approvals, "\n"); !strings.Contains(a, "fs.write_file: deny") {
		t.Errorf("approvals: %q, want fs.write_file denied", a)
	}
	if _, err := os.Stat(filepath.Join(files, "new.txt")); err == nil {
		t.Error("the held fs.write_file ran")
	}
	if hooks := strings.Join(hooksAround["fs.write_file"], " "); !strings.Contains(hooks, "tool_execute_before") {
		t.Errorf("around fs.write_file the hooks %q fired", hooks)
	}
	all := strings.Join(notices, "\n")
	for _, w := range []string{
		`MCP server typo (nodee server.js) is failed: cannot start "nodee"`, "spelt right and on the PATH",
		"MCP server silent (sleep 3600) is failed: it did not answer initialize within 1s",
		"MCP server refused (http://127.0.0.1:1/mcp) is failed", "that a server runs at http://127.0.0.1:1/mcp",
		"mcp_servers_file " + filepath.Join(home, "missing.json"),
	} {
		if !strings.Contains(all, w) {
			t.Errorf("the notices do not say %q:\n%s", w, all)
		}
	}
}
