package tui

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestShellEscapeReviewedByCommandHooks: the operator's !command is
// reviewed by the command hooks as Bash, with tool_input.command: a real
// shell PreToolUse hook blocks it (the reason shown to the operator, the
// command not run), a real Python PostToolUse hook's note is shown below
// the output, and a hook that cannot run blocks the command (fails closed).
func TestShellEscapeReviewedByCommandHooks(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	dir := t.TempDir()
	for name, text := range map[string]string{
		"block.sh": "#!/bin/sh\ngrep -q forbidden && { echo 'BLOCKED-BY-OPERATOR-HOOK no forbidden files' >&2; exit 2; }\nexit 0\n",
		"post.py": "#!/usr/bin/env python3\nimport json, sys\nd = json.load(sys.stdin)\nassert d['tool_name'] == 'Bash'\n" +
			"print(json.dumps({'hookSpecificOutput': {'hookEventName': 'PostToolUse', 'additionalContext': 'POSTNOTE-OP for ' + d['tool_input']['command']}}))\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name, hooks, command string
		printed              []string
		notRun               string
	}{
		{"a PreToolUse block stops the command with its reason",
			`{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "` + dir + `/block.sh"}]}]}}`,
			"!touch forbidden-file", []string{"BLOCKED-BY-OPERATOR-HOOK no forbidden files", "was not run"}, "forbidden-file"},
		{"a PostToolUse note is shown below the output",
			`{"hooks": {"PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "python3 ` + dir + `/post.py"}]}]}}`,
			"!ls -a", []string{"POSTNOTE-OP for ls -a"}, ""},
		{"a PreToolUse hook that cannot run blocks the command (fails closed)",
			`{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "` + dir + `/absent.sh"}]}]}}`,
			"!touch never-made", []string{"guards fail closed"}, "never-made"},
	} {
		t.Run(c.name, func(t *testing.T) {
			hooks := filepath.Join(t.TempDir(), "settings.json")
			if err := os.WriteFile(hooks, []byte(c.hooks), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Setenv("EXO_TEST_HOOKS", hooks)
			e := newEnv(t, "optools", "command-hooks")
			eng, _ := e.engine(t, "hooks")
			u := start(t, eng)
			u.submit(c.command)
			u.idle()
			u.waitPrinted(c.printed...)
			if c.notRun != "" {
				if _, err := os.Stat(filepath.Join(e.work, c.notRun)); err == nil {
					t.Errorf("the blocked command ran: %s exists", c.notRun)
				}
			}
		})
	}
}

// TestApprovalHooksInTheTerminal: a call held for approval in the terminal
// runs the command hooks: a Notification hook (real Python) is told before
// the operator is asked, with notification_type permission_prompt, and a
// PermissionRequest hook (real shell) that allows lets the call run without
// the dialog.
func TestApprovalHooksInTheTerminal(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	dir := t.TempDir()
	notified := filepath.Join(dir, "notified.json")
	for name, text := range map[string]string{
		"notify.py": "#!/usr/bin/env python3\nimport json, sys\nd = json.load(sys.stdin)\nopen(" + strconv.Quote(notified) + ", 'w').write(json.dumps(d))\n",
		"allow.sh":  "#!/bin/sh\ncat > /dev/null\necho '{\"hookSpecificOutput\":{\"hookEventName\":\"PermissionRequest\",\"decision\":{\"behavior\":\"allow\",\"message\":\"TERMINAL-ALLOW\"}}}'\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Run("Notification is told before the operator is asked", func(t *testing.T) {
		hooks := filepath.Join(t.TempDir(), "settings.json")
		if err := os.WriteFile(hooks, []byte(`{"hooks": {"Notification": [{"matcher": "permission_prompt", "hooks": [{"type": "command", "command": "python3 `+dir+`/notify.py"}]}]}}`), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Setenv("EXO_TEST_HOOKS", hooks)
		e := newEnv(t, "command-hooks")
		eng, _ := e.engine(t, "n1", approvalScript(1)...)
		u := start(t, eng)
		u.submit("clean up")
		u.waitFor("the approval dialog", func(m *Model) bool { return len(m.dialogs) > 0 })
		b, err := os.ReadFile(notified)
		var p map[string]any
		if err != nil || json.Unmarshal(b, &p) != nil {
			t.Fatalf("the Notification hook did not run before the dialog: %v %s", err, b)
		}
		if p["hook_event_name"] != "Notification" || p["notification_type"] != "permission_prompt" || !strings.Contains(fmt.Sprint(p["message"]), "shell_echo") {
			t.Errorf("Notification payload %s", b)
		}
		u.typeText("n")
		u.idle()
		u.waitPrinted("✗ deny")
	})
	t.Run("PermissionRequest's allow lets the held call run without asking", func(t *testing.T) {
		hooks := filepath.Join(t.TempDir(), "settings.json")
		if err := os.WriteFile(hooks, []byte(`{"hooks": {"PermissionRequest": [{"matcher": "shell_echo", "hooks": [{"type": "command", "command": "`+dir+`/allow.sh"}]}]}}`), 0o644); err != nil {
			t.Fatal(err)
		}
		t.Setenv("EXO_TEST_HOOKS", hooks)
		e := newEnv(t, "command-hooks")
		eng, _ := e.engine(t, "p1", approvalScript(1)...)
		u := start(t, eng)
		u.submit("clean up")
		u.idle()
		u.waitPrinted("ran: rm -rf /tmp/x", "TERMINAL-ALLOW", "done")
		var asked bool
		u.inspect(func(m *Model) { asked = len(m.dialogs) > 0 })
		if asked {
			t.Error("the operator was asked although the hook allowed the call")
		}
	})
}

// TestManualCompressionRunsPreCompact: /context compress runs the PreCompact
// hooks with trigger manual and the operator's words as custom_instructions;
// a real Python hook's context is kept in the summary, and a real shell
// hook's exit 2 holds the compression back with its reason.
func TestManualCompressionRunsPreCompact(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed")
	}
	dir := t.TempDir()
	payload := filepath.Join(dir, "precompact.json")
	for name, text := range map[string]string{
		"keep.py": "#!/usr/bin/env python3\nimport json, sys\nd = json.load(sys.stdin)\nopen(" + strconv.Quote(payload) + ", 'w').write(json.dumps(d))\n" +
			"print(json.dumps({'hookSpecificOutput': {'hookEventName': 'PreCompact', 'additionalContext': 'KEEP-MANUAL ' + d['custom_instructions']}}))\n",
		"hold.sh": "#!/bin/sh\ncat > /dev/null\necho 'HOLD-IT: the review is not done' >&2\nexit 2\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		name, command string
		printed       []string
	}{
		{"a PreCompact hook's context is kept", "python3 " + dir + "/keep.py", []string{"compressed", "KEEP-MANUAL keep the API names"}},
		{"a PreCompact hook's exit 2 holds it back", dir + "/hold.sh", []string{"not compressed", "HOLD-IT: the review is not done"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			hooks := filepath.Join(t.TempDir(), "settings.json")
			if err := os.WriteFile(hooks, []byte(`{"hooks": {"PreCompact": [{"matcher": "manual", "hooks": [{"type": "command", "command": "`+c.command+`"}]}]}}`), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Setenv("EXO_TEST_HOOKS", hooks)
			e := newEnv(t, "command-hooks")
			eng, _ := e.engine(t, "c1", answer("first answer"), answer("second answer"))
			u := start(t, eng)
			u.submit("hello")
			u.idle()
			u.waitPrinted("first answer")
			u.submit("again")
			u.idle()
			u.waitPrinted("second answer")
			u.submit("/context compress keep the API names")
			u.idle()
			u.waitPrinted(c.printed...)
		})
	}
	b, err := os.ReadFile(payload)
	var p map[string]any
	if err != nil || json.Unmarshal(b, &p) != nil || p["trigger"] != "manual" || p["custom_instructions"] != "keep the API names" || p["hook_event_name"] != "PreCompact" {
		t.Errorf("PreCompact's payload: %v %s", err, b)
	}
}
