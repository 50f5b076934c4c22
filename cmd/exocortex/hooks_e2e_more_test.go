package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/core/loop"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// The hook scripts of TestCommandHooksAtCompressionAndApprovals.
var moreHookScripts = map[string]string{
	// PreCompact: records its payload, and asks the summary to keep a line.
	"precompact.py": "#!/usr/bin/env python3\nimport json, sys\nd = json.load(sys.stdin)\nopen(sys.argv[1], 'w').write(json.dumps(d))\n" +
		"print(json.dumps({'hookSpecificOutput': {'hookEventName': 'PreCompact', 'additionalContext': 'KEEP-THIS: the deploy key is in vault ' + d['trigger']}}))\n",
	// PermissionRequest: denies rm, in Claude Code's decision format.
	"permission.py": "#!/usr/bin/env python3\nimport json, sys\nd = json.load(sys.stdin)\nassert d['hook_event_name'] == 'PermissionRequest'\n" +
		"if 'rm ' in d['tool_input']['command']:\n    print(json.dumps({'hookSpecificOutput': {'hookEventName': 'PermissionRequest', 'decision': {'behavior': 'deny', 'message': 'PERM-DENIED by policy (' + d['permission_mode'] + ')'}}}))\n",
	"allow.sh": "#!/bin/sh\ncat > /dev/null\necho '{\"hookSpecificOutput\":{\"hookEventName\":\"PermissionRequest\",\"decision\":{\"behavior\":\"allow\",\"message\":\"PERM-ALLOWED\"}}}'\n",
	// Two slow PreToolUse hooks: each writes when it started and ended, and
	// rewrites the command its own way.
	"slowA.py":     slowHook("A", "echo FIRST"),
	"slowB.py":     slowHook("B", "echo SECOND"),
	"allowfast.sh": "#!/bin/sh\ncat > /dev/null\necho '{\"hookSpecificOutput\":{\"hookEventName\":\"PreToolUse\",\"permissionDecision\":\"allow\"}}'\n",
	"denyslow.sh":  "#!/bin/sh\ncat > /dev/null\nsleep 1\necho 'DENY-WINS: the second hook says no' >&2\nexit 2\n",
}

func slowHook(name, command string) string {
	return "#!/usr/bin/env python3\nimport json, sys, time, os\nd = json.load(sys.stdin)\nout = os.path.join(os.path.dirname(sys.argv[0]), 'ts_" + name + "')\n" +
		"start = time.time()\ntime.sleep(2)\nopen(out, 'w').write('%f %f %s' % (start, time.time(), d['tool_input']['command']))\n" +
		"print(json.dumps({'hookSpecificOutput': {'hookEventName': 'PreToolUse', 'updatedInput': {'command': '" + command + "'}}}))\n"
}

// span reads a slow hook's start and end, and the command it saw.
func span(t *testing.T, dir, name string) (start, end float64, saw string) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "ts_"+name))
	if err != nil {
		t.Fatalf("hook %s did not run: %v", name, err)
	}
	f := strings.SplitN(string(b), " ", 3)
	if len(f) != 3 {
		t.Fatalf("ts_%s = %q", name, b)
	}
	if err := json.Unmarshal([]byte(f[0]), &start); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(f[1]), &end); err != nil {
		t.Fatal(err)
	}
	return start, end, f[2]
}

// TestCommandHooksAtCompressionAndApprovals runs the real binary with real
// Python and shell hook scripts at the hooks added for PreCompact,
// PermissionRequest, and the matching hooks that run at once.
func TestCommandHooksAtCompressionAndApprovals(t *testing.T) {
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("python3 is not installed: the Python hook scripts cannot run")
	}
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	long := hookShell("seq 1 2500") + hookShell("seq 2501 5000") + hookShell("seq 5001 7500") + hookShell("seq 7501 10000")
	for _, c := range []struct {
		name  string
		run   hookRun
		check func(t *testing.T, r hookRunResult)
	}{
		{"PreCompact runs before the context budget compresses, and its context is kept in the summary",
			hookRun{files: map[string]string{"~/.claude/settings.json": claudeHooks("PreCompact", "auto", "python3 $DIR/precompact.py $DIR/precompact.json", "")},
				args:   []string{"--num-ctx", "8192"},
				script: long + hookAnswer("ok", "KEEP-THIS: the deploy key is in vault auto")},
			func(t *testing.T, r hookRunResult) {
				kept := false
				for _, e := range r.evs {
					if e.Type == loop.EventCompression && strings.Contains(e.Compression.Added, "KEEP-THIS") {
						kept = true
					}
				}
				if !kept {
					t.Error("no compression kept the hook's context")
				}
				b, err := os.ReadFile(filepath.Join(r.dir, "precompact.json"))
				var p map[string]any
				if err != nil || json.Unmarshal(b, &p) != nil || p["hook_event_name"] != "PreCompact" || p["trigger"] != "auto" {
					t.Errorf("PreCompact's payload: %v %s", err, b)
				}
				if _, ok := p["custom_instructions"]; !ok {
					t.Errorf("PreCompact's payload has no custom_instructions: %s", b)
				}
			}},
		{"PermissionRequest denies a held call in yolo, and the model reads its message",
			hookRun{files: map[string]string{"~/.claude/settings.json": claudeHooks("PermissionRequest", "Bash", "python3 $DIR/permission.py", "")},
				script: hookShell("rm -rf $DIR/victim; echo RAN-MARK") + hookAnswer("ok", "PERM-DENIED by policy (bypassPermissions)")},
			func(t *testing.T, r hookRunResult) {
				if r.has(loop.EventToolResult, "RAN-MARK") {
					t.Error("the denied rm ran")
				}
				if !r.has(loop.EventApproval, "refused by hook_claude_permission_request_1") {
					t.Error("the approval event does not name the hook that refused")
				}
			}},
		{"PermissionRequest allows a held call without an operator to ask",
			hookRun{files: map[string]string{"~/.claude/settings.json": claudeHooks("PermissionRequest", "Bash", "$DIR/allow.sh", "")},
				approval: "default",
				script:   hookShell("rm -rf $DIR/victim; echo RAN-MARK") + hookAnswer("ok", "")},
			func(t *testing.T, r hookRunResult) {
				if !r.has(loop.EventToolResult, "RAN-MARK") {
					t.Error("the allowed rm did not run")
				}
				if !r.has(loop.EventApproval, "PERM-ALLOWED") {
					t.Error("the approval event does not carry the hook's message")
				}
			}},
		{"a PermissionRequest hook that cannot run denies the held call (fails closed), in yolo",
			hookRun{files: map[string]string{"~/.claude/settings.json": claudeHooks("PermissionRequest", "Bash", "$DIR/absent.sh", "")},
				script: hookShell("rm -rf $DIR/victim; echo RAN-MARK") + hookAnswer("ok", "guards fail closed")},
			func(t *testing.T, r hookRunResult) {
				if r.has(loop.EventToolResult, "RAN-MARK") {
					t.Error("the rm ran although its guard could not")
				}
				if !r.reported("absent.sh does not exist") {
					t.Error("the missing script is not reported")
				}
			}},
		{"two slow PreToolUse hooks run at once, and their input changes apply in order",
			hookRun{files: map[string]string{"~/.claude/settings.json": `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "python3 $DIR/slowA.py"}, {"type": "command", "command": "python3 $DIR/slowB.py"}]}]}}`},
				script: hookShell("echo original") + hookAnswer("ok", "SECOND")},
			func(t *testing.T, r hookRunResult) {
				aStart, aEnd, aSaw := span(t, r.dir, "A")
				bStart, bEnd, bSaw := span(t, r.dir, "B")
				if aStart >= bEnd || bStart >= aEnd {
					t.Errorf("the hooks ran one after the other: A %.3f-%.3f, B %.3f-%.3f", aStart, aEnd, bStart, bEnd)
				}
				if aSaw != "echo original" || bSaw != "echo original" {
					t.Errorf("the hooks saw %q and %q, want the call's own input", aSaw, bSaw)
				}
				if !r.has(loop.EventToolResult, "SECOND") || r.has(loop.EventToolResult, "FIRST") {
					t.Error("the later hook's input change was not applied over the earlier one's")
				}
			}},
		{"deny wins: an allow and a later deny block the call with the deny's reason",
			hookRun{files: map[string]string{"~/.claude/settings.json": `{"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "$DIR/allowfast.sh"}, {"type": "command", "command": "$DIR/denyslow.sh"}]}]}}`},
				script: hookShell("echo SHOULD-NOT-RUN") + hookAnswer("ok", "DENY-WINS")},
			func(t *testing.T, r hookRunResult) {
				if r.has(loop.EventToolResult, "SHOULD-NOT-RUN") {
					t.Error("the denied call ran")
				}
			}},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.run.scripts = moreHookScripts
			r := runWithHooks(t, exe, c.run)
			if r.err != nil {
				t.Fatalf("exocortex run: %v\nstderr:\n%s", r.err, r.stderr)
			}
			c.check(t, r)
		})
	}
}
