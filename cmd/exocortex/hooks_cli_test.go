package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/sdk/sdktest"
)

// TestHooksListAndTest runs `exocortex hooks list` and `hooks test` on a
// Claude Code and a Gemini CLI configuration with real scripts.
func TestHooksListAndTest(t *testing.T) {
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	userHome, home, project := t.TempDir(), t.TempDir(), t.TempDir()
	guard := filepath.Join(project, "guard.sh")
	if err := os.WriteFile(guard, []byte("#!/bin/sh\ngrep -q 'rm -rf' && { echo 'no rm -rf' >&2; exit 2; }\nexit 0\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		".claude/settings.json": `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "` + guard + `"}]},
			{"matcher": "Write|Edit", "hooks": [{"type": "command", "command": "` + filepath.Join(project, "absent.sh") + `", "fail_open": true}]}]}}`,
		".gemini/settings.json": `{"hooks": {"BeforeTool": [{"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "echo '{\"hookSpecificOutput\":{\"tool_input\":{\"command\":\"ls\"}}}'", "timeout": 1500}]}]}}`,
	}
	for name, text := range files {
		p := filepath.Join(userHome, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	runOut := func(stdin string, args ...string) (stdout, stderr string, err error) {
		cmd := exec.Command(exe, args...)
		cmd.Dir = project
		cmd.Env = append(os.Environ(), "HOME="+userHome, "EXOCORTEX_HOME="+home)
		cmd.Stdin = strings.NewReader(stdin)
		var out, errOut bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errOut
		err = cmd.Run()
		return out.String(), errOut.String(), err
	}
	run := func(stdin string, args ...string) (string, error) {
		out, errOut, err := runOut(stdin, args...)
		return out + errOut, err
	}

	out, _, err := runOut("", "hooks", "list", "--json")
	if err == nil {
		t.Error("hooks list exits 0 although a hook's script does not exist")
	}
	var list struct {
		Hooks []hookRow `json:"hooks"`
	}
	if jerr := json.Unmarshal([]byte(out), &list); jerr != nil {
		t.Fatalf("%v\n%s", jerr, out)
	}
	want := map[string]string{
		"hook_claude_pre_tool_use_1": "fails closed",
		"hook_claude_pre_tool_use_2": "fails open",
		"hook_gemini_pre_tool_use_3": "fails closed",
	}
	for _, r := range list.Hooks {
		if want[r.Extension] != r.OnFailure || r.At != "tool_execute_before" {
			t.Errorf("row %+v", r)
		}
		if r.Extension == "hook_claude_pre_tool_use_2" && !strings.Contains(r.Problem, "absent.sh does not exist") {
			t.Errorf("the missing script is not named: %+v", r)
		}
		if r.Extension == "hook_gemini_pre_tool_use_3" && r.TimeoutMS != 1500 {
			t.Errorf("Gemini's timeout is %d ms, want 1500", r.TimeoutMS)
		}
	}
	if len(list.Hooks) != len(want) {
		t.Errorf("%d hooks listed, want %d:\n%s", len(list.Hooks), len(want), out)
	}

	for _, c := range []struct {
		payload, want string
		fails         bool
	}{
		{`{"tool_name":"Bash","tool_input":{"command":"rm -rf /"}}`, "decision at PreToolUse: block: no rm -rf", false},
		{`{"tool_name":"run_shell_command","tool_input":{"command":"pwd"}}`, `decision at PreToolUse: go ahead; input becomes {"command":"ls"}`, false},
		{`{"tool_name":"Write","tool_input":{"file_path":"/tmp/x","content":"y"}}`, "FAILED (missing)", true},
	} {
		out, err := run(c.payload, "hooks", "test", "BeforeTool", "--input", "-")
		if !strings.Contains(out, c.want) || (err != nil) != c.fails {
			t.Errorf("hooks test on %s: %v\n%s\nwant %q", c.payload, err, out, c.want)
		}
	}
	if out, err := run("not json", "hooks", "test", "PreToolUse", "--input", "-"); err == nil || !strings.Contains(out, "is not a JSON object") {
		t.Errorf("a bad payload: %v %s", err, out)
	}
	if out, err := run("", "hooks", "test", "Whenever", "--input", "-"); err == nil || !strings.Contains(out, "not an event") {
		t.Errorf("an unknown event: %v %s", err, out)
	}
}
