package peer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"

	"github.com/exocortex/exocortex/core/llm/scripted"
)

// ServeResponses answers an OpenAI Responses API request (what codex speaks)
// with one streamed assistant message, text, without asking the scripted
// server: the least codex exec needs to finish a turn.
func ServeResponses(w http.ResponseWriter, r *http.Request, text string) {
	_, _ = io.Copy(io.Discard, r.Body)
	msg := map[string]any{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
		"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}}
	streamResponse(w, []map[string]any{msg})
}

// ResponsesRequest is the part of a Responses API request the bridge reads.
type ResponsesRequest struct {
	Model        string            `json:"model"`
	Instructions string            `json:"instructions"`
	Input        []json.RawMessage `json:"input"`
	Tools        []json.RawMessage `json:"tools"`
}

type responsesItem struct {
	Type      string          `json:"type"`
	Role      string          `json:"role"`
	Content   json.RawMessage `json:"content"`
	Name      string          `json:"name"`
	Arguments string          `json:"arguments"`
	Input     string          `json:"input"`
	CallID    string          `json:"call_id"`
	Output    json.RawMessage `json:"output"`
}

// partsText joins the text of a content given as a string or a list of parts.
func partsText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	_ = json.Unmarshal(raw, &parts)
	var sb strings.Builder
	for _, p := range parts {
		sb.WriteString(p.Text)
	}
	return sb.String()
}

// ToChat turns a Responses API request into the chat completions request it
// stands for: the instructions as the system message, each input item as a
// message (consecutive function calls as one assistant message with tool
// calls, their outputs as tool messages), and the function tools (a custom
// tool's format as its parameters, other tool types by their type).
func ToChat(rr ResponsesRequest) map[string]any {
	var msgs []map[string]any
	if rr.Instructions != "" {
		msgs = append(msgs, map[string]any{"role": "system", "content": rr.Instructions})
	}
	for _, raw := range rr.Input {
		var it responsesItem
		if json.Unmarshal(raw, &it) != nil {
			continue
		}
		switch it.Type {
		case "message", "":
			role := it.Role
			if role == "developer" {
				role = "system"
			}
			msgs = append(msgs, map[string]any{"role": role, "content": partsText(it.Content)})
		case "function_call", "custom_tool_call":
			args := it.Arguments
			if it.Type == "custom_tool_call" {
				b, _ := json.Marshal(map[string]string{"input": it.Input}) //nolint:errchkjson // a string
				args = string(b)
			}
			tc := map[string]any{"id": it.CallID, "type": "function", "function": map[string]any{"name": it.Name, "arguments": args}}
			if n := len(msgs); n > 0 && msgs[n-1]["role"] == "assistant" && msgs[n-1]["tool_calls"] != nil {
				msgs[n-1]["tool_calls"] = append(msgs[n-1]["tool_calls"].([]any), tc)
				continue
			}
			msgs = append(msgs, map[string]any{"role": "assistant", "content": "", "tool_calls": []any{tc}})
		case "function_call_output", "custom_tool_call_output":
			msgs = append(msgs, map[string]any{"role": "tool", "tool_call_id": it.CallID, "content": partsText(it.Output)})
		}
	}
	var tools []any
	for _, raw := range rr.Tools {
		var t struct {
			Type        string          `json:"type"`
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
			Format      json.RawMessage `json:"format"`
		}
		if json.Unmarshal(raw, &t) != nil {
			continue
		}
		name, params := t.Name, t.Parameters
		if t.Type != "function" {
			if name == "" {
				name = t.Type
			}
			params = t.Format
		}
		if len(params) == 0 {
			params = json.RawMessage(`{}`)
		}
		tools = append(tools, map[string]any{"type": "function", "function": map[string]any{"name": name, "description": t.Description, "parameters": params}})
	}
	out := map[string]any{"model": rr.Model, "messages": msgs, "stream": false}
	if len(tools) > 0 {
		out["tools"] = tools
	}
	return out
}

// Bridge answers a Responses API request through the scripted server's chat
// completions at chatURL (…/v1/chat/completions): the request as ToChat makes
// it, the chat reply streamed back as Responses events (a message, or a
// function_call item per tool call). seen, when not nil, is given the chat
// request before it is sent.
func Bridge(w http.ResponseWriter, r *http.Request, chatURL string, seen func(body []byte)) {
	var rr ResponsesRequest
	if err := json.NewDecoder(r.Body).Decode(&rr); err != nil {
		http.Error(w, "responses request: "+err.Error(), http.StatusBadRequest)
		return
	}
	body, err := json.Marshal(ToChat(rr))
	if err != nil {
		http.Error(w, "responses request: "+err.Error(), http.StatusBadRequest)
		return
	}
	if seen != nil {
		seen(body)
	}
	resp, err := http.Post(chatURL, "application/json", bytes.NewReader(body)) //nolint:noctx // bounded by the run
	if err != nil {
		http.Error(w, "scripted server: "+err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		w.WriteHeader(resp.StatusCode)
		_, _ = w.Write(raw)
		return
	}
	var cc struct {
		Choices []struct {
			Message struct {
				Content   string `json:"content"`
				ToolCalls []struct {
					ID       string `json:"id"`
					Function struct {
						Name      string `json:"name"`
						Arguments string `json:"arguments"`
					} `json:"function"`
				} `json:"tool_calls"`
			} `json:"message"`
		} `json:"choices"`
	}
	if err := json.Unmarshal(raw, &cc); err != nil || len(cc.Choices) == 0 {
		http.Error(w, fmt.Sprintf("scripted server: unreadable reply %q", Tail(string(raw), 200)), http.StatusBadGateway)
		return
	}
	m := cc.Choices[0].Message
	var items []map[string]any
	if m.Content != "" || len(m.ToolCalls) == 0 {
		items = append(items, map[string]any{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
			"content": []any{map[string]any{"type": "output_text", "text": m.Content, "annotations": []any{}}}})
	}
	for i, tc := range m.ToolCalls {
		items = append(items, map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_%d", i+1), "status": "completed",
			"call_id": tc.ID, "name": tc.Function.Name, "arguments": tc.Function.Arguments})
	}
	streamResponse(w, items)
}

// streamResponse writes the events of a completed response with items.
func streamResponse(w http.ResponseWriter, items []map[string]any) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	events := []map[string]any{{"type": "response.created", "response": map[string]any{"id": "resp_1", "status": "in_progress"}}}
	out := make([]any, 0, len(items))
	for i, it := range items {
		events = append(events, map[string]any{"type": "response.output_item.added", "output_index": i, "item": it})
		if it["type"] == "message" {
			text := it["content"].([]any)[0].(map[string]any)["text"]
			events = append(events, map[string]any{"type": "response.output_text.delta", "output_index": i, "content_index": 0, "item_id": it["id"], "delta": text})
		}
		events = append(events, map[string]any{"type": "response.output_item.done", "output_index": i, "item": it})
		out = append(out, it)
	}
	events = append(events, map[string]any{"type": "response.completed", "response": map[string]any{"id": "resp_1", "status": "completed", "output": out,
		"usage": map[string]any{"input_tokens": 1, "output_tokens": 1, "total_tokens": 2,
			"input_tokens_details": map[string]any{"cached_tokens": 0}, "output_tokens_details": map[string]any{"reasoning_tokens": 0}}}})
	fl, _ := w.(http.Flusher)
	for _, e := range events {
		b, err := json.Marshal(e)
		if err != nil {
			return
		}
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", e["type"], b)
		if fl != nil {
			fl.Flush()
		}
	}
}

// DecodeChat reads a chat completions request body as the scripted server does.
func DecodeChat(body []byte) (scripted.OpenAIRequest, error) {
	var req scripted.OpenAIRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return req, fmt.Errorf("chat request: %w", err)
	}
	return req, nil
}
