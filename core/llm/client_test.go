package llm_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/exocortex/exocortex/core/llm"
	"github.com/exocortex/exocortex/core/llm/scripted"
)

// serve starts a scripted server and a client pointed at it.
func serve(t *testing.T, s scripted.Script) (*scripted.Server, *llm.Client) {
	t.Helper()
	srv, err := scripted.NewServer(s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	c, err := llm.New(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	return srv, c
}

func user(text string) []llm.Message { return []llm.Message{{Role: llm.RoleUser, Content: text}} }

func TestChatStreams(t *testing.T) {
	content := `{"thoughts": ["count the files"], "headline": "Counting", "tool_name": "code_execution", "tool_args": {"code": "ls | wc -l"}}`
	srv, c := serve(t, scripted.Script{Replies: []scripted.Reply{{Thinking: "Let me think.", Content: content, ChunkSize: 7}}})

	var chunks []llm.Chunk
	r, err := c.Chat(context.Background(), llm.ChatRequest{Model: srv.Model(), Messages: user("how many files?")}, func(ch llm.Chunk) error {
		chunks = append(chunks, ch)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if r.Content != content || r.Thinking != "Let me think." {
		t.Errorf("reply = %q / %q", r.Content, r.Thinking)
	}
	var streamed, thought strings.Builder
	for _, ch := range chunks {
		if ch.Content == "" && ch.Thinking == "" {
			t.Error("an empty chunk was passed on")
		}
		streamed.WriteString(ch.Content)
		thought.WriteString(ch.Thinking)
	}
	if want := (len(content)+6)/7 + 2; len(chunks) != want {
		t.Errorf("%d chunks, want %d", len(chunks), want)
	}
	if streamed.String() != content || thought.String() != r.Thinking {
		t.Error("the chunks do not add up to the reply")
	}
	if r.DoneReason != "stop" || r.Truncated() || r.Model != "scripted" {
		t.Errorf("done = %q, model = %q", r.DoneReason, r.Model)
	}
	u := r.Usage
	if u.PromptTokens <= 0 || u.OutputTokens <= 0 || u.TotalDuration <= 0 || u.EvalDuration <= 0 || u.NumCtx != llm.DefaultNumCtx {
		t.Errorf("usage = %+v", u)
	}
	if u.TokensPerSecond() <= 0 || u.ContextFill() <= 0 || u.ContextFill() >= 1 {
		t.Errorf("tokens/s %v, fill %v", u.TokensPerSecond(), u.ContextFill())
	}
	req, err := llm.ParseReply(r)
	if err != nil || req.ToolName != "code_execution" || string(req.ToolArgs) != `{"code":"ls | wc -l"}` {
		t.Errorf("parsed %+v, %v", req, err)
	}
	// The model saw num_ctx: the whole point of setting it on every request.
	if got := srv.Requests()[0].Options["num_ctx"]; got != float64(llm.DefaultNumCtx) {
		t.Errorf("num_ctx sent = %v, want %d", got, llm.DefaultNumCtx)
	}
}

func TestNumCtxAndOptions(t *testing.T) {
	replies := make([]scripted.Reply, 4)
	for i := range replies {
		replies[i] = scripted.Reply{Content: "ok"}
	}
	srv, c := serve(t, scripted.Script{Replies: replies})
	ctx := context.Background()
	opts := map[string]any{"temperature": 0.2, "num_ctx": 2048}
	tests := []struct {
		name   string
		numCtx int
		opts   map[string]any
		want   float64
	}{
		{"explicit NumCtx wins over options", 16384, opts, 16384},
		{"options when NumCtx is 0", 0, opts, 2048},
		{"default", 0, nil, llm.DefaultNumCtx},
	}
	for i, tc := range tests {
		r, err := c.Chat(ctx, llm.ChatRequest{Model: "scripted", Messages: user("x"), NumCtx: tc.numCtx, Options: tc.opts}, nil)
		if err != nil {
			t.Fatal(err)
		}
		sent := srv.Requests()[i].Options
		if sent["num_ctx"] != tc.want || r.Usage.NumCtx != int(tc.want) {
			t.Errorf("%s: sent num_ctx %v, usage %d, want %v", tc.name, sent["num_ctx"], r.Usage.NumCtx, tc.want)
		}
		if tc.opts != nil && sent["temperature"] != 0.2 {
			t.Errorf("%s: temperature not passed: %v", tc.name, sent)
		}
	}
	if opts["num_ctx"] != 2048 || len(opts) != 2 {
		t.Errorf("the caller's options were modified: %v", opts)
	}
	_, err := c.Chat(ctx, llm.ChatRequest{Model: "scripted", Messages: user("x"), Options: map[string]any{"num_ctx": "big"}}, nil)
	if err == nil || !strings.Contains(err.Error(), "num_ctx") {
		t.Errorf("bad num_ctx: %v", err)
	}
	// A prompt larger than the window is cut, as Ollama does, and the
	// usage shows the window full.
	r, err := c.Chat(ctx, llm.ChatRequest{Model: "scripted", Messages: user(strings.Repeat("word ", 400)), NumCtx: 64}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.Usage.PromptTokens != 64 || r.Usage.ContextFill() < 1 {
		t.Errorf("overflowing prompt: usage %+v, fill %v", r.Usage, r.Usage.ContextFill())
	}
}

func TestRequestValidation(t *testing.T) {
	_, c := serve(t, scripted.Script{Replies: []scripted.Reply{{Content: "ok"}}})
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		req  llm.ChatRequest
		want string
	}{
		{"no model", llm.ChatRequest{Messages: user("x")}, "no model"},
		{"no messages", llm.ChatRequest{Model: "scripted"}, "no messages"},
		{"bad tool schema", llm.ChatRequest{Model: "scripted", Messages: user("x"), Tools: []llm.Tool{{Name: "t", Parameters: json.RawMessage(`[1]`)}}}, "tool t"},
		{"nameless tool", llm.ChatRequest{Model: "scripted", Messages: user("x"), Tools: []llm.Tool{{}}}, "without a name"},
		{"bad tool call args", llm.ChatRequest{Model: "scripted", Messages: []llm.Message{{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{Name: "t", Arguments: json.RawMessage(`"x"`)}}}}}, "message 0"},
	} {
		if _, err := c.Chat(ctx, tc.req, nil); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
}

func TestToolsAndToolCalls(t *testing.T) {
	srv, c := serve(t, scripted.Script{Replies: []scripted.Reply{
		{Content: "Looking it up.", ToolCalls: []scripted.ToolCall{
			{Name: "memory_load", Arguments: json.RawMessage(`{"query": "name", "limit": 2, "area": "main"}`)},
			{Name: "response", Arguments: nil},
		}},
		{Content: "done"},
	}})
	tools := []llm.Tool{
		{Name: "memory_load", Description: "Search memory.", Parameters: json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","description":"what to find"}},"required":["query"]}`)},
		{Name: "response", Description: "Answer."},
	}
	ctx := context.Background()
	r, err := c.Chat(ctx, llm.ChatRequest{Model: "scripted", Messages: user("what is my name?"), Tools: tools}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.ToolCalls) != 2 {
		t.Fatalf("tool calls = %+v", r.ToolCalls)
	}
	// Ollama's arguments are an ordered map; the model's order survives.
	if got := string(r.ToolCalls[0].Arguments); got != `{"query":"name","limit":2,"area":"main"}` {
		t.Errorf("arguments = %s", got)
	}
	if string(r.ToolCalls[1].Arguments) != `{}` || r.ToolCalls[0].ID == "" {
		t.Errorf("second call = %+v", r.ToolCalls[1])
	}
	req, err := llm.ParseReply(r)
	if err != nil || !req.Native || req.ToolName != "memory_load" || req.CallID != r.ToolCalls[0].ID || req.Thoughts[0] != "Looking it up." {
		t.Errorf("parsed %+v, %v", req, err)
	}

	sent := srv.Requests()[0]
	if len(sent.Tools) != 2 || sent.Tools[0].Type != "function" || sent.Tools[0].Function.Name != "memory_load" {
		t.Fatalf("tools sent = %+v", sent.Tools)
	}
	if p, ok := sent.Tools[0].Function.Parameters.Properties.Get("query"); !ok || p.Description != "what to find" {
		t.Errorf("schema not passed: %+v", sent.Tools[0].Function.Parameters)
	}
	if sent.Tools[1].Function.Parameters.Type != "object" {
		t.Errorf("a tool without parameters should get an empty object schema: %+v", sent.Tools[1].Function.Parameters)
	}

	// The assistant's tool calls and the tool's result go back in the history.
	history := append(user("what is my name?"),
		llm.Message{Role: llm.RoleAssistant, Content: r.Content, ToolCalls: r.ToolCalls},
		llm.Message{Role: llm.RoleTool, ToolName: "memory_load", Content: "name: Ada"})
	if _, err := c.Chat(ctx, llm.ChatRequest{Model: "scripted", Messages: history}, nil); err != nil {
		t.Fatal(err)
	}
	got := srv.Requests()[1].Messages
	if len(got) != 3 || len(got[1].ToolCalls) != 2 || got[1].ToolCalls[0].Function.Arguments.String() != `{"query":"name","limit":2,"area":"main"}` ||
		got[2].Role != "tool" || got[2].ToolName != "memory_load" {
		t.Errorf("history sent = %+v", got)
	}
}

// TestCancelStopsStream interrupts a long stream, as Ctrl+C does, and checks
// that Chat returns at once with the context's error and the partial reply.
func TestCancelStopsStream(t *testing.T) {
	srv, c := serve(t, scripted.Script{Replies: []scripted.Reply{
		{Content: strings.Repeat("token ", 100), ChunkSize: 6, Delay: 100 * time.Millisecond}, // 10 s in all
	}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n := 0
	begin := time.Now()
	r, err := c.Chat(ctx, llm.ChatRequest{Model: srv.Model(), Messages: user("write a lot")}, func(llm.Chunk) error {
		n++
		if n == 2 {
			cancel()
		}
		return nil
	})
	elapsed := time.Since(begin)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if !strings.Contains(err.Error(), srv.URL()) {
		t.Errorf("error does not name the server: %v", err)
	}
	if r.Content != "token token " {
		t.Errorf("partial content = %q", r.Content)
	}
	// The full stream takes 10 s; returning long before shows the connection
	// was closed rather than drained.
	if elapsed > 5*time.Second {
		t.Errorf("Chat took %v to return after cancel", elapsed)
	}
}

func TestChunkCallbackErrorStops(t *testing.T) {
	srv, c := serve(t, scripted.Script{Replies: []scripted.Reply{{Content: strings.Repeat("a", 50), ChunkSize: 5}}})
	stop := errors.New("hook refused")
	n := 0
	r, err := c.Chat(context.Background(), llm.ChatRequest{Model: srv.Model(), Messages: user("x")}, func(llm.Chunk) error {
		n++
		if n == 3 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) || n != 3 || r.Content != strings.Repeat("a", 15) {
		t.Errorf("err = %v after %d chunks, content %q", err, n, r.Content)
	}
}

// TestServerGoesAway closes the server in the middle of a stream: Chat must
// report an incomplete reply rather than pass off half of one as whole.
func TestServerGoesAway(t *testing.T) {
	srv, c := serve(t, scripted.Script{Replies: []scripted.Reply{
		{Content: strings.Repeat("b", 100), ChunkSize: 1, Delay: 20 * time.Millisecond},
	}})
	n := 0
	r, err := c.Chat(context.Background(), llm.ChatRequest{Model: srv.Model(), Messages: user("x")}, func(llm.Chunk) error {
		n++
		if n == 3 {
			srv.Close()
		}
		return nil
	})
	if err == nil || r.DoneReason != "" {
		t.Fatalf("err = nil after the server closed mid-stream (content %q)", r.Content)
	}
	if !errors.Is(err, llm.ErrIncomplete) && !strings.Contains(err.Error(), srv.URL()) {
		t.Errorf("err = %v, want ErrIncomplete or an error naming the server", err)
	}
}

func TestScriptedFailures(t *testing.T) {
	srv, c := serve(t, scripted.Script{Source: "s.yaml", Replies: []scripted.Reply{{Error: "model requires more system memory"}}})
	ctx := context.Background()
	_, err := c.Chat(ctx, llm.ChatRequest{Model: srv.Model(), Messages: user("x")}, nil)
	if err == nil || !strings.Contains(err.Error(), "model requires more system memory") || !strings.Contains(err.Error(), srv.URL()) {
		t.Errorf("server error: %v", err)
	}
	_, err = c.Chat(ctx, llm.ChatRequest{Model: srv.Model(), Messages: user("x")}, nil)
	if err == nil || !strings.Contains(err.Error(), "s.yaml has 1 replies and all were used") {
		t.Errorf("exhausted script: %v", err)
	}
	_, err = c.Chat(ctx, llm.ChatRequest{Model: "qwen3:8b", Messages: user("x")}, nil)
	if !errors.Is(err, llm.ErrModelNotFound) || !strings.Contains(err.Error(), "ollama pull qwen3:8b") {
		t.Errorf("unknown model: %v", err)
	}
}

func TestProbe(t *testing.T) {
	srv, c := serve(t, scripted.Script{ContextLength: 8192})
	ctx := context.Background()
	info, err := c.Probe(ctx, "scripted")
	if err != nil {
		t.Fatal(err)
	}
	if info.Version != scripted.Version || info.Model != "scripted:latest" || info.ContextLength != 8192 ||
		!info.HasCapability("tools") || len(info.Models) != 2 || info.BaseURL != srv.URL() {
		t.Errorf("info = %+v", info)
	}
	info, err = c.Probe(ctx, "")
	if err != nil || info.Model != "" || info.Version == "" {
		t.Errorf("server-only probe: %+v, %v", info, err)
	}
	_, err = c.Probe(ctx, "llama3.2")
	if !errors.Is(err, llm.ErrModelNotFound) {
		t.Fatalf("err = %v, want ErrModelNotFound", err)
	}
	for _, want := range []string{srv.URL(), `"llama3.2"`, "ollama pull llama3.2", "scripted:latest"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
}

func TestProbeUnreachable(t *testing.T) {
	// A port that was just free: nothing listens there.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c, err := llm.New(addr)
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Probe(context.Background(), "qwen3")
	if !errors.Is(err, llm.ErrUnreachable) {
		t.Fatalf("err = %v, want ErrUnreachable", err)
	}
	for _, want := range []string{"http://" + addr, "ollama serve", "OLLAMA_HOST"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	_, err = c.Chat(context.Background(), llm.ChatRequest{Model: "qwen3", Messages: user("x")}, nil)
	if !errors.Is(err, llm.ErrUnreachable) {
		t.Errorf("chat: err = %v, want ErrUnreachable", err)
	}
}

func TestOllamaHostFromEnvironment(t *testing.T) {
	srv, err := scripted.NewServer(scripted.Script{})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	t.Setenv("OLLAMA_HOST", srv.URL())
	c, err := llm.New("")
	if err != nil {
		t.Fatal(err)
	}
	if c.BaseURL() != srv.URL() {
		t.Errorf("base = %q, want %q", c.BaseURL(), srv.URL())
	}
	if _, err := c.Probe(context.Background(), "scripted"); err != nil {
		t.Error(err)
	}
}

func TestNewAddresses(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"http://127.0.0.1:11434", "http://127.0.0.1:11434"},
		{"localhost", "http://localhost:11434"},
		{"gpu-box:8080", "http://gpu-box:8080"},
		{"https://ollama.example.com/", "https://ollama.example.com"},
		{"http://proxy.local/ollama/", "http://proxy.local/ollama"},
		{"[::1]", "http://[::1]:11434"},
	} {
		c, err := llm.New(tc.in)
		if err != nil || c.BaseURL() != tc.want {
			t.Errorf("New(%q) = %v, %v; want %s", tc.in, c, err, tc.want)
		}
	}
	for _, bad := range []string{"ftp://host", "http://", "::::"} {
		if _, err := llm.New(bad); err == nil {
			t.Errorf("New(%q) succeeded", bad)
		}
	}
}

func TestEmbed(t *testing.T) {
	srv, c := serve(t, scripted.Script{EmbedDims: 32})
	vecs, err := c.Embed(context.Background(), srv.EmbedModel(), []string{"go build", "go test"})
	if err != nil {
		t.Fatal(err)
	}
	if len(vecs) != 2 || len(vecs[0]) != 32 {
		t.Errorf("shape %d×%d", len(vecs), len(vecs[0]))
	}
	if _, err := c.Embed(context.Background(), "nomic-embed-text", []string{"x"}); !errors.Is(err, llm.ErrModelNotFound) {
		t.Errorf("unknown embedder: %v", err)
	}
	if v, err := c.Embed(context.Background(), srv.EmbedModel(), nil); err != nil || v != nil {
		t.Errorf("no texts: %v, %v", v, err)
	}
}

// TestHelloScript replays examples/scripts/hello.yaml through the client, as
// `--model script:FILE` does, and checks it is the promised monologue: a tool
// call in the JSON format, a native tool call, then the response tool.
func TestHelloScript(t *testing.T) {
	s, err := scripted.LoadScript(filepath.Join("..", "..", "examples", "scripts", "hello.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	srv, c := serve(t, s)
	want := []struct {
		tool   string
		native bool
	}{{"hello_time", false}, {"hello_time", true}, {"response", false}}
	history := user("hello")
	for i, w := range want {
		r, err := c.Chat(context.Background(), llm.ChatRequest{Model: srv.Model(), Messages: history}, nil)
		if err != nil {
			t.Fatalf("iteration %d: %v", i+1, err)
		}
		req, err := llm.ParseReply(r)
		if err != nil {
			t.Fatalf("iteration %d: %v", i+1, err)
		}
		if req.ToolName != w.tool || req.Native != w.native || len(req.Repairs) != 0 {
			t.Errorf("iteration %d: %+v", i+1, req)
		}
		history = append(history, llm.Message{Role: llm.RoleAssistant, Content: r.Content, ToolCalls: r.ToolCalls},
			llm.Message{Role: llm.RoleUser, Content: "Result of tool " + req.ToolName})
	}
	if srv.Remaining() != 0 || len(srv.Failures()) != 0 {
		t.Errorf("remaining %d, failures %v", srv.Remaining(), srv.Failures())
	}
}

// TestExampleScript runs the documented test script: every kind of reply it
// holds comes out of the client as the loop will see it.
func TestExampleScript(t *testing.T) {
	s, err := scripted.LoadScript(filepath.Join("scripted", "testdata", "example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	srv, c := serve(t, s)
	ctx := context.Background()
	chat := func(text string) (llm.Reply, error) {
		return c.Chat(ctx, llm.ChatRequest{Model: srv.Model(), Messages: user(text)}, nil)
	}
	r, err := chat("count the lines of notes.txt")
	if err != nil {
		t.Fatal(err)
	}
	if req, err := llm.ParseReply(r); err != nil || req.ToolName != "code_execution" {
		t.Errorf("reply 1: %+v, %v", req, err)
	}
	r, err = chat("12 notes.txt")
	if err != nil {
		t.Fatal(err)
	}
	if req, err := llm.ParseReply(r); err != nil || req.ToolName != "memory_save" || !req.Native || r.Thinking == "" {
		t.Errorf("reply 2: %+v, %v", req, err)
	}
	r, err = chat("saved")
	if err != nil {
		t.Fatal(err)
	}
	var pe *llm.ParseError
	if _, err := llm.ParseReply(r); !r.Truncated() || !errors.As(err, &pe) || pe.Fault != llm.FaultTruncated {
		t.Errorf("reply 3: truncated %v, err %v", r.Truncated(), err)
	}
	if r, err = chat("go on"); err != nil || !strings.Contains(r.Content, "12 lines") {
		t.Errorf("reply 4: %q, %v", r.Content, err)
	}
	if _, err = chat("again"); err == nil || !strings.Contains(err.Error(), "more system memory") {
		t.Errorf("reply 5: %v", err)
	}
	if len(srv.Failures()) != 0 {
		t.Errorf("failures: %v", srv.Failures())
	}
}

func TestContextLength(t *testing.T) {
	tests := []struct {
		name  string
		model string
		want  int
		fail  bool
	}{
		{"chat model", "scripted", 4096, false},
		{"unknown model", "nope", 0, true},
	}
	_, c := serve(t, scripted.Script{ContextLength: 4096})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n, err := c.ContextLength(context.Background(), tt.model)
			if (err != nil) != tt.fail || n != tt.want {
				t.Fatalf("ContextLength(%q) = %d, %v; want %d (error %v)", tt.model, n, err, tt.want, tt.fail)
			}
			if err != nil && !errors.Is(err, llm.ErrModelNotFound) && !strings.Contains(err.Error(), tt.model) {
				t.Errorf("error %v does not name the model", err)
			}
		})
	}
}
