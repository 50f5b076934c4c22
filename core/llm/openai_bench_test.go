package llm_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/exocortex/exocortex/core/llm"
	"github.com/exocortex/exocortex/core/llm/scripted"
)

// BenchmarkOpenAIStream compares the OpenAI-compatible provider (openai-go:
// its request builder, middleware and retry loop, its SSE decoder and chunk
// type) with a hand-written client doing the least the streaming path needs
// (one POST, a line reader, a small struct per event). Both stream the same
// 4 KB reply in 1,024 chunks of 4 characters and in one chunk: the
// difference between the two is the per-chunk cost, the one-chunk case the
// fixed cost per call. ttft-µs is the time from the call to the first text
// handed to the callback.
//
// Two servers: the scripted OpenAI-compatible server (whose own JSON
// encoding costs the same for both clients) and the same stream recorded
// once and replayed as bytes, which leaves only the client's work.
func BenchmarkOpenAIStream(b *testing.B) {
	content := strings.Repeat("abcd", 1024)
	for _, server := range []string{"scripted", "recorded"} {
		for _, chunk := range []int{4, len(content)} {
			for _, client := range []string{"openai-go", "hand-written"} {
				b.Run(fmt.Sprintf("%s/chunks_%d/%s", server, len(content)/chunk, client), func(b *testing.B) {
					url, model := streamServer(b, server, content, chunk)
					var chat func(context.Context, func(string)) (string, error)
					if client == "openai-go" {
						p, err := llm.NewOpenAI(llm.OpenAIConfig{BaseURL: url})
						if err != nil {
							b.Fatal(err)
						}
						req := llm.ChatRequest{Model: model, Messages: user("go")}
						chat = func(ctx context.Context, on func(string)) (string, error) {
							r, err := p.Chat(ctx, req, func(c llm.Chunk) error { on(c.Content); return nil })
							return r.Content, err
						}
					} else {
						h := handClient{http: &http.Client{}, base: url}
						chat = func(ctx context.Context, on func(string)) (string, error) { return h.chat(ctx, model, "go", on) }
					}
					var ttft time.Duration
					b.SetBytes(int64(len(content)))
					b.ReportAllocs()
					for b.Loop() {
						start, first := time.Now(), time.Duration(0)
						got, err := chat(context.Background(), func(s string) {
							if first == 0 && s != "" {
								first = time.Since(start)
							}
						})
						if err != nil || got != content {
							b.Fatalf("%d bytes, %v", len(got), err)
						}
						ttft += first
					}
					b.ReportMetric(float64(ttft.Microseconds())/float64(b.N), "ttft-µs")
				})
			}
		}
	}
}

// streamServer serves content in chunks of chunk characters: from the
// scripted server (as many replies as a benchmark can ask for), or as the
// bytes that server sent once, replayed for every request.
func streamServer(b *testing.B, kind, content string, chunk int) (url, model string) {
	b.Helper()
	script := scripted.Script{Replies: []scripted.Reply{{Content: content, ChunkSize: chunk}}}
	if kind == "scripted" {
		script.Replies = make([]scripted.Reply, 200_000)
		for i := range script.Replies {
			script.Replies[i] = scripted.Reply{Content: content, ChunkSize: chunk}
		}
	}
	srv, err := scripted.NewOpenAIServer(script)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { srv.Close() })
	if kind == "scripted" {
		return srv.URL(), srv.Model()
	}
	body, _ := json.Marshal(map[string]any{"model": srv.Model(), "stream": true, "stream_options": map[string]any{"include_usage": true},
		"messages": []any{map[string]any{"role": "user", "content": "go"}}})
	res, err := http.Post(srv.URL()+"/chat/completions", "application/json", bytes.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	recorded, err := io.ReadAll(res.Body)
	res.Body.Close()
	if err != nil {
		b.Fatal(err)
	}
	replay := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		w.Write(recorded)
	}))
	b.Cleanup(replay.Close)
	return replay.URL + "/v1", srv.Model()
}

// handClient is the hand-written baseline: a POST and a server-sent-events
// reader, no retries, no middleware. Benchmark code only.
type handClient struct {
	http *http.Client
	base string
}

type handChunk struct {
	Choices []struct {
		Delta struct {
			Content          string `json:"content"`
			ReasoningContent string `json:"reasoning_content"`
			ToolCalls        []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
}

func (h handClient) chat(ctx context.Context, model, prompt string, on func(string)) (string, error) {
	body, err := json.Marshal(map[string]any{"model": model, "stream": true, "stream_options": map[string]any{"include_usage": true},
		"messages": []any{map[string]any{"role": "user", "content": prompt}}})
	if err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.base+"/chat/completions", bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := h.http.Do(req)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return "", fmt.Errorf("HTTP %d", res.StatusCode)
	}
	var text strings.Builder
	rd := bufio.NewReader(res.Body)
	for {
		line, err := rd.ReadBytes('\n')
		if err != nil {
			return text.String(), errors.New("stream ended without [DONE]")
		}
		data, ok := bytes.CutPrefix(bytes.TrimSpace(line), []byte("data:"))
		if !ok {
			continue
		}
		data = bytes.TrimSpace(data)
		if bytes.Equal(data, []byte("[DONE]")) {
			return text.String(), nil
		}
		var ch handChunk
		if err := json.Unmarshal(data, &ch); err != nil {
			return text.String(), err
		}
		for _, c := range ch.Choices {
			if c.Delta.Content != "" {
				text.WriteString(c.Delta.Content)
				on(c.Delta.Content)
			}
		}
	}
}
