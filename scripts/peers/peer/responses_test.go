package peer

import (
	"encoding/json"
	"testing"
)

// TestToChat: a Responses API request becomes the chat request it stands for.
func TestToChat(t *testing.T) {
	raw := `{"model":"m","instructions":"be brief",
	 "input":[{"type":"message","role":"developer","content":[{"type":"input_text","text":"env"}]},
	  {"type":"message","role":"user","content":[{"type":"input_text","text":"read a"},{"type":"input_text","text":" and b"}]},
	  {"type":"reasoning","summary":[]},
	  {"type":"function_call","name":"shell","arguments":"{\"command\":[\"cat\",\"a\"]}","call_id":"c1"},
	  {"type":"function_call","name":"shell","arguments":"{}","call_id":"c2"},
	  {"type":"function_call_output","call_id":"c1","output":"A"},
	  {"type":"custom_tool_call","name":"apply_patch","input":"*** Begin","call_id":"c3"}],
	 "tools":[{"type":"function","name":"shell","description":"run","parameters":{"type":"object"}},
	  {"type":"custom","name":"apply_patch","description":"patch","format":{"type":"grammar"}},
	  {"type":"web_search"}]}`
	var rr ResponsesRequest
	if err := json.Unmarshal([]byte(raw), &rr); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(ToChat(rr))
	if err != nil {
		t.Fatal(err)
	}
	req, err := DecodeChat(b)
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		role, content string
		calls         int
	}{
		{"system", "be brief", 0}, {"system", "env", 0}, {"user", "read a and b", 0},
		{"assistant", "", 2}, {"tool", "A", 0}, {"assistant", "", 1},
	}
	if len(req.Messages) != len(want) {
		t.Fatalf("%d messages, want %d: %+v", len(req.Messages), len(want), req.Messages)
	}
	for i, w := range want {
		m := req.Messages[i]
		if m.Role != w.role || string(m.Content) != w.content || len(m.ToolCalls) != w.calls {
			t.Errorf("message %d: %s %q with %d calls, want %s %q with %d", i, m.Role, m.Content, len(m.ToolCalls), w.role, w.content, w.calls)
		}
	}
	var names []string
	for _, tl := range req.Tools {
		names = append(names, tl.Function.Name)
	}
	if len(names) != 3 || names[0] != "shell" || names[1] != "apply_patch" || names[2] != "web_search" {
		t.Errorf("tools %v, want shell, apply_patch, web_search", names)
	}
	c, err := NewCounter()
	if err != nil {
		t.Fatal(err)
	}
	if n := c.Request(req); n < 40 || n > 200 {
		t.Errorf("o200k count %d, want a few dozen tokens", n)
	}
}
