package cmdhooks

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/exocortex/exocortex/toolsettings"
)

func write(t testing.TB, dir, name, text string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestLoadReadsEachDialect(t *testing.T) {
	dir := t.TempDir()
	claude := write(t, dir, "claude.json", `{"hooks":{
		"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"a.sh","timeout":5},{"type":"command","command":"b.sh","fail_open":true}]}],
		"Stop":[{"hooks":[{"type":"command","command":"stop.sh"}]}],
		"PreCompact":[{"matcher":"auto","hooks":[{"type":"command","command":"c.sh"}]}],
		"PermissionRequest":[{"matcher":"Bash","hooks":[{"type":"command","command":"p.sh","fail_open":true}]}],
		"Notification":[{"hooks":[{"type":"command","command":"n.sh"}]}],
		"Bogus":[{"hooks":[{"type":"command","command":"c.sh"}]}],
		"UserPromptSubmit":[{"hooks":[{"type":"prompt","prompt":"judge"},{"type":"command","command":""}]}],
		"PostToolUse":[{"matcher":"(","hooks":[{"type":"command","command":"x"}]}]}}`)
	gemini := write(t, dir, "gemini.json", `{"hooks":{"enabled":true,
		"BeforeTool":[{"matcher":"run_shell_command","hooks":[{"type":"command","command":"g.sh","timeout":250,"name":"guard"}]}],
		"AfterAgent":[{"hooks":[{"type":"command","command":"after.sh"}]}],
		"PreCompress":[{"hooks":[{"type":"command","command":"pc.sh"}]}],
		"BeforeModel":[{"hooks":[{"type":"command","command":"m.sh"}]}]}}`)
	codex := write(t, dir, "codex.json", `{"hooks":{"PreToolUse":[{"matcher":"Bash","hooks":[{"type":"command","command":"codex.sh","timeout":2}]}]}}`)
	broken := write(t, dir, "broken.json", `{"hooks": {`)
	hooks, probs := Load([]toolsettings.HookFile{
		{Path: claude, Dialect: toolsettings.DialectClaude, Scope: "user"},
		{Path: gemini, Dialect: toolsettings.DialectGemini, Scope: "user"},
		{Path: codex, Dialect: toolsettings.DialectCodex, Scope: "project"},
		{Path: broken, Dialect: toolsettings.DialectClaude, Scope: "project"},
		{Path: filepath.Join(dir, "absent.json"), Dialect: toolsettings.DialectClaude, Scope: "user"},
	})
	type want struct {
		ext, event, native, at string
		timeout                time.Duration
		failOpen               bool
	}
	wants := []want{
		{"hook_claude_pre_tool_use_1", PreToolUse, PreToolUse, "tool_execute_before", 5 * time.Second, false},
		{"hook_claude_pre_tool_use_2", PreToolUse, PreToolUse, "tool_execute_before", DefaultTimeout, true},
		{"hook_claude_stop_1", Stop, Stop, "message_loop_end", DefaultTimeout, false},
		{"hook_claude_pre_compact_1", PreCompact, PreCompact, "history_compress_before", DefaultTimeout, false},
		{"hook_gemini_pre_compact_2", PreCompact, "PreCompress", "history_compress_before", DefaultTimeout, false},
		{"hook_claude_permission_request_1", PermissionRequest, PermissionRequest, "tool_approval_request", DefaultTimeout, true},
		{"hook_claude_notification_1", Notification, Notification, "operator_notification", DefaultTimeout, false},
		{"hook_gemini_stop_2", Stop, "AfterAgent", "message_loop_end", DefaultTimeout, false},
		{"hook_gemini_pre_tool_use_3", PreToolUse, "BeforeTool", "tool_execute_before", 250 * time.Millisecond, false},
		{"hook_codex_pre_tool_use_4", PreToolUse, PreToolUse, "tool_execute_before", 2 * time.Second, false},
	}
	if len(hooks) != len(wants) {
		t.Fatalf("got %d hooks, want %d: %+v", len(hooks), len(wants), hooks)
	}
	byExt := map[string]Hook{}
	for _, h := range hooks {
		byExt[h.Ext()] = h
	}
	for _, w := range wants {
		h, ok := byExt[w.ext]
		if !ok {
			t.Errorf("no hook %s among %v", w.ext, byExt)
			continue
		}
		if h.Event != w.event || h.NativeEvent != w.native || h.At() != w.at || h.Timeout != w.timeout || h.FailOpen != w.failOpen {
			t.Errorf("%s = %+v, want %+v", w.ext, h, w)
		}
	}
	// Every entry that is not run is a problem naming its file and event.
	wantProbs := []string{"Bogus", `type "prompt"`, "no command", "not a valid regular expression", "BeforeModel", "broken.json: is not valid JSON"}
	all := ""
	for _, p := range probs {
		all += p.String() + "\n"
	}
	for _, w := range wantProbs {
		if !strings.Contains(all, w) {
			t.Errorf("problems lack %q:\n%s", w, all)
		}
	}
	if len(probs) != len(wantProbs) {
		t.Errorf("%d problems, want %d:\n%s", len(probs), len(wantProbs), all)
	}
}

func TestMatcher(t *testing.T) {
	for _, c := range []struct {
		matcher string
		yes, no []string
	}{
		{"", []string{"Bash", "anything"}, nil},
		{"*", []string{"Bash", "mcp__a__b"}, nil},
		{"Bash", []string{"Bash"}, []string{"bash", "BashX", "Read"}},
		{"Write|Edit", []string{"Write", "Edit"}, []string{"Read", "Write|Edit"}},
		{"mcp__github__.*", []string{"mcp__github__create_issue"}, []string{"mcp__gitlab__x", "xmcp__github__y"}},
		{"Notebook.*", []string{"NotebookEdit"}, []string{"Read"}},
		{"run_shell_command|write_file", []string{"run_shell_command", "write_file"}, []string{"read_file"}},
	} {
		h := Hook{Matcher: c.matcher}
		for _, y := range c.yes {
			if !h.Matches(y) {
				t.Errorf("matcher %q does not select %q", c.matcher, y)
			}
		}
		for _, n := range c.no {
			if h.Matches(n) {
				t.Errorf("matcher %q selects %q", c.matcher, n)
			}
		}
	}
}
