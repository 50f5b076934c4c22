package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/sdk/sdktest"
)

// TestMCPServerProblemsInPlainSession: the terminal session in line mode
// (--plain, stdin a file) with config.yaml's mcp_servers holding a misspelled
// command, a server that hangs (it never answers initialize) and one that
// exits at start saying why on stderr: the real mcp-servers plugin reports
// each, and the session prints each on stderr once, by name, with its stderr
// and what to check; the prompt is answered on stdout all the same.
func TestMCPServerProblemsInPlainSession(t *testing.T) {
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	home := t.TempDir()
	conf := `mcp_servers:
  typo:
    command: nodee
    args: [server.js]
  silent:
    command: sh
    args: ["-c", "echo waiting for a licence key >&2; exec sleep 3600"]
    init_timeout: 1
  broken:
    command: sh
    args: ["-c", "echo 'error: DOCS_TOKEN is not set' >&2; exit 3"]
`
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs(filepath.Join("testdata", "tui", "session.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "--plain", "--model", "script:"+script)
	cmd.Dir = t.TempDir()
	cmd.Env = append(os.Environ(), "EXOCORTEX_HOME="+home)
	cmd.Stdin = strings.NewReader("say hello\n")
	var stdout, stderr strings.Builder
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v\nstderr:\n%s", err, stderr.String())
	}
	if !strings.Contains(stdout.String(), "Hello from the **scripted** model.") {
		t.Errorf("the session did not answer:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
	}
	e := stderr.String()
	for _, want := range []string{
		`! MCP server typo (nodee server.js) is failed: cannot start "nodee"`, "spelt right and on the PATH",
		"! MCP server silent (sh -c", "did not answer initialize within 1s", "its stderr ends: waiting for a licence key",
		"! MCP server broken (sh -c", "check: its stderr", "its stderr ends: error: DOCS_TOKEN is not set",
	} {
		if !strings.Contains(e, want) {
			t.Errorf("stderr lacks %q:\n%s", want, e)
		}
	}
	for _, name := range []string{"typo", "silent", "broken"} {
		if n := strings.Count(e, "! MCP server "+name+" "); n != 1 {
			t.Errorf("MCP server %s is reported %d times, want once:\n%s", name, n, e)
		}
	}
}
