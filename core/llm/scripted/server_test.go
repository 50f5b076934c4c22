package scripted

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/exocortex/exocortex/core/llm"
)

func start(t *testing.T, s Script) *Server {
	t.Helper()
	srv, err := NewServer(s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

func client(t *testing.T, srv *Server) *api.Client {
	t.Helper()
	u, err := url.Parse(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	return api.NewClient(u, &http.Client{})
}

func post(t *testing.T, srv *Server, path, body string) *http.Response {
	t.Helper()
	resp, err := http.Post(srv.URL()+path, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

// TestStreamShape reads the raw NDJSON stream and checks it has the shape
// Ollama sends: several chunks, then a done object with the metrics.
func TestStreamShape(t *testing.T) {
	srv := start(t, Script{Replies: []Reply{{Thinking: "hmm", Content: `{"tool_name": "response"}`, ChunkSize: 5}}})
	resp := post(t, srv, "/api/chat", `{"model": "scripted", "messages": [{"role": "user", "content": "hi there"}], "options": {"num_ctx": 4096}}`)
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "application/x-ndjson" {
		t.Fatalf("status %d, content type %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var lines []map[string]any
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		lines = append(lines, m)
	}
	// 1 thinking chunk + 5 content chunks of 5 runes + the done object.
	if len(lines) != 7 {
		t.Fatalf("%d lines, want 7: %v", len(lines), lines)
	}
	var content strings.Builder
	for i, l := range lines[:len(lines)-1] {
		for _, k := range []string{"model", "created_at", "message", "done"} {
			if _, ok := l[k]; !ok {
				t.Errorf("chunk %d lacks %q: %v", i, k, l)
			}
		}
		if l["done"] != false || l["model"] != "scripted" {
			t.Errorf("chunk %d: %v", i, l)
		}
		msg := l["message"].(map[string]any)
		if msg["role"] != "assistant" {
			t.Errorf("chunk %d role %v", i, msg["role"])
		}
		if c, ok := msg["content"].(string); ok {
			content.WriteString(c)
		}
	}
	if lines[0]["message"].(map[string]any)["thinking"] != "hmm" {
		t.Errorf("first chunk should carry the thinking: %v", lines[0])
	}
	if content.String() != `{"tool_name": "response"}` {
		t.Errorf("content = %q", content.String())
	}
	final := lines[len(lines)-1]
	if final["done"] != true || final["done_reason"] != "stop" {
		t.Errorf("final = %v", final)
	}
	for _, k := range []string{"prompt_eval_count", "eval_count", "total_duration", "eval_duration"} {
		if n, ok := final[k].(float64); !ok || n <= 0 {
			t.Errorf("final %s = %v, want a positive number", k, final[k])
		}
	}
}

func TestNonStreaming(t *testing.T) {
	srv := start(t, Script{Replies: []Reply{{Content: "whole", ToolCalls: []ToolCall{{Name: "t", Arguments: json.RawMessage(`{"b":1,"a":2}`)}}}}})
	resp := post(t, srv, "/api/chat", `{"model": "scripted:latest", "stream": false, "messages": [{"role": "user", "content": "x"}]}`)
	var r api.ChatResponse
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatal(err)
	}
	if !r.Done || r.Message.Content != "whole" || len(r.Message.ToolCalls) != 1 || r.EvalCount == 0 || r.PromptEvalCount == 0 {
		t.Errorf("response = %+v", r)
	}
	if got := r.Message.ToolCalls[0].Function.Arguments.String(); got != `{"b":1,"a":2}` {
		t.Errorf("arguments = %s", got)
	}
}

func TestChatThroughOllamaClient(t *testing.T) {
	srv := start(t, Script{Replies: []Reply{
		{Content: "first"},
		{Content: "second", ExpectContains: "tool said"},
		{Content: "third", ExpectContains: "never there"},
	}})
	c := client(t, srv)
	chat := func(msgs ...api.Message) (string, error) {
		var b strings.Builder
		err := c.Chat(context.Background(), &api.ChatRequest{Model: srv.Model(), Messages: msgs}, func(r api.ChatResponse) error {
			b.WriteString(r.Message.Content)
			return nil
		})
		return b.String(), err
	}
	user := api.Message{Role: "user", Content: "hello"}
	if got, err := chat(user); err != nil || got != "first" {
		t.Fatalf("reply 1: %q, %v", got, err)
	}
	// expect_contains looks at the last user-side message, a tool result here.
	if got, err := chat(user, api.Message{Role: "assistant", Content: "first"}, api.Message{Role: "tool", Content: "the tool said 4"}); err != nil || got != "second" {
		t.Fatalf("reply 2: %q, %v", got, err)
	}
	_, err := chat(user)
	var se api.StatusError
	if !errors.As(err, &se) || se.StatusCode != http.StatusBadRequest || !strings.Contains(se.ErrorMessage, `"never there"`) || !strings.Contains(se.ErrorMessage, "replies[2]") {
		t.Errorf("expect_contains mismatch: %v", err)
	}
	_, err = chat(user)
	if !errors.As(err, &se) || se.StatusCode != http.StatusInternalServerError || !strings.Contains(se.ErrorMessage, "all were used") {
		t.Errorf("script exhausted: %v", err)
	}
	if n := len(srv.Failures()); n != 2 {
		t.Errorf("%d failures recorded, want 2: %v", n, srv.Failures())
	}
	reqs := srv.Requests()
	if len(reqs) != 4 || reqs[1].Messages[2].Content != "the tool said 4" {
		t.Errorf("recorded requests = %+v", reqs)
	}
	if srv.Remaining() != 0 {
		t.Errorf("remaining = %d", srv.Remaining())
	}
}

func TestScriptedError(t *testing.T) {
	srv := start(t, Script{Replies: []Reply{{Error: "out of memory"}}})
	err := client(t, srv).Chat(context.Background(), &api.ChatRequest{Model: "scripted", Messages: []api.Message{{Role: "user", Content: "x"}}}, func(api.ChatResponse) error { return nil })
	var se api.StatusError
	if !errors.As(err, &se) || se.ErrorMessage != "out of memory" {
		t.Errorf("err = %v", err)
	}
}

func TestUnknownModels(t *testing.T) {
	srv := start(t, Script{Replies: []Reply{{Content: "x"}}})
	c := client(t, srv)
	msgs := []api.Message{{Role: "user", Content: "x"}}
	err := c.Chat(context.Background(), &api.ChatRequest{Model: "llama3", Messages: msgs}, func(api.ChatResponse) error { return nil })
	var se api.StatusError
	if !errors.As(err, &se) || se.StatusCode != http.StatusNotFound || !strings.Contains(se.ErrorMessage, "not found") {
		t.Errorf("unknown chat model: %v", err)
	}
	err = c.Chat(context.Background(), &api.ChatRequest{Model: srv.EmbedModel(), Messages: msgs}, func(api.ChatResponse) error { return nil })
	if !errors.As(err, &se) || se.StatusCode != http.StatusBadRequest || !strings.Contains(se.ErrorMessage, "does not support chat") {
		t.Errorf("chat with the embedding model: %v", err)
	}
	if srv.Remaining() != 1 {
		t.Error("a refused request consumed a reply")
	}
	_, err = c.Embed(context.Background(), &api.EmbedRequest{Model: "scripted", Input: "x"})
	if !errors.As(err, &se) || se.StatusCode != http.StatusNotFound {
		t.Errorf("embed with the chat model: %v", err)
	}
	_, err = c.Show(context.Background(), &api.ShowRequest{Model: "nope"})
	if !errors.As(err, &se) || se.StatusCode != http.StatusNotFound {
		t.Errorf("show unknown: %v", err)
	}
}

func TestMetadataEndpoints(t *testing.T) {
	srv := start(t, Script{Model: "tiny", EmbedDims: 8, ContextLength: 2048})
	c := client(t, srv)
	ctx := context.Background()
	v, err := c.Version(ctx)
	if err != nil || v != Version {
		t.Errorf("version %q, %v", v, err)
	}
	if err := c.Heartbeat(ctx); err != nil {
		t.Errorf("heartbeat: %v", err)
	}
	list, err := c.List(ctx)
	if err != nil || len(list.Models) != 2 || list.Models[0].Name != "tiny:latest" || list.Models[1].Name != DefaultEmbedModel+":latest" {
		t.Errorf("tags = %+v, %v", list, err)
	}
	show, err := c.Show(ctx, &api.ShowRequest{Model: "tiny:latest"})
	if err != nil {
		t.Fatal(err)
	}
	if show.ModelInfo["scripted.context_length"] != float64(2048) || len(show.Capabilities) != 2 || show.Capabilities[1] != "tools" {
		t.Errorf("show = %+v", show)
	}
	emb, err := c.Embed(ctx, &api.EmbedRequest{Model: srv.EmbedModel(), Input: []string{"alpha beta", "gamma"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(emb.Embeddings) != 2 || len(emb.Embeddings[0]) != 8 || !equal(emb.Embeddings[0], Vector("alpha beta", 8)) {
		t.Errorf("embeddings = %v", emb.Embeddings)
	}
	emb, err = c.Embed(ctx, &api.EmbedRequest{Model: srv.EmbedModel(), Input: "one", Dimensions: 4})
	if err != nil || len(emb.Embeddings) != 1 || len(emb.Embeddings[0]) != 4 {
		t.Errorf("single input with dimensions: %+v, %v", emb, err)
	}
	resp := post(t, srv, "/api/embed", `{"model": "scripted-embed", "input": [1, 2]}`)
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("numeric input: status %d", resp.StatusCode)
	}
}

// TestClientHangsUp checks that a stream stops when the client goes away and
// that Close does not wait for a slow stream.
func TestClientHangsUp(t *testing.T) {
	srv := start(t, Script{Replies: []Reply{
		{Content: strings.Repeat("x", 200), ChunkSize: 1, Delay: 50 * time.Millisecond},
		{Content: strings.Repeat("y", 200), ChunkSize: 1, Delay: 50 * time.Millisecond},
	}})
	c := client(t, srv)
	ctx, cancel := context.WithCancel(context.Background())
	chunks := 0
	err := c.Chat(ctx, &api.ChatRequest{Model: "scripted", Messages: []api.Message{{Role: "user", Content: "x"}}}, func(api.ChatResponse) error {
		chunks++
		if chunks == 2 {
			cancel()
		}
		return nil
	})
	_ = err // ollama/api may report a cancelled stream as nil; the count is what matters.
	if chunks > 3 {
		t.Errorf("%d chunks after cancelling at 2", chunks)
	}

	// Close while the second reply is streaming: the client sees the end.
	var wg sync.WaitGroup
	wg.Add(1)
	started := make(chan struct{})
	var got int
	go func() {
		defer wg.Done()
		c.Chat(context.Background(), &api.ChatRequest{Model: "scripted", Messages: []api.Message{{Role: "user", Content: "x"}}}, func(r api.ChatResponse) error {
			if got == 0 {
				close(started)
			}
			got++
			return nil
		})
	}()
	<-started
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if got >= 200 {
		t.Errorf("the stream ran to the end (%d chunks) despite Close", got)
	}
}

func TestConcurrentRequests(t *testing.T) {
	var replies []Reply
	for i := 0; i < 20; i++ {
		replies = append(replies, Reply{Content: fmt.Sprintf("reply %02d", i)})
	}
	srv := start(t, Script{Replies: replies})
	c := client(t, srv)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		seen = map[string]bool{}
	)
	for i := 0; i < 20; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var b strings.Builder
			err := c.Chat(context.Background(), &api.ChatRequest{Model: "scripted", Messages: []api.Message{{Role: "user", Content: "x"}}}, func(r api.ChatResponse) error {
				b.WriteString(r.Message.Content)
				return nil
			})
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			seen[b.String()] = true
			mu.Unlock()
		}()
	}
	wg.Wait()
	if len(seen) != 20 || len(srv.Requests()) != 20 {
		t.Errorf("%d distinct replies, %d requests; want 20 each", len(seen), len(srv.Requests()))
	}
}

func TestBadRequests(t *testing.T) {
	srv := start(t, Script{Replies: []Reply{{Content: "x"}}})
	for _, tc := range []struct{ path, body string }{
		{"/api/chat", "{not json"},
		{"/api/chat", `{"messages": []}`},
		{"/api/embed", "{not json"},
		{"/api/show", "{not json"},
	} {
		resp := post(t, srv, tc.path, tc.body)
		body, _ := io.ReadAll(resp.Body)
		var e struct{ Error string }
		if resp.StatusCode != http.StatusBadRequest || json.Unmarshal(body, &e) != nil || e.Error == "" {
			t.Errorf("%s %q: status %d body %s", tc.path, tc.body, resp.StatusCode, body)
		}
	}
}

func TestTokenizerLogAndHang(t *testing.T) {
	tests := []struct {
		name          string
		bytesPerToken float64
		content       string
		numCtx        int
		wantTokens    int
		wantOverflow  bool
	}{
		{"default four bytes", 0, strings.Repeat("a", 40), 100, 4 + 10, false},
		{"finer tokenizer", 2, strings.Repeat("a", 40), 100, 4 + 20, false},
		{"larger than the window", 1, strings.Repeat("a", 400), 100, 4 + 400, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, err := NewServer(Script{BytesPerToken: tt.bytesPerToken, Replies: []Reply{{Content: "ok"}}})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			c, err := llm.New(srv.URL())
			if err != nil {
				t.Fatal(err)
			}
			r, err := c.Chat(context.Background(), llm.ChatRequest{Model: srv.Model(), NumCtx: tt.numCtx,
				Messages: []llm.Message{{Role: "user", Content: tt.content}}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			log := srv.Log()
			if len(log) != 1 || log[0].PromptTokens != tt.wantTokens || log[0].NumCtx != tt.numCtx || log[0].Overflow() != tt.wantOverflow {
				t.Fatalf("log = %+v, want %d tokens of %d (overflow %v)", log, tt.wantTokens, tt.numCtx, tt.wantOverflow)
			}
			if want := min(tt.wantTokens, tt.numCtx); r.Usage.PromptTokens != want {
				t.Errorf("prompt_eval_count = %d, want %d (the window keeps only what fits)", r.Usage.PromptTokens, want)
			}
		})
	}

	srv, err := NewServer(Script{Replies: []Reply{{Hang: true}}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	c, _ := llm.New(srv.URL())
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if _, err := c.Chat(ctx, llm.ChatRequest{Model: srv.Model(), Messages: []llm.Message{{Role: "user", Content: "hi"}}}, nil); err == nil {
		t.Fatal("a hanging reply returned")
	}
	if len(srv.Log()) != 1 {
		t.Errorf("the hanging request was not logged")
	}
}
