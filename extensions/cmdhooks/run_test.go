package cmdhooks

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/exocortex/exocortex/toolsettings"
)

// script writes an executable hook script into dir.
func script(t testing.TB, dir, name, text string) string {
	t.Helper()
	return write(t, dir, name, text)
}

func needPython(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed: the Python hook scripts are not run")
	}
}

// TestHookScripts runs real shell and Python hook scripts, in each dialect,
// through the runner and the decision reader, as a session does.
func TestHookScripts(t *testing.T) {
	// The host's settings are in the plugin's environment, never in a hook's.
	t.Setenv(toolsettings.EnvSettings, `{"tools":{}}`)
	dir := t.TempDir()
	env := Env{SessionID: "s1", TranscriptPath: filepath.Join(dir, "t.jsonl"), Project: dir, Approval: "yolo"}
	shellCall := map[string]any{"tool_name": "Bash", "tool_input": map[string]any{"command": "rm -rf /"}, "tool_use_id": "c1"}
	for _, c := range []struct {
		name, dialect, event, file, text string
		python                           bool
		fields                           map[string]any
		check                            func(t *testing.T, d Decision)
	}{
		{name: "exit 2 blocks with stderr", dialect: toolsettings.DialectClaude, event: PreToolUse, file: "block.sh",
			text: "#!/bin/sh\ngrep -q 'rm -rf' && { echo 'rm -rf is not allowed' >&2; exit 2; }\nexit 0\n", fields: shellCall,
			check: func(t *testing.T, d Decision) {
				if !d.Block || d.Reason != "rm -rf is not allowed" {
					t.Errorf("%+v", d)
				}
			}},
		{name: "JSON deny", dialect: toolsettings.DialectClaude, event: PreToolUse, file: "deny.py", python: true,
			text: "#!/usr/bin/env python3\nimport json,sys\nd=json.load(sys.stdin)\nassert d['hook_event_name']=='PreToolUse' and d['permission_mode']=='bypassPermissions' and d['cwd']\n" +
				"print(json.dumps({'hookSpecificOutput':{'hookEventName':'PreToolUse','permissionDecision':'deny','permissionDecisionReason':'no '+d['tool_input']['command']}}))\n",
			fields: shellCall,
			check: func(t *testing.T, d Decision) {
				if !d.Block || d.Reason != "no rm -rf /" {
					t.Errorf("%+v", d)
				}
			}},
		{name: "Gemini deny decision", dialect: toolsettings.DialectGemini, event: "BeforeTool", file: "gdeny.py", python: true,
			text:   "#!/usr/bin/env python3\nimport json,sys\nd=json.load(sys.stdin)\nassert 'timestamp' in d\nprint(json.dumps({'decision':'deny','reason':'gemini says no'}))\n",
			fields: map[string]any{"tool_name": "run_shell_command", "tool_input": map[string]any{"command": "ls"}},
			check: func(t *testing.T, d Decision) {
				if !d.Block || d.Reason != "gemini says no" {
					t.Errorf("%+v", d)
				}
			}},
		{name: "updatedInput", dialect: toolsettings.DialectCodex, event: PreToolUse, file: "rewrite.sh",
			text:   "#!/bin/sh\ncat >/dev/null\necho '{\"hookSpecificOutput\":{\"permissionDecision\":\"allow\",\"updatedInput\":{\"command\":\"echo safe\"}}}'\n",
			fields: shellCall,
			check: func(t *testing.T, d Decision) {
				if d.Block || !d.Allow || d.Input["command"] != "echo safe" {
					t.Errorf("%+v", d)
				}
			}},
		{name: "Gemini tool_input merge", dialect: toolsettings.DialectGemini, event: "BeforeTool", file: "gmerge.sh",
			text:   "#!/bin/sh\ncat >/dev/null\necho '{\"hookSpecificOutput\":{\"tool_input\":{\"command\":\"ls -la\"}}}'\n",
			fields: map[string]any{"tool_name": "run_shell_command", "tool_input": map[string]any{"command": "ls"}},
			check: func(t *testing.T, d Decision) {
				if d.Input["command"] != "ls -la" {
					t.Errorf("%+v", d)
				}
			}},
		{name: "ask", dialect: toolsettings.DialectClaude, event: PreToolUse, file: "ask.sh",
			text:   "#!/bin/sh\necho '{\"hookSpecificOutput\":{\"permissionDecision\":\"ask\",\"permissionDecisionReason\":\"are you sure\"}}'\n",
			fields: shellCall,
			check: func(t *testing.T, d Decision) {
				if !d.Ask || d.Block || d.Reason != "are you sure" {
					t.Errorf("%+v", d)
				}
			}},
		{name: "additionalContext at UserPromptSubmit", dialect: toolsettings.DialectClaude, event: UserPromptSubmit, file: "ctx.py", python: true,
			text:   "#!/usr/bin/env python3\nimport json,sys\nd=json.load(sys.stdin)\nprint(json.dumps({'hookSpecificOutput':{'hookEventName':'UserPromptSubmit','additionalContext':'ctx for '+d['prompt']}}))\n",
			fields: map[string]any{"prompt": "hello"},
			check: func(t *testing.T, d Decision) {
				if d.Context != "ctx for hello" {
					t.Errorf("%+v", d)
				}
			}},
		{name: "plain stdout is context at UserPromptSubmit", dialect: toolsettings.DialectClaude, event: UserPromptSubmit, file: "plain.sh",
			text: "#!/bin/sh\necho 'branch: main'\n", fields: map[string]any{"prompt": "x"},
			check: func(t *testing.T, d Decision) {
				if d.Context != "branch: main" {
					t.Errorf("%+v", d)
				}
			}},
		{name: "PostToolUse block is a note", dialect: toolsettings.DialectClaude, event: PostToolUse, file: "post.sh",
			text:   "#!/bin/sh\necho '{\"decision\":\"block\",\"reason\":\"lint failed: fix line 3\"}'\n",
			fields: map[string]any{"tool_name": "Write", "tool_response": map[string]any{"content": "ok"}},
			check: func(t *testing.T, d Decision) {
				if d.Block || d.Context != "lint failed: fix line 3" {
					t.Errorf("%+v", d)
				}
			}},
		{name: "updatedToolOutput", dialect: toolsettings.DialectClaude, event: PostToolUse, file: "out.sh",
			text:   "#!/bin/sh\necho '{\"hookSpecificOutput\":{\"updatedToolOutput\":\"redacted\"}}'\n",
			fields: map[string]any{"tool_name": "Bash"},
			check: func(t *testing.T, d Decision) {
				if d.Output == nil || *d.Output != "redacted" {
					t.Errorf("%+v", d)
				}
			}},
		{name: "Stop block", dialect: toolsettings.DialectClaude, event: Stop, file: "stop.py", python: true,
			text:   "#!/usr/bin/env python3\nimport json,sys\nd=json.load(sys.stdin)\nif not d['stop_hook_active']:\n  print(json.dumps({'decision':'block','reason':'run the tests first'}))\n",
			fields: map[string]any{"stop_hook_active": false, "last_assistant_message": "done"},
			check: func(t *testing.T, d Decision) {
				if !d.Block || d.Reason != "run the tests first" {
					t.Errorf("%+v", d)
				}
			}},
		{name: "other exit is a warning", dialect: toolsettings.DialectClaude, event: PreToolUse, file: "warn.sh",
			text: "#!/bin/sh\necho 'jq missing' >&2\nexit 1\n", fields: shellCall,
			check: func(t *testing.T, d Decision) {
				if d.Block || len(d.Warnings) != 1 || !strings.Contains(d.Warnings[0], "exited 1: jq missing") {
					t.Errorf("%+v", d)
				}
			}},
		{name: "text where JSON is read is a warning", dialect: toolsettings.DialectClaude, event: PostToolUse, file: "chatty.sh",
			text: "#!/bin/sh\necho 'formatted 3 files'\n", fields: map[string]any{"tool_name": "Write"},
			check: func(t *testing.T, d Decision) {
				if len(d.Warnings) != 1 || !strings.Contains(d.Warnings[0], "formatted 3 files") || d.Block || d.Context != "" {
					t.Errorf("%+v", d)
				}
			}},
		{name: "systemMessage and continue false", dialect: toolsettings.DialectClaude, event: PostToolUse, file: "halt.sh",
			text: "#!/bin/sh\necho '{\"continue\":false,\"stopReason\":\"enough\",\"systemMessage\":\"heads up\"}'\n", fields: map[string]any{"tool_name": "Bash"},
			check: func(t *testing.T, d Decision) {
				if !d.Halt || d.HaltReason != "enough" || len(d.Warnings) != 1 || !strings.Contains(d.Warnings[0], "heads up") {
					t.Errorf("%+v", d)
				}
			}},
		{name: "environment", dialect: toolsettings.DialectClaude, event: PreToolUse, file: "env.sh",
			text:   "#!/bin/sh\n[ \"$CLAUDE_PROJECT_DIR\" = \"$GEMINI_PROJECT_DIR\" ] && [ -n \"$CLAUDE_PROJECT_DIR\" ] && [ \"$(pwd)\" = \"$CLAUDE_PROJECT_DIR\" ] && [ -z \"$EXOCORTEX_SETTINGS\" ] || { echo \"bad env $CLAUDE_PROJECT_DIR\" >&2; exit 2; }\n",
			fields: shellCall,
			check: func(t *testing.T, d Decision) {
				if d.Block {
					t.Errorf("%+v", d)
				}
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			if c.python {
				needPython(t)
			}
			ev, _ := EventOf(c.event)
			h := Hook{Event: ev, NativeEvent: c.event, Dialect: c.dialect, Command: script(t, dir, c.file, c.text), Timeout: 30 * time.Second, Index: 1}
			b := &Bridge{Settings: toolsettings.CommandHooks{}.WithDefaults()}
			d, err := b.Test(context.Background(), h, env, c.fields)
			if err != nil {
				t.Fatal(err)
			}
			c.check(t, d)
		})
	}
}

// TestHookFailures: each way a hook can fail is a Failure of its kind,
// never a silent pass.
func TestHookFailures(t *testing.T) {
	dir := t.TempDir()
	notExec := filepath.Join(dir, "noexec.sh")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\nexit 0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, command string
		timeout       time.Duration
		event         string
		want          FailureKind
	}{
		{"missing", filepath.Join(dir, "absent.sh"), time.Minute, PreToolUse, Missing},
		{"not executable", notExec, time.Minute, PreToolUse, NotExecutable},
		{"timed out (a Gemini timeout of 200 ms)", script(t, dir, "slow.sh", "#!/bin/sh\nsleep 30\n"), 200 * time.Millisecond, PreToolUse, TimedOut},
		{"crashed", script(t, dir, "crash.sh", "#!/bin/sh\nkill -9 $$\n"), time.Minute, PreToolUse, Crashed},
		{"output over the limit", script(t, dir, "loud.sh", "#!/bin/sh\nhead -c 5000 /dev/zero | tr '\\0' x\n"), time.Minute, PostToolUse, TooMuchOutput},
		{"broken JSON", script(t, dir, "broken.sh", "#!/bin/sh\necho '{\"decision\": '\n"), time.Minute, PreToolUse, Unparseable},
		{"unknown decision", script(t, dir, "odd.sh", "#!/bin/sh\necho '{\"decision\":\"maybe\"}'\n"), time.Minute, PreToolUse, Unparseable},
	} {
		t.Run(c.name, func(t *testing.T) {
			h := Hook{Event: c.event, NativeEvent: c.event, Dialect: toolsettings.DialectClaude, Command: c.command, Timeout: c.timeout, Index: 1}
			b := &Bridge{Settings: toolsettings.CommandHooks{MaxOutputBytes: 1000}}
			_, err := b.Test(context.Background(), h, Env{Project: dir}, map[string]any{"tool_name": "Bash"})
			var f *Failure
			if !errors.As(err, &f) || f.Kind != c.want {
				t.Fatalf("err = %v, want a %s failure", err, c.want)
			}
			if !strings.Contains(err.Error(), h.Ext()) || !strings.Contains(err.Error(), c.command) {
				t.Errorf("the failure does not name the hook and its command: %v", err)
			}
			if c.want == Missing || c.want == NotExecutable {
				if Check(h, dir) == "" {
					t.Errorf("Check finds nothing wrong with %s", c.command)
				}
			}
		})
	}
}

func TestCombineInOrder(t *testing.T) {
	out := "last"
	d := Combine([]Decision{
		{Context: "one", Input: map[string]any{"command": "a", "x": 1}},
		{Block: true, Reason: "first no", Context: "two"},
		{Ask: true, Reason: "ask"},
		{Block: true, Reason: "second no", Input: map[string]any{"command": "b"}, Output: &out, Warnings: []string{"w"}},
	})
	if !d.Block || d.Reason != "first no\nsecond no" || d.Context != "one\ntwo" || d.Input["command"] != "b" || d.Input["x"] != 1 || *d.Output != "last" || len(d.Warnings) != 1 {
		t.Errorf("%+v", d)
	}
}
