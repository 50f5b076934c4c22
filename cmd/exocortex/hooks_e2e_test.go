package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/core/loop"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// hookRun is one `exocortex run --json` with command hooks configured: files
// maps a path under the operator's home directory ("~/") or the project
// ("./") to its text; "$DIR" in a text is the test's script directory.
type hookRun struct {
	files  map[string]string
	config string
	script string
	// plain runs without --json: the reports are on stderr.
	plain bool
	// approval is the approval mode (yolo when empty); args are added.
	approval string
	args     []string
	// scripts are more hook scripts for $DIR, by name.
	scripts map[string]string
}

type hookRunResult struct {
	// dir holds the test's scripts and what they write; project is the
	// session's project directory.
	dir, project string
	evs          []loop.Event
	stderr       string
	err          error
}

func (r hookRunResult) has(kind, sub string) bool {
	for _, e := range r.evs {
		if e.Type == kind && (strings.Contains(e.Text, sub) || strings.Contains(e.Error, sub) || strings.Contains(e.Result, sub)) {
			return true
		}
	}
	return false
}

// reported: sub is on stderr, or in a notice or a hook's error of --json.
func (r hookRunResult) reported(sub string) bool {
	return strings.Contains(r.stderr, sub) || r.has(loop.EventNotice, sub) || r.has(loop.EventHook, sub)
}

func (r hookRunResult) count(kind, code string) int {
	n := 0
	for _, e := range r.evs {
		if e.Type == kind && e.Code == code {
			n++
		}
	}
	return n
}

func runWithHooks(t *testing.T, exe string, r hookRun) hookRunResult {
	t.Helper()
	userHome, home, project, dir := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	for _, s := range []struct{ name, text string }{
		{"block.sh", "#!/bin/sh\ngrep -q forbidden && { echo 'BLOCKED-BY-SHELL-HOOK: no forbidden commands' >&2; exit 2; }\nexit 0\n"},
		{"deny.py", "#!/usr/bin/env python3\nimport json, sys\nd = json.load(sys.stdin)\nif 'forbidden' in d['tool_input']['command']:\n    print(json.dumps({'decision': 'deny', 'reason': 'DENIED-BY-PYTHON-HOOK ' + d['tool_name']}))\n"},
		{"rewrite.py", "#!/usr/bin/env python3\nimport json, sys\nd = json.load(sys.stdin)\nprint(json.dumps({'hookSpecificOutput': {'hookEventName': 'PreToolUse', 'permissionDecision': 'allow', 'updatedInput': {'command': d['tool_input']['command'].replace('original', 'REWRITTEN')}}}))\n"},
		{"context.py", "#!/usr/bin/env python3\nimport json, sys\nd = json.load(sys.stdin)\nassert d['hook_event_name'] == 'UserPromptSubmit'\nopen(d['transcript_path'])\nprint(json.dumps({'hookSpecificOutput': {'hookEventName': 'UserPromptSubmit', 'additionalContext': 'CTXMARK for ' + d['prompt']}}))\n"},
		{"post.sh", "#!/bin/sh\ncat > /dev/null\necho '{\"hookSpecificOutput\":{\"hookEventName\":\"PostToolUse\",\"additionalContext\":\"POSTNOTE: the shell ran\"}}'\n"},
		{"stop.py", "#!/usr/bin/env python3\nimport json, sys\nd = json.load(sys.stdin)\nassert d['last_assistant_message']\nlines = open(d['transcript_path']).read().splitlines()\nassert json.loads(lines[0])['message']['role'] == 'user'\nprint(json.dumps({'decision': 'block', 'reason': 'KEEPGOING (stop_hook_active=%s)' % d['stop_hook_active']}))\n"},
		{"slow.sh", "#!/bin/sh\nsleep 30\n"},
		{"warn.sh", "#!/bin/sh\necho 'WARN-EXIT-ONE jq is missing' >&2\nexit 1\n"},
	} {
		if err := os.WriteFile(filepath.Join(dir, s.name), []byte(s.text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, text := range r.scripts {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for name, text := range r.files {
		p := filepath.Join(userHome, strings.TrimPrefix(name, "~/"))
		if rest, ok := strings.CutPrefix(name, "./"); ok {
			p = filepath.Join(project, rest)
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(strings.ReplaceAll(text, "$DIR", dir)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	config := strings.ReplaceAll(r.config, "$PROJECT", project)
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(config), 0o644); err != nil {
		t.Fatal(err)
	}
	script := filepath.Join(dir, "script.yaml")
	if err := os.WriteFile(script, []byte("model: hooks\nreplies:\n"+strings.ReplaceAll(r.script, "$DIR", dir)), 0o644); err != nil {
		t.Fatal(err)
	}
	// yolo: the hooks hold whatever the approval mode.
	mode := r.approval
	if mode == "" {
		mode = "yolo"
	}
	args := append([]string{"run", "-p", "Do the task.", "--json", "--approval", mode, "--model", "script:" + script}, r.args...)
	if r.plain {
		args = slices.DeleteFunc(args, func(a string) bool { return a == "--json" })
	}
	cmd := exec.Command(exe, args...)
	cmd.Dir = project
	cmd.Env = append(os.Environ(), "HOME="+userHome, "EXOCORTEX_HOME="+home)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if r.plain {
		return hookRunResult{dir: dir, project: project, stderr: stderr.String(), err: err}
	}
	return hookRunResult{dir: dir, project: project, evs: readEvents(t, out), stderr: stderr.String(), err: err}
}

// shellCall is a scripted model reply running cmd in the terminal.
func hookShell(cmd string) string {
	return "  - content: '{\"thoughts\":[\"run\"],\"tool_name\":\"code_execution\",\"tool_args\":{\"runtime\":\"terminal\",\"code\":\"" + cmd + "\"}}'\n"
}

// answer is a scripted final response; expect, when set, must be in the
// request that gets it.
func hookAnswer(text, expect string) string {
	s := "  - content: '{\"thoughts\":[\"answer\"],\"tool_name\":\"response\",\"tool_args\":{\"text\":\"" + text + "\"}}'\n"
	if expect != "" {
		s += "    expect_in_request: '" + expect + "'\n"
	}
	return s
}

func claudeHooks(event, matcher, command, extra string) string {
	return `{"hooks": {"` + event + `": [{"matcher": "` + matcher + `", "hooks": [{"type": "command", "command": "` + command + `"` + extra + `}]}]}}`
}

// TestCommandHooksEndToEnd runs the real binary, its built-in command-hook
// plugin and real shell and Python hook scripts in each dialect against the
// scripted model: what each hook decides reaches the model's next request.
func TestCommandHooksEndToEnd(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed: the Python hook scripts cannot run")
	}
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	for _, c := range []struct {
		name  string
		run   hookRun
		check func(t *testing.T, r hookRunResult)
	}{
		{"claude: exit 2 blocks a shell command and the reason reaches the model",
			hookRun{files: map[string]string{"~/.claude/settings.json": claudeHooks("PreToolUse", "Bash", "$DIR/block.sh", "")},
				script: hookShell("echo forbidden") + hookAnswer("ok", "BLOCKED-BY-SHELL-HOOK")},
			func(t *testing.T, r hookRunResult) {
				if !r.has(loop.EventSignal, "BLOCKED-BY-SHELL-HOOK") || r.has(loop.EventToolResult, "forbidden") {
					t.Error("the shell command was not blocked with the hook's reason")
				}
			}},
		{"gemini: a Python hook's JSON deny at BeforeTool",
			hookRun{files: map[string]string{"~/.gemini/settings.json": `{"hooks": {"BeforeTool": [{"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "python3 $DIR/deny.py", "timeout": 20000}]}]}}`},
				script: hookShell("echo forbidden") + hookAnswer("ok", "DENIED-BY-PYTHON-HOOK run_shell_command")},
			func(t *testing.T, r hookRunResult) {
				if r.has(loop.EventToolResult, "forbidden") {
					t.Error("the denied command ran")
				}
			}},
		{"codex in a trusted project: updatedInput rewrites the command",
			hookRun{files: map[string]string{"./.codex/hooks.json": claudeHooks("PreToolUse", "Bash", "python3 $DIR/rewrite.py", "")},
				config: "trusted_projects: [\"$PROJECT\"]\n",
				script: hookShell("echo original") + hookAnswer("ok", "REWRITTEN")},
			func(t *testing.T, r hookRunResult) {
				if !r.has(loop.EventToolResult, "REWRITTEN") {
					t.Error("the rewritten command did not run")
				}
			}},
		{"claude: UserPromptSubmit's additionalContext reaches the prompt",
			hookRun{files: map[string]string{"~/.claude/settings.json": claudeHooks("UserPromptSubmit", "", "python3 $DIR/context.py", "")},
				script: hookAnswer("ok", "CTXMARK for Do the task.")},
			nil},
		{"claude: a PostToolUse note reaches the model",
			hookRun{files: map[string]string{"~/.claude/settings.json": claudeHooks("PostToolUse", "Bash", "$DIR/post.sh", "")},
				script: hookShell("echo hi") + hookAnswer("ok", "POSTNOTE: the shell ran")},
			nil},
		{"claude: a Stop hook keeps the agent going up to its cap",
			hookRun{files: map[string]string{"~/.claude/settings.json": claudeHooks("Stop", "", "python3 $DIR/stop.py", "")},
				config: "command_hooks:\n  stop_continues: 2\n",
				script: hookAnswer("first", "") + hookAnswer("second", "KEEPGOING (stop_hook_active=False)") + hookAnswer("third", "KEEPGOING (stop_hook_active=True)")},
			func(t *testing.T, r hookRunResult) {
				if n := r.count(loop.EventNotice, loop.NoticeResumeCap); n != 1 {
					t.Errorf("%d resume-cap notices, want 1", n)
				}
				last := ""
				for _, e := range r.evs {
					if e.Type == loop.EventMonologueEnd {
						last = e.Text
					}
				}
				if last != "third" {
					t.Errorf("the monologue ended with %q, want the third answer", last)
				}
			}},
		{"claude: SessionStart's plain stdout is context in the prompt, and SessionEnd runs when the session ends",
			hookRun{files: map[string]string{"~/.claude/settings.json": `{"hooks": {"SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": "echo SESSIONCTX: the build is green"}]}],
				"SessionEnd": [{"hooks": [{"type": "command", "command": "cat > $DIR/ended.json"}]}]}}`},
				script: hookAnswer("ok", "SESSIONCTX: the build is green")},
			func(t *testing.T, r hookRunResult) {
				b, err := os.ReadFile(filepath.Join(r.dir, "ended.json"))
				if err != nil || !strings.Contains(string(b), `"hook_event_name":"SessionEnd"`) {
					t.Errorf("SessionEnd did not run: %v %s", err, b)
				}
			}},
		{"a missing script fails closed: the shell command is stopped and the operator told",
			hookRun{files: map[string]string{"~/.claude/settings.json": claudeHooks("PreToolUse", "Bash", "$DIR/absent.sh", "")},
				script: hookShell("echo SHOULD-NOT-RUN") + hookAnswer("ok", "guards fail closed")},
			func(t *testing.T, r hookRunResult) {
				if r.has(loop.EventToolResult, "SHOULD-NOT-RUN") {
					t.Error("the command ran although its guard could not")
				}
				if !r.reported("absent.sh does not exist") || !r.has(loop.EventHook, "missing") {
					t.Errorf("the missing script is not reported on stderr and in --json:\n%s", r.stderr)
				}
			}},
		{"a UserPromptSubmit hook that cannot run holds the message back (fails closed)",
			hookRun{files: map[string]string{"~/.claude/settings.json": claudeHooks("UserPromptSubmit", "", "$DIR/absent.sh", "")},
				script: hookAnswer("ok", "blocked by command hook hook_claude_user_prompt_submit_1: the hook could not run")},
			func(t *testing.T, r hookRunResult) {
				if !r.reported("the operator's message was held back") {
					t.Error("the held-back message is not reported")
				}
			}},
		{"fail_open: a missing script lets the command run, and is reported",
			hookRun{files: map[string]string{"~/.claude/settings.json": claudeHooks("PreToolUse", "Bash", "$DIR/absent.sh", `, "fail_open": true`)},
				script: hookShell("echo RAN-OK") + hookAnswer("ok", "RAN-OK")},
			func(t *testing.T, r hookRunResult) {
				if !r.has(loop.EventHook, "missing") {
					t.Error("the failed hook is not in --json")
				}
			}},
		{"gemini: a millisecond timeout stops a slow hook, and the call fails closed",
			hookRun{files: map[string]string{"~/.gemini/settings.json": `{"hooks": {"BeforeTool": [{"matcher": "run_shell_command", "hooks": [{"type": "command", "command": "$DIR/slow.sh", "timeout": 300}]}]}}`},
				script: hookShell("echo SHOULD-NOT-RUN") + hookAnswer("ok", "timed_out")},
			func(t *testing.T, r hookRunResult) {
				if r.has(loop.EventToolResult, "SHOULD-NOT-RUN") || !r.has(loop.EventHook, "within its timeout of 300ms") {
					t.Error("the slow hook's timeout did not stop the call")
				}
			}},
		{"another exit is a warning on stderr, and the call goes ahead",
			hookRun{files: map[string]string{"~/.claude/settings.json": claudeHooks("PreToolUse", "Bash", "$DIR/warn.sh", "")},
				script: hookShell("echo RAN-OK") + hookAnswer("ok", "RAN-OK")},
			func(t *testing.T, r hookRunResult) {
				if !r.reported("WARN-EXIT-ONE") {
					t.Errorf("the warning is not on stderr:\n%s", r.stderr)
				}
			}},
		{"without --json, every report is a line on run's stderr",
			hookRun{files: map[string]string{"~/.claude/settings.json": `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "$DIR/warn.sh"}, {"type": "command", "command": "$DIR/absent.sh"}]}], "SubagentStart": [{"hooks": [{"type": "command", "command": "true"}]}]}}`},
				script: hookShell("echo SHOULD-NOT-RUN") + hookAnswer("ok", "guards fail closed"), plain: true},
			func(t *testing.T, r hookRunResult) {
				for _, want := range []string{"WARN-EXIT-ONE", "absent.sh does not exist", "SubagentStart: is not an event"} {
					if !strings.Contains(r.stderr, want) {
						t.Errorf("stderr lacks %q:\n%s", want, r.stderr)
					}
				}
			}},
		{"an untrusted project's hooks do not run, and the operator is told",
			hookRun{files: map[string]string{"./.claude/settings.json": claudeHooks("PreToolUse", "Bash", "$DIR/block.sh", "")},
				script: hookShell("echo forbidden") + hookAnswer("ok", "forbidden")},
			func(t *testing.T, r hookRunResult) {
				if !r.reported("the project is not trusted") {
					t.Errorf("the skipped project file is not reported:\n%s", r.stderr)
				}
			}},
		{"a configuration that is not JSON is reported",
			hookRun{files: map[string]string{"~/.claude/settings.json": `{"hooks": `},
				script: hookAnswer("ok", "")},
			func(t *testing.T, r hookRunResult) {
				if !r.reported("is not valid JSON") {
					t.Errorf("the broken file is not reported:\n%s", r.stderr)
				}
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := runWithHooks(t, exe, c.run)
			if r.err != nil {
				t.Fatalf("exocortex run: %v\nstderr:\n%s", r.err, r.stderr)
			}
			if c.check != nil {
				c.check(t, r)
			}
		})
	}
}
