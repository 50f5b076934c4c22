package cmdhooks

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/exocortex/exocortex/toolsettings"
)

func TestTranslateBothWays(t *testing.T) {
	for _, c := range []struct {
		dialect, tool, args string
		wantName            string
		wantInput           map[string]any
		updated             map[string]any
		wantBack            map[string]any
	}{
		{toolsettings.DialectClaude, "code_execution", `{"runtime":"terminal","code":"ls","session":1}`, "Bash",
			map[string]any{"command": "ls"}, map[string]any{"command": "ls -la"},
			map[string]any{"runtime": "terminal", "code": "ls -la", "session": 1.0}},
		{toolsettings.DialectGemini, "code_execution", `{"runtime":"terminal","code":"ls"}`, "run_shell_command",
			map[string]any{"command": "ls"}, map[string]any{"command": "pwd"},
			map[string]any{"runtime": "terminal", "code": "pwd"}},
		{toolsettings.DialectCodex, "code_execution", `{"runtime":"terminal","code":"ls"}`, "Bash",
			map[string]any{"command": "ls"}, nil, map[string]any{"runtime": "terminal", "code": "ls"}},
		{toolsettings.DialectClaude, "text_editor", `{"action":"read","path":"a.txt","line_from":3,"line_to":5}`, "Read",
			map[string]any{"file_path": "/proj/a.txt", "offset": 3.0, "limit": 3.0}, nil,
			map[string]any{"action": "read", "path": "/proj/a.txt", "line_from": 3.0, "line_to": 5.0}},
		{toolsettings.DialectClaude, "text_editor", `{"action":"write","path":"/x/b.txt","content":"hi"}`, "Write",
			map[string]any{"file_path": "/x/b.txt", "content": "hi"}, map[string]any{"content": "HI"},
			map[string]any{"action": "write", "path": "/x/b.txt", "content": "HI"}},
		{toolsettings.DialectClaude, "text_editor", `{"action":"patch","path":"c.go","old_text":"a","new_text":"b"}`, "Edit",
			map[string]any{"file_path": "/proj/c.go", "old_string": "a", "new_string": "b"}, map[string]any{"new_string": "c"},
			map[string]any{"action": "patch", "path": "/proj/c.go", "old_text": "a", "new_text": "c"}},
		{toolsettings.DialectGemini, "text_editor", `{"action":"patch","path":"c.go","old_text":"a","new_text":"b"}`, "replace",
			map[string]any{"file_path": "/proj/c.go", "old_string": "a", "new_string": "b"}, nil,
			map[string]any{"action": "patch", "path": "/proj/c.go", "old_text": "a", "new_text": "b"}},
		{toolsettings.DialectGemini, "text_editor", `{"action":"read","path":"a"}`, "read_file",
			map[string]any{"file_path": "/proj/a"}, nil, map[string]any{"action": "read", "path": "/proj/a"}},
		{toolsettings.DialectGemini, "text_editor", `{"action":"write","path":"a","content":"x"}`, "write_file",
			map[string]any{"file_path": "/proj/a", "content": "x"}, nil, map[string]any{"action": "write", "path": "/proj/a", "content": "x"}},
		{toolsettings.DialectClaude, "mcp__github__create_issue", `{"title":"t"}`, "mcp__github__create_issue",
			map[string]any{"title": "t"}, map[string]any{"body": "b"}, map[string]any{"title": "t", "body": "b"}},
		{toolsettings.DialectClaude, "code_execution", `{"runtime":"python","code":"print(1)"}`, "code_execution",
			map[string]any{"runtime": "python", "code": "print(1)"}, nil, map[string]any{"runtime": "python", "code": "print(1)"}},
	} {
		call, err := Translate(c.dialect, c.tool, c.args, "/proj")
		if err != nil {
			t.Fatal(err)
		}
		if call.Name != c.wantName || !reflect.DeepEqual(call.Input, c.wantInput) {
			t.Errorf("%s %s %s: got %s %v, want %s %v", c.dialect, c.tool, c.args, call.Name, call.Input, c.wantName, c.wantInput)
		}
		back, err := Back(call, c.args, c.updated)
		if err != nil {
			t.Fatal(err)
		}
		var got map[string]any
		if err := json.Unmarshal([]byte(back), &got); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, c.wantBack) {
			t.Errorf("%s %s back with %v: %v, want %v", c.dialect, c.tool, c.updated, got, c.wantBack)
		}
	}
	if _, err := Translate("claude", "x", "[1]", ""); err == nil {
		t.Error("arguments that are not an object were accepted")
	}
}
