package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/exocortex/exocortex/core/llm/scripted"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// TestInProcessChildEnv runs a real session with every built-in served in
// the host's process (the default) and a secret read from an environment
// variable, and looks at what the processes the built-ins start were given,
// from the files they wrote: code_execution's shell and a command hook
// (PreToolUse) see an ordinary variable of the host's environment but not
// the secret's, which only the host holds (docs/secrets.md); a shell that
// hangs is killed at code_execution's timeout, with what it started, and the
// session goes on. `plugins status` says agent-tools and command-hooks are
// in-process.
func TestInProcessChildEnv(t *testing.T) {
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	home, project, user := t.TempDir(), t.TempDir(), t.TempDir()
	// A sleep no other process runs: its argument names this test's process.
	marker := fmt.Sprintf("86400.%d", os.Getpid())
	hung := "sleep " + marker
	call := func(tool string, args map[string]any) scripted.Reply {
		b, _ := json.Marshal(map[string]any{"thoughts": []string{"step"}, "headline": "step", "tool_name": tool, "tool_args": args})
		return scripted.Reply{Content: string(b)}
	}
	shell := `printf '%s' "${EXO_TEST_SECRET-unset}" > shell-secret.txt; printf '%s' "${EXO_TEST_PLAIN-unset}" > shell-plain.txt`
	srv, err := scripted.Start("openai", scripted.Script{Source: "childenv", Replies: []scripted.Reply{
		call("code_execution", map[string]any{"runtime": "terminal", "code": shell}),
		call("code_execution", map[string]any{"runtime": "terminal", "code": hung + " & " + hung}),
		call("response", map[string]any{"text": "done"}),
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	hook := `printf '%s' \"${EXO_TEST_SECRET-unset}\" > ` + filepath.Join(project, "hook-secret.txt") +
		`; printf '%s' \"${EXO_TEST_PLAIN-unset}\" > ` + filepath.Join(project, "hook-plain.txt")
	settings := `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "` + hook + `"}]}]}}`
	if err := os.MkdirAll(filepath.Join(user, ".claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(user, ".claude", "settings.json"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := "model: " + srv.Model() + "\nprovider: openai\nopenai:\n  base_url: " + srv.URL() + "\n" +
		"secrets:\n  TESTSECRET: {env: EXO_TEST_SECRET}\n" +
		"tools:\n  code_execution:\n    timeout: 3s\n"
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "run", "-p", "Look around.", "--json")
	cmd.Dir = project
	cmd.Env = append(os.Environ(), "EXOCORTEX_HOME="+home, "HOME="+user,
		"EXO_TEST_SECRET=s3cret-value-of-the-host", "EXO_TEST_PLAIN=plain-value")
	start := time.Now()
	stdout, _ := runScripted(t, cmd, srv)
	took := time.Since(start)

	for _, f := range []struct{ file, want string }{
		{"shell-secret.txt", "unset"}, {"shell-plain.txt", "plain-value"},
		{"hook-secret.txt", "unset"}, {"hook-plain.txt", "plain-value"},
	} {
		b, err := os.ReadFile(filepath.Join(project, f.file))
		if err != nil || string(b) != f.want {
			t.Errorf("%s = %q (%v), want %q", f.file, b, err, f.want)
		}
	}
	if !strings.Contains(stdout.String(), "the time limit of 3s passed; the command was killed") {
		t.Errorf("the hung shell's result says nothing of its timeout:\n%s", tail(stdout.String()))
	}
	if took > 60*time.Second {
		t.Errorf("the session took %s: the hung shell held it", took)
	}
	if left := processesWith(marker); len(left) > 0 {
		t.Errorf("the hung shell's processes are still running after the session: %v", left)
	}

	st := exec.Command(exe, "plugins", "status", "--json")
	st.Dir = project
	st.Env = append(os.Environ(), "EXOCORTEX_HOME="+home, "HOME="+user)
	out, err := st.Output()
	if err != nil {
		t.Fatalf("plugins status: %v", err)
	}
	var status []struct {
		Name      string `json:"name"`
		Path      string `json:"path"`
		InProcess bool   `json:"in_process"`
	}
	if err := json.Unmarshal(out, &status); err != nil {
		t.Fatal(err)
	}
	in := map[string]bool{}
	for _, p := range status {
		in[p.Name] = p.InProcess && strings.HasPrefix(p.Path, "in-process")
	}
	for _, name := range []string{"agent-tools", "command-hooks", "mcp-servers"} {
		if !in[name] {
			t.Errorf("plugins status does not say %s is served in-process: %s", name, out)
		}
	}
}

// processesWith lists the processes whose command line contains s.
func processesWith(s string) []string {
	var out []string
	dirs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, f := range dirs {
		b, err := os.ReadFile(f)
		if err == nil && strings.Contains(strings.ReplaceAll(string(b), "\x00", " "), s) {
			out = append(out, filepath.Base(filepath.Dir(f))+": "+strings.ReplaceAll(string(b), "\x00", " "))
		}
	}
	return out
}
