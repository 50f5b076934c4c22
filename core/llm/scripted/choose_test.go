package scripted

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"
)

// TestOpenAIServerChoose: with Choose set, each request's reply is made from
// the request (here: a call to the first tool it offers, or text when it offers
// none), numbered from 0, with the defaults filled in; ok false answers as
// when the replies run out.
func TestOpenAIServerChoose(t *testing.T) {
	var seen []int
	srv, err := NewOpenAIServer(Script{Choose: func(req OpenAIRequest, i int) (Reply, bool) {
		seen = append(seen, i)
		switch {
		case i == 2:
			return Reply{}, false
		case len(req.Tools) > 0:
			return Reply{ToolCalls: []ToolCall{{Name: req.Tools[0].Function.Name, Arguments: json.RawMessage(`{"path":"a.txt"}`)}}}, true
		}
		return Reply{Content: "no tools"}, true
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	type message struct {
		Content   string `json:"content"`
		ToolCalls []struct {
			Function struct{ Name, Arguments string } `json:"function"`
		} `json:"tool_calls"`
	}
	post := func(body map[string]any) (int, message) {
		t.Helper()
		b, _ := json.Marshal(body)
		resp, err := http.Post(srv.URL()+"/chat/completions", "application/json", bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out struct {
			Choices []struct {
				Message message `json:"message"`
			} `json:"choices"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&out)
		if len(out.Choices) == 0 {
			return resp.StatusCode, message{}
		}
		return resp.StatusCode, out.Choices[0].Message
	}
	msgs := []map[string]any{{"role": "user", "content": "hi"}}
	tools := []map[string]any{{"type": "function", "function": map[string]any{"name": "view", "parameters": map[string]any{"type": "object"}}}}
	tests := []struct {
		name     string
		body     map[string]any
		status   int
		content  string
		toolName string
	}{
		{"tools offered", map[string]any{"model": srv.Model(), "messages": msgs, "tools": tools}, http.StatusOK, "", "view"},
		{"no tools", map[string]any{"model": srv.Model(), "messages": msgs}, http.StatusOK, "no tools", ""},
		{"no reply", map[string]any{"model": srv.Model(), "messages": msgs}, http.StatusInternalServerError, "", ""},
	}
	for _, tc := range tests {
		status, m := post(tc.body)
		if status != tc.status || m.Content != tc.content {
			t.Errorf("%s: status %d content %q, want %d %q", tc.name, status, m.Content, tc.status, tc.content)
		}
		if tc.toolName != "" && (len(m.ToolCalls) != 1 || m.ToolCalls[0].Function.Name != tc.toolName || m.ToolCalls[0].Function.Arguments != `{"path":"a.txt"}`) {
			t.Errorf("%s: tool calls %+v, want one call to %s", tc.name, m.ToolCalls, tc.toolName)
		}
	}
	if len(seen) != 3 || seen[0] != 0 || seen[2] != 2 {
		t.Errorf("Choose saw requests %v, want 0, 1, 2", seen)
	}
	if n := len(srv.Requests()); n != 3 {
		t.Errorf("%d requests recorded, want 3", n)
	}
}
