package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
)

// serveResponses answers an OpenAI Responses API request (what codex speaks)
// with one streamed assistant message: the scripted server has only chat
// completions, and this is the least codex exec needs to finish a turn.
func serveResponses(w http.ResponseWriter, r *http.Request, text string) {
	_, _ = io.Copy(io.Discard, r.Body)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	msg := map[string]any{"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
		"content": []any{map[string]any{"type": "output_text", "text": text, "annotations": []any{}}}}
	events := []map[string]any{
		{"type": "response.created", "response": map[string]any{"id": "resp_1", "status": "in_progress"}},
		{"type": "response.output_item.added", "output_index": 0, "item": msg},
		{"type": "response.output_text.delta", "output_index": 0, "content_index": 0, "item_id": "msg_1", "delta": text},
		{"type": "response.output_item.done", "output_index": 0, "item": msg},
		{"type": "response.completed", "response": map[string]any{"id": "resp_1", "status": "completed", "output": []any{msg},
			"usage": map[string]any{"input_tokens": 1, "output_tokens": 1, "total_tokens": 2,
				"input_tokens_details": map[string]any{"cached_tokens": 0}, "output_tokens_details": map[string]any{"reasoning_tokens": 0}}}},
	}
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
