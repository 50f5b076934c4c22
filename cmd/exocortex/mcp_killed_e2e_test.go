package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/exocortex/exocortex/sdk/sdktest"
)

// TestMCPServerKilledMidCall: an MCP server of config.yaml's mcp_servers
// (testdata/mcpslow, on stdio) answers a long result, which reaches the
// model whole or cut with a line saying how much was left out, then is killed
// with SIGKILL in the middle of its next call: the call's result is an error
// naming the server, its state and its stderr; the tool_execute_after hook
// fires around it as around any call; the turn goes on and completes.
func TestMCPServerKilledMidCall(t *testing.T) {
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	server := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex/testdata/mcpslow")
	base := t.TempDir()
	home := filepath.Join(base, "home")
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	pidFile := filepath.Join(base, "mcpslow.pid")
	const bigBytes = 200_000
	conf := `mcp_servers:
  slow:
    command: ` + server + `
    env: {MCPSLOW_PIDFILE: ` + pidFile + `, MCPSLOW_BIG_BYTES: "` + strconv.Itoa(bigBytes) + `"}
    tool_timeout: 120
`
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	var replies []map[string]any
	for _, tool := range []string{"slow.big", "slow.wait"} {
		b, _ := json.Marshal(map[string]any{"thoughts": []string{"calling " + tool}, "headline": tool, "tool_name": tool, "tool_args": map[string]any{}})
		replies = append(replies, map[string]any{"content": string(b)})
	}
	final, _ := json.Marshal(map[string]any{"thoughts": []string{"done"}, "tool_name": "response", "tool_args": map[string]any{"text": "Done after the kill."}})
	replies = append(replies, map[string]any{"content": string(final)})
	script, _ := json.Marshal(map[string]any{"model": "mcp-killed", "replies": replies})
	scriptFile := filepath.Join(base, "script.yaml")
	if err := os.WriteFile(scriptFile, script, 0o644); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	// The killer: once the server has written its pid (inside the call of
	// wait), SIGKILL.
	killed := make(chan error, 1)
	go func() {
		for {
			b, err := os.ReadFile(pidFile)
			if err == nil {
				if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
					killed <- syscall.Kill(pid, syscall.SIGKILL)
					return
				}
			}
			select {
			case <-ctx.Done():
				killed <- ctx.Err()
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	cmd := exec.CommandContext(ctx, exe, "run", "-p", "Use the slow server.", "--json", "--model", "script:"+scriptFile)
	cmd.Env = append(os.Environ(), "EXOCORTEX_HOME="+home)
	cmd.Dir = base
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("run: %v\n%s\n%s", err, stdout.String(), stderr.String())
	}
	if err := <-killed; err != nil {
		t.Fatalf("killing the server mid-call: %v", err)
	}
	type event struct {
		Type, Hook, Tool, Result, Text, Error string
	}
	results := map[string]event{}
	hooksAround := map[string][]string{}
	current, response := "", ""
	sc := bufio.NewScanner(&stdout)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e event
		if json.Unmarshal(sc.Bytes(), &e) != nil {
			continue
		}
		switch {
		case e.Type == "tool_call":
			current = e.Tool
		case e.Type == "hook" && current != "" && (e.Hook == "tool_execute_before" || e.Hook == "tool_execute_after"):
			hooksAround[current] = append(hooksAround[current], e.Hook)
		case e.Type == "tool_result":
			results[e.Tool] = e
			current = ""
		case e.Type == "response":
			response = e.Text
		}
	}
	if response != "Done after the kill." {
		t.Errorf("the turn did not complete: response %q\n%s", response, stderr.String())
	}
	// A long result reaches the model whole or cut with a line saying how
	// much was left out (the response_finalizer's), never cut silently.
	big := results["slow.big"]
	whole := len("BIGSTART ") + bigBytes + len(" BIGEND")
	if !strings.HasPrefix(big.Result, "BIGSTART") || !strings.HasSuffix(big.Result, "BIGEND") {
		t.Errorf("slow.big's result (%d bytes) lost its start or its end: %.60q…%.60q", len(big.Result), big.Result, lastBytes(big.Result, 60))
	}
	if len(big.Result) < whole {
		m := regexp.MustCompile(`\n\[\.\.\. (\d+) characters left out by ([a-z_]+) \.\.\.\]\n`).FindStringSubmatch(big.Result)
		if m == nil {
			t.Fatalf("slow.big's result is %d bytes of %d, cut without saying so: %.60q…%.60q", len(big.Result), whole, big.Result, lastBytes(big.Result, 60))
		}
		left, _ := strconv.Atoi(m[1])
		if kept := len(big.Result) - len(m[0]); kept+left != whole {
			t.Errorf("slow.big's result keeps %d bytes and says %d were left out (by %s): %d, want %d", kept, left, m[2], kept+left, whole)
		}
	}
	got := results["slow.wait"].Error + results["slow.wait"].Result
	for _, want := range []string{"slow.wait", "MCP server slow", "unavailable", "waiting for the harbour master"} {
		if !strings.Contains(got, want) {
			t.Errorf("slow.wait, killed mid-call, answered %q: it does not say %q", got, want)
		}
	}
	if h := strings.Join(hooksAround["slow.wait"], " "); !strings.Contains(h, "tool_execute_before") || !strings.Contains(h, "tool_execute_after") {
		t.Errorf("around the killed call the hooks %q fired, want tool_execute_before and tool_execute_after", h)
	}
}

// lastBytes are the last n bytes of s.
func lastBytes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}
