package llm_test

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/exocortex/exocortex/core/llm"
	"github.com/exocortex/exocortex/core/llm/scripted"
)

// serveOpenAI starts a scripted OpenAI-compatible server and a client for it.
func serveOpenAI(t *testing.T, s scripted.Script, cfg llm.OpenAIConfig) (*scripted.OpenAIServer, *llm.OpenAI) {
	t.Helper()
	srv, err := scripted.NewOpenAIServer(s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	cfg.BaseURL = srv.URL()
	if cfg.MaxRetryDelay == 0 {
		cfg.MaxRetryDelay = 5 * time.Millisecond
	}
	c, err := llm.NewOpenAI(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return srv, c
}

// providers starts the same script behind both protocols: every behaviour
// the loop relies on is checked against each.
func providers(t *testing.T, s scripted.Script) map[string]struct {
	srv scripted.Running
	p   llm.Provider
} {
	t.Helper()
	out := map[string]struct {
		srv scripted.Running
		p   llm.Provider
	}{}
	for _, name := range llm.Providers() {
		srv, err := scripted.Start(name, s)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { srv.Close() })
		p, err := llm.Open(llm.Config{Provider: name, BaseURL: srv.URL(), MaxRetryDelay: 5 * time.Millisecond})
		if err != nil {
			t.Fatal(err)
		}
		if p.Name() != name {
			t.Fatalf("Open(%s).Name() = %s", name, p.Name())
		}
		out[name] = struct {
			srv scripted.Running
			p   llm.Provider
		}{srv, p}
	}
	return out
}

// TestProviderParity plays the replies the loop meets through both
// protocols and asserts the same Reply, chunks and parse come out.
func TestProviderParity(t *testing.T) {
	jsonReply := `{"thoughts": ["list"], "headline": "Listing", "tool_name": "code_execution", "tool_args": {"code": "ls"}}`
	tests := []struct {
		name      string
		reply     scripted.Reply
		wantTool  string
		wantArgs  string
		wantThink string
		// wantContent is the reply text when it differs from the script's.
		wantContent string
		native      bool
	}{
		{name: "json reply", reply: scripted.Reply{Content: jsonReply, ChunkSize: 5},
			wantTool: "code_execution", wantArgs: `{"code":"ls"}`},
		{name: "native tool call in pieces", reply: scripted.Reply{ChunkSize: 3, ToolCalls: []scripted.ToolCall{
			{Name: "memory_load", Arguments: []byte(`{"query":"notes about go","limit":3}`)}}},
			wantTool: "memory_load", wantArgs: `{"query":"notes about go","limit":3}`, native: true},
		{name: "reasoning field", reply: scripted.Reply{Thinking: "Which tool? code_execution.", Content: jsonReply},
			wantTool: "code_execution", wantArgs: `{"code":"ls"}`, wantThink: "Which tool? code_execution."},
		{name: "think block in the text", reply: scripted.Reply{Content: "<think>\nMaybe {\"tool_name\": \"wrong\"}?\n</think>\n\n" + jsonReply, ChunkSize: 3},
			wantTool: "code_execution", wantArgs: `{"code":"ls"}`, wantThink: "\nMaybe {\"tool_name\": \"wrong\"}?\n", wantContent: jsonReply},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for name, pv := range providers(t, scripted.Script{Replies: []scripted.Reply{tt.reply}}) {
				var streamed, thought strings.Builder
				r, err := pv.p.Chat(context.Background(), llm.ChatRequest{Model: pv.srv.Model(), Messages: user("go")}, func(c llm.Chunk) error {
					streamed.WriteString(c.Content)
					thought.WriteString(c.Thinking)
					return nil
				})
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if streamed.String() != r.Content || thought.String() != r.Thinking || r.Thinking != tt.wantThink {
					t.Errorf("%s: chunks %q/%q, reply %q/%q, want thinking %q", name, streamed.String(), thought.String(), r.Content, r.Thinking, tt.wantThink)
				}
				if want := cmp.Or(tt.wantContent, tt.reply.Content); r.Content != want {
					t.Errorf("%s: reply text %q, want %q", name, r.Content, want)
				}
				req, err := llm.ParseReply(r)
				if err != nil || req.ToolName != tt.wantTool || string(req.ToolArgs) != tt.wantArgs || req.Native != tt.native {
					t.Errorf("%s: parsed %+v, %v", name, req, err)
				}
				if tt.native && (len(r.ToolCalls) != 1 || r.ToolCalls[0].ID == "") {
					t.Errorf("%s: tool calls %+v, want one with an id", name, r.ToolCalls)
				}
				if r.DoneReason != "stop" || r.Usage.PromptTokens <= 0 || r.Usage.OutputTokens <= 0 {
					t.Errorf("%s: done %q, usage %+v", name, r.DoneReason, r.Usage)
				}
				if got := pv.p.LastUsage(); got.PromptTokens != r.Usage.PromptTokens || got.OutputTokens != r.Usage.OutputTokens {
					t.Errorf("%s: LastUsage %+v, reply usage %+v", name, got, r.Usage)
				}
				n, err := pv.p.ContextLength(context.Background(), pv.srv.Model())
				if err != nil || n != scripted.DefaultContextLength {
					t.Errorf("%s: context length %d, %v; want %d", name, n, err, scripted.DefaultContextLength)
				}
				if f := pv.srv.Failures(); len(f) > 0 {
					t.Errorf("%s: script failures %v", name, f)
				}
			}
		})
	}
}

// TestOpenAIRequest: what the OpenAI-compatible server is sent.
func TestOpenAIRequest(t *testing.T) {
	srv, c := serveOpenAI(t, scripted.Script{Replies: []scripted.Reply{{Content: "ok"}}}, llm.OpenAIConfig{APIKey: "sk-test"})
	think := false
	_, err := c.Chat(context.Background(), llm.ChatRequest{
		Model: srv.Model(),
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: "be brief"},
			{Role: llm.RoleUser, Content: "hi"},
			{Role: llm.RoleAssistant, ToolCalls: []llm.ToolCall{{ID: "call_1", Name: "echo", Arguments: []byte(`{"a":1}`)}}},
			{Role: llm.RoleTool, ToolName: "echo", ToolCallID: "call_1", Content: "1"},
		},
		Tools:   []llm.Tool{{Name: "echo", Description: "says it back"}},
		Options: map[string]any{"temperature": 0, "num_predict": 300, "num_ctx": 4096},
		Think:   &think,
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	req := srv.Requests()[0]
	if !req.Stream || !req.StreamOptions.IncludeUsage {
		t.Errorf("stream %v, include_usage %v: want both", req.Stream, req.StreamOptions.IncludeUsage)
	}
	if req.MaxTokens != 300 || req.Temperature == nil || *req.Temperature != 0 {
		t.Errorf("max_tokens %d, temperature %v", req.MaxTokens, req.Temperature)
	}
	if v, ok := req.ChatTemplateKwargs["enable_thinking"]; !ok || v != false {
		t.Errorf("chat_template_kwargs = %v", req.ChatTemplateKwargs)
	}
	if len(req.Tools) != 1 || req.Tools[0].Function.Name != "echo" || !strings.Contains(string(req.Tools[0].Function.Parameters), `"object"`) {
		t.Errorf("tools = %+v", req.Tools)
	}
	roles := []string{}
	for _, m := range req.Messages {
		roles = append(roles, m.Role)
	}
	if strings.Join(roles, ",") != "system,user,assistant,tool" || req.Messages[2].ToolCalls[0].Function.Arguments != `{"a":1}` || req.Messages[3].ToolCallID != "call_1" {
		t.Errorf("messages = %+v", req.Messages)
	}
}

// TestOpenAIErrors: each way a real server goes wrong gives an error that
// says what to do, and never the key.
func TestOpenAIErrors(t *testing.T) {
	const key = "sk-secret-123456"
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + ln.Addr().String() + "/v1"
	ln.Close()

	tests := []struct {
		name    string
		script  scripted.Script
		cfg     llm.OpenAIConfig
		base    string // instead of the scripted server
		model   string // instead of the script's
		want    error
		say     []string
		retries int
		content string // a reply that does come
	}{
		{name: "connection refused", base: closed, cfg: llm.OpenAIConfig{MaxRetries: -1}, want: llm.ErrUnreachable,
			say: []string{closed, "llama-server", "OPENAI_BASE_URL"}},
		{name: "no key", script: scripted.Script{APIKey: key}, cfg: llm.OpenAIConfig{APIKeyEnv: "LMSTUDIO_KEY"}, want: llm.ErrUnauthorized,
			say: []string{"HTTP 401", "no key was sent", "$LMSTUDIO_KEY"}},
		{name: "wrong key", script: scripted.Script{APIKey: key}, cfg: llm.OpenAIConfig{APIKey: "sk-wrong-999999"}, want: llm.ErrUnauthorized,
			say: []string{"the key sent was refused", "$OPENAI_API_KEY"}},
		{name: "unknown model", model: "gpt-4o", want: llm.ErrModelNotFound,
			say: []string{`"gpt-4o"`, "models it lists: scripted, scripted-embed"}},
		{name: "not streaming", script: scripted.Script{Replies: []scripted.Reply{{Content: "hi", Fault: scripted.FaultNoStream}}}, want: llm.ErrNotStreaming,
			say: []string{"application/json", "text/event-stream", "/v1"}},
		{name: "no [DONE]", script: scripted.Script{Replies: []scripted.Reply{{Content: "hi", Fault: scripted.FaultNoDone}}}, want: llm.ErrIncomplete,
			say: []string{"without [DONE]", "after the reply finished"}},
		{name: "429 then a reply", script: scripted.Script{Replies: []scripted.Reply{{Error: "slow down", Status: 429}, {Error: "slow down", Status: 429}, {Content: "at last"}}},
			retries: 2, content: "at last"},
		{name: "500 every time", script: scripted.Script{Replies: []scripted.Reply{{Error: "boom", Status: 500}, {Error: "boom", Status: 500}, {Error: "boom", Status: 502}}},
			cfg: llm.OpenAIConfig{MaxRetries: 2}, want: llm.ErrBusy, retries: 2, say: []string{"HTTP 502", "after 3 attempts"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if len(tt.script.Replies) == 0 {
				tt.script.Replies = []scripted.Reply{{Content: "unused"}}
			}
			srv, err := scripted.NewOpenAIServer(tt.script)
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			var mu sync.Mutex
			var retries []llm.Retry
			cfg := tt.cfg
			cfg.BaseURL = srv.URL()
			if tt.base != "" {
				cfg.BaseURL = tt.base
			}
			cfg.MaxRetryDelay = 5 * time.Millisecond
			cfg.OnRetry = func(r llm.Retry) {
				mu.Lock()
				retries = append(retries, r)
				mu.Unlock()
			}
			c, err := llm.NewOpenAI(cfg)
			if err != nil {
				t.Fatal(err)
			}
			model := srv.Model()
			if tt.model != "" {
				model = tt.model
			}
			r, err := c.Chat(context.Background(), llm.ChatRequest{Model: model, Messages: user("hi")}, nil)
			if tt.want == nil {
				if err != nil || r.Content != tt.content {
					t.Fatalf("reply %q, %v; want %q", r.Content, err, tt.content)
				}
			} else if !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
			if err != nil {
				for _, s := range tt.say {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not say %q", err, s)
					}
				}
				if strings.Contains(err.Error(), key) || strings.Contains(err.Error(), "sk-wrong") {
					t.Errorf("error %q shows the key", err)
				}
			}
			mu.Lock()
			defer mu.Unlock()
			if len(retries) != tt.retries {
				t.Errorf("retries seen %v, want %d", retries, tt.retries)
			}
			for i, rt := range retries {
				if rt.Attempt != i+1 || rt.Status < 429 || !strings.Contains(rt.String(), "retrying in ≤") || rt.Path != "chat/completions" ||
					rt.Delay > cfg.MaxRetryDelay || !strings.HasPrefix(rt.Short(), "retrying in ≤0.0s (HTTP ") || !strings.HasSuffix(rt.Short(), fmt.Sprintf(") %d/%d", i+1, rt.Of-1)) {
					t.Errorf("retry %d = %+v (%s)", i, rt, rt)
				}
			}
		})
	}
}

// TestOpenAICancel: cancelling the context closes the stream at once.
func TestOpenAICancel(t *testing.T) {
	long := strings.Repeat("word ", 200)
	srv, c := serveOpenAI(t, scripted.Script{Replies: []scripted.Reply{{Content: long, ChunkSize: 5, Delay: 20 * time.Millisecond}}}, llm.OpenAIConfig{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now()
	r, err := c.Chat(ctx, llm.ChatRequest{Model: srv.Model(), Messages: user("talk")}, func(ch llm.Chunk) error {
		if ch.Content != "" {
			cancel()
		}
		return nil
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("cancel took %v", took)
	}
	if r.Content == "" || len(r.Content) >= len(long) {
		t.Errorf("partial reply %d bytes of %d", len(r.Content), len(long))
	}
}

// TestOpenAIEmbedAndProbe: embeddings in input order, and Probe's model list.
func TestOpenAIEmbedAndProbe(t *testing.T) {
	srv, c := serveOpenAI(t, scripted.Script{EmbedDims: 16, Replies: []scripted.Reply{{Content: "x"}}}, llm.OpenAIConfig{})
	texts := []string{"go build", "go test", "go vet"}
	vs, err := c.Embed(context.Background(), srv.EmbedModel(), texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vs {
		want := scripted.Vector(texts[i], 16)
		if len(v) != 16 || v[0] != want[0] || v[15] != want[15] {
			t.Errorf("vector %d = %v, want %v", i, v, want)
		}
	}
	if _, err := c.Embed(context.Background(), "nomic-embed-text", texts); !errors.Is(err, llm.ErrModelNotFound) {
		t.Errorf("unknown embed model: %v", err)
	}
	info, err := c.Probe(context.Background(), srv.Model())
	if err != nil || info.ContextLength != scripted.DefaultContextLength || len(info.Models) != 2 {
		t.Errorf("probe = %+v, %v", info, err)
	}
	if _, err := c.Probe(context.Background(), "missing"); !errors.Is(err, llm.ErrModelNotFound) || !strings.Contains(err.Error(), "scripted") {
		t.Errorf("probe missing = %v", err)
	}
}

func TestOpenAIBaseURL(t *testing.T) {
	tests := []struct{ in, want, err string }{
		{in: "http://127.0.0.1:1234/v1", want: "http://127.0.0.1:1234/v1"},
		{in: "http://127.0.0.1:8080", want: "http://127.0.0.1:8080/v1"},
		{in: "localhost:8000/", want: "http://localhost:8000/v1"},
		{in: "https://gateway.example/api/v1/", want: "https://gateway.example/api/v1"},
		{in: "", err: "no base URL"},
		{in: "ftp://x", err: "want http://HOST:PORT/v1"},
	}
	for _, tt := range tests {
		c, err := llm.NewOpenAI(llm.OpenAIConfig{BaseURL: tt.in})
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%q: err = %v, want %q", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || c.BaseURL() != tt.want {
			t.Errorf("%q: %v, %v; want %s", tt.in, c, err, tt.want)
		}
	}
}

// TestOpenAIStreamVariants: fields real servers add to the stream, played as
// the bytes they send: vLLM's reasoning (its new name for
// reasoning_content), both names at once (the text once), and llama.cpp's
// timings as the call's durations.
func TestOpenAIStreamVariants(t *testing.T) {
	ev := func(delta string, extra string) string {
		return `data: {"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":` + delta + `,"finish_reason":null}]` + extra + "}\n\n"
	}
	end := `data: {"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n"
	tests := []struct {
		name, stream     string
		content, thought string
		eval             time.Duration
	}{
		{name: "vllm reasoning", stream: ev(`{"reasoning":"hmm"}`, "") + ev(`{"content":"ok"}`, "") + end, content: "ok", thought: "hmm"},
		{name: "both names", stream: ev(`{"reasoning_content":"hmm","reasoning":"hmm"}`, "") + ev(`{"content":"ok"}`, "") + end, content: "ok", thought: "hmm"},
		{name: "llama.cpp timings", stream: ev(`{"content":"ok"}`, `,"timings":{"prompt_ms":12.5,"predicted_ms":250}`) + end, content: "ok", eval: 250 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, tt.stream)
			}))
			defer srv.Close()
			c, err := llm.NewOpenAI(llm.OpenAIConfig{BaseURL: srv.URL + "/v1"})
			if err != nil {
				t.Fatal(err)
			}
			r, err := c.Chat(context.Background(), llm.ChatRequest{Model: "m", Messages: user("hi")}, nil)
			if err != nil || r.Content != tt.content || r.Thinking != tt.thought {
				t.Fatalf("reply %q, thinking %q, %v", r.Content, r.Thinking, err)
			}
			if tt.eval != 0 && (r.Usage.EvalDuration != tt.eval || r.Usage.PromptDuration != 12500*time.Microsecond) {
				t.Errorf("usage %+v", r.Usage)
			}
		})
	}
}
