package scripted

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// OpenAIServer is a running scripted server speaking the OpenAI-compatible
// protocol that LM Studio, llama.cpp's llama-server and vLLM speak, on
// 127.0.0.1, answering from the same Script as Server. The client in core/llm
// talks to it through openai-go exactly as it talks to those servers. It serves
//
//	POST /v1/chat/completions  the next scripted reply: with "stream": true as
//	                           server-sent events (reasoning as
//	                           reasoning_content, tool call arguments in
//	                           chunk_size pieces, a usage chunk when
//	                           stream_options.include_usage, then [DONE]);
//	                           otherwise one chat.completion object
//	POST /v1/embeddings        deterministic vectors (see Vector)
//	GET  /v1/models            the chat and embedding models, with llama.cpp's
//	                           meta.n_ctx_train
//	GET  /props                llama.cpp's runtime settings: n_ctx
//
// A script's api_key makes every endpoint demand it as a bearer token (HTTP
// 401 otherwise). A reply's status sets the HTTP status of its error (429 to
// play a rate limit), and its fault plays a broken server: "no_done" ends the
// stream without [DONE], "no_stream" answers a streaming request with one JSON
// object.
type OpenAIServer struct {
	script Script
	url    string
	http   *http.Server

	mu       sync.Mutex
	next     int
	requests []OpenAIRequest
	failures []error
}

// OpenAIRequest is a chat request as the scripted OpenAI server received it.
type OpenAIRequest struct {
	Model    string          `json:"model"`
	Messages []OpenAIMessage `json:"messages"`
	Stream   bool            `json:"stream"`
	// StreamOptions.IncludeUsage asks for the usage chunk.
	StreamOptions struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Tools []struct {
		Type     string `json:"type"`
		Function struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			Parameters  json.RawMessage `json:"parameters"`
		} `json:"function"`
	} `json:"tools"`
	MaxTokens          int             `json:"max_tokens"`
	Temperature        *float64        `json:"temperature"`
	ChatTemplateKwargs map[string]any  `json:"chat_template_kwargs"`
	ResponseFormat     json.RawMessage `json:"response_format"`
}

// OpenAIMessage is one message of an OpenAIRequest; Content is the text
// (parts joined when the client sent a list).
type OpenAIMessage struct {
	Role       string           `json:"role"`
	Content    openAIContent    `json:"content"`
	ToolCalls  []openAIToolCall `json:"tool_calls,omitempty"`
	ToolCallID string           `json:"tool_call_id,omitempty"`
}

// openAIContent reads a message content given as a string or a list of parts.
type openAIContent string

func (c *openAIContent) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err == nil {
		*c = openAIContent(s)
		return nil
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if err := json.Unmarshal(b, &parts); err != nil {
		if string(b) == "null" {
			return nil
		}
		return fmt.Errorf("content: want a string or a list of parts: %w", err)
	}
	var sb strings.Builder
	for _, p := range parts {
		sb.WriteString(p.Text)
	}
	*c = openAIContent(sb.String())
	return nil
}

type openAIToolCall struct {
	Index    *int   `json:"index,omitempty"`
	ID       string `json:"id,omitempty"`
	Type     string `json:"type,omitempty"`
	Function struct {
		Name      string `json:"name,omitempty"`
		Arguments string `json:"arguments"`
	} `json:"function"`
}

// NewOpenAIServer checks script and serves it on a random port of 127.0.0.1.
// Close it when done.
func NewOpenAIServer(script Script) (*OpenAIServer, error) {
	script, err := script.withDefaults()
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("scripted server: listening on 127.0.0.1: %w", err)
	}
	s := &OpenAIServer{script: script, url: "http://" + ln.Addr().String() + "/v1"}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.auth(s.chat))
	mux.HandleFunc("POST /v1/embeddings", s.auth(s.embed))
	mux.HandleFunc("GET /v1/models", s.auth(s.models))
	mux.HandleFunc("GET /props", s.auth(s.props))
	s.http = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go s.http.Serve(ln) //nolint:errcheck // Serve returns ErrServerClosed after Close.
	return s, nil
}

// URL returns the base URL to hand to llm.NewOpenAI, /v1 included.
func (s *OpenAIServer) URL() string { return s.url }

// Model returns the name of the scripted chat model.
func (s *OpenAIServer) Model() string { return s.script.Model }

// EmbedModel returns the name of the scripted embedding model.
func (s *OpenAIServer) EmbedModel() string { return s.script.EmbedModel }

// Close stops the server and drops open connections, ending any stream.
func (s *OpenAIServer) Close() error { return s.http.Close() }

// Requests returns every chat request received so far, in order.
func (s *OpenAIServer) Requests() []OpenAIRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// Failures returns the script violations seen so far (see Server.Failures).
func (s *OpenAIServer) Failures() []error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.failures)
}

// Remaining returns the number of replies not yet served.
func (s *OpenAIServer) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.script.Replies) - s.next
}

// Seek makes reply i the next one served (see Server.Seek).
func (s *OpenAIServer) Seek(i int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next = max(0, min(i, len(s.script.Replies)))
}

func (s *OpenAIServer) take(req OpenAIRequest) (Reply, int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, req)
	if s.script.Choose != nil {
		i := s.next
		s.next++
		r, ok := s.script.Choose(req, i)
		if r.ChunkSize == 0 {
			r.ChunkSize = DefaultChunkSize
		}
		if r.DoneReason == "" {
			r.DoneReason = "stop"
		}
		return r, i, ok
	}
	if s.next >= len(s.script.Replies) {
		return Reply{}, s.next, false
	}
	i := s.next
	s.next++
	return s.script.Replies[i], i, true
}

func (s *OpenAIServer) fail(err error) {
	s.mu.Lock()
	s.failures = append(s.failures, err)
	s.mu.Unlock()
}

// openAIError writes the OpenAI error shape.
func openAIError(w http.ResponseWriter, status int, typ, msg string) {
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": msg, "type": typ, "code": status}})
}

func (s *OpenAIServer) auth(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.script.APIKey != "" && r.Header.Get("Authorization") != "Bearer "+s.script.APIKey {
			openAIError(w, http.StatusUnauthorized, "invalid_request_error", "Incorrect API key provided.")
			return
		}
		h(w, r)
	}
}

func (s *OpenAIServer) isChatModel(name string) bool { return name == s.script.Model }
func (s *OpenAIServer) isEmbedModel(name string) bool {
	return name == s.script.EmbedModel
}

func (s *OpenAIServer) chat(w http.ResponseWriter, r *http.Request) {
	var req OpenAIRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		openAIError(w, http.StatusBadRequest, "invalid_request_error", "invalid chat request: "+err.Error())
		return
	}
	switch {
	case req.Model == "":
		openAIError(w, http.StatusBadRequest, "invalid_request_error", "model is required")
		return
	case s.isEmbedModel(req.Model):
		openAIError(w, http.StatusBadRequest, "invalid_request_error", fmt.Sprintf("%q is an embedding model and cannot chat", req.Model))
		return
	case !s.isChatModel(req.Model):
		openAIError(w, http.StatusNotFound, "NotFoundError", fmt.Sprintf("The model `%s` does not exist.", req.Model))
		return
	}
	reply, i, ok := s.take(req)
	if !ok {
		err := fmt.Errorf("scripted model: %s has %d replies and all were used; request %d has no reply (add entries under replies:)",
			orLabel(s.script.Source), len(s.script.Replies), i+1)
		s.fail(err)
		openAIError(w, http.StatusInternalServerError, "server_error", err.Error())
		return
	}
	if reply.Error != "" {
		if reply.Status == http.StatusTooManyRequests {
			w.Header().Set("Retry-After", "0")
		}
		openAIError(w, cmpOr(reply.Status, http.StatusInternalServerError), "server_error", reply.Error)
		return
	}
	if reply.ExpectContains != "" {
		last := ""
		for j := len(req.Messages) - 1; j >= 0; j-- {
			if m := req.Messages[j]; m.Role == "user" || m.Role == "tool" {
				last = string(m.Content)
				break
			}
		}
		if !strings.Contains(last, reply.ExpectContains) {
			err := fmt.Errorf("scripted model: %s: expected the last user message to contain %q; it was %q",
				s.script.where(i), reply.ExpectContains, clip(last, 300))
			s.fail(err)
			openAIError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
			return
		}
	}

	if reply.ExpectInRequest != "" && !slices.ContainsFunc(req.Messages, func(m OpenAIMessage) bool { return strings.Contains(string(m.Content), reply.ExpectInRequest) }) {
		err := fmt.Errorf("scripted model: %s: expected a message of the request to contain %q; none did", s.script.where(i), reply.ExpectInRequest)
		s.fail(err)
		openAIError(w, http.StatusBadRequest, "invalid_request_error", err.Error())
		return
	}

	id := fmt.Sprintf("chatcmpl-scripted-%d", i)
	created := time.Now().Unix()
	prompt := 0
	for _, m := range req.Messages {
		prompt += 4 + (len(m.Content)+3)/4
		for _, tc := range m.ToolCalls {
			prompt += (len(tc.Function.Name) + len(tc.Function.Arguments) + 3) / 4
		}
	}
	prompt = min(prompt, s.script.ContextLength)
	output := max(1, (len(reply.Content)+len(reply.Thinking)+argsLen(reply.ToolCalls)+3)/4)
	usage := map[string]int{"prompt_tokens": prompt, "completion_tokens": output, "total_tokens": prompt + output}
	finish := reply.DoneReason
	if len(reply.ToolCalls) > 0 && finish == "stop" {
		finish = "tool_calls"
	}
	calls := openAIToolCalls(reply.ToolCalls)

	if !req.Stream || reply.Fault == FaultNoStream {
		msg := map[string]any{"role": "assistant", "content": reply.Content}
		if reply.Thinking != "" {
			msg["reasoning_content"] = reply.Thinking
		}
		if len(calls) > 0 {
			msg["tool_calls"] = calls
		}
		writeJSON(w, http.StatusOK, map[string]any{
			"id": id, "object": "chat.completion", "created": created, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
			"usage":   usage,
		})
		return
	}

	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	send := func(v any) bool {
		b, err := json.Marshal(v)
		if err != nil {
			return false
		}
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return true
	}
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{
			"id": id, "object": "chat.completion.chunk", "created": created, "model": req.Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}},
		}
	}
	var deltas []map[string]any
	for _, part := range split(reply.Thinking, reply.ChunkSize) {
		deltas = append(deltas, map[string]any{"reasoning_content": part})
	}
	for _, part := range split(reply.Content, reply.ChunkSize) {
		deltas = append(deltas, map[string]any{"content": part})
	}
	for k, c := range calls {
		// The first piece names the call; the arguments follow in pieces,
		// as real servers stream them.
		deltas = append(deltas, map[string]any{"tool_calls": []any{map[string]any{
			"index": k, "id": c.ID, "type": "function", "function": map[string]any{"name": c.Function.Name, "arguments": ""},
		}}})
		for _, part := range split(c.Function.Arguments, reply.ChunkSize) {
			deltas = append(deltas, map[string]any{"tool_calls": []any{map[string]any{
				"index": k, "function": map[string]any{"arguments": part},
			}}})
		}
	}
	if !send(chunk(map[string]any{"role": "assistant", "content": ""}, nil)) {
		return
	}
	for n, d := range deltas {
		if n > 0 && !pause(r.Context(), reply.Delay) {
			return // the client hung up
		}
		if !send(chunk(d, nil)) {
			return
		}
	}
	if !send(chunk(map[string]any{}, finish)) {
		return
	}
	if req.StreamOptions.IncludeUsage {
		if !send(map[string]any{"id": id, "object": "chat.completion.chunk", "created": created, "model": req.Model, "choices": []any{}, "usage": usage}) {
			return
		}
	}
	if reply.Fault == FaultNoDone {
		return
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	if flusher != nil {
		flusher.Flush()
	}
}

func cmpOr(a, b int) int {
	if a != 0 {
		return a
	}
	return b
}

func openAIToolCalls(calls []ToolCall) []openAIToolCall {
	var out []openAIToolCall
	for i, c := range calls {
		var tc openAIToolCall
		sum := sha256.Sum256(fmt.Appendf(nil, "%d:%s:%s", i, c.Name, c.Arguments))
		tc.ID = "call_" + hex.EncodeToString(sum[:6])
		tc.Type = "function"
		tc.Function.Name = c.Name
		tc.Function.Arguments = string(c.Arguments)
		if tc.Function.Arguments == "" {
			tc.Function.Arguments = "{}"
		}
		out = append(out, tc)
	}
	return out
}

func (s *OpenAIServer) embed(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Model          string          `json:"model"`
		Input          json.RawMessage `json:"input"`
		Dimensions     int             `json:"dimensions"`
		EncodingFormat string          `json:"encoding_format"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		openAIError(w, http.StatusBadRequest, "invalid_request_error", "invalid embeddings request: "+err.Error())
		return
	}
	if !s.isEmbedModel(req.Model) {
		openAIError(w, http.StatusNotFound, "NotFoundError", fmt.Sprintf("The model `%s` does not exist.", req.Model))
		return
	}
	if req.EncodingFormat != "" && req.EncodingFormat != "float" {
		openAIError(w, http.StatusBadRequest, "invalid_request_error", fmt.Sprintf("encoding_format %q is not supported; use float", req.EncodingFormat))
		return
	}
	var texts []string
	var one string
	if err := json.Unmarshal(req.Input, &one); err == nil {
		texts = []string{one}
	} else if err := json.Unmarshal(req.Input, &texts); err != nil {
		openAIError(w, http.StatusBadRequest, "invalid_request_error", "input: want a string or a list of strings")
		return
	}
	dims := s.script.EmbedDims
	if req.Dimensions > 0 {
		dims = req.Dimensions
	}
	data := make([]any, len(texts))
	tokens := 0
	for i, t := range texts {
		data[i] = map[string]any{"object": "embedding", "index": i, "embedding": Vector(t, dims)}
		tokens += max(1, (len(t)+3)/4)
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"object": "list", "model": req.Model, "data": data,
		"usage": map[string]int{"prompt_tokens": tokens, "total_tokens": tokens},
	})
}

func (s *OpenAIServer) models(w http.ResponseWriter, r *http.Request) {
	entry := func(id string, nctx int) map[string]any {
		return map[string]any{"id": id, "object": "model", "created": 0, "owned_by": "scripted", "meta": map[string]any{"n_ctx_train": nctx}}
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []any{
		entry(s.script.Model, s.script.ContextLength),
		entry(s.script.EmbedModel, 512),
	}})
}

func (s *OpenAIServer) props(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"default_generation_settings": map[string]any{"n_ctx": s.script.ContextLength},
		"model_path":                  s.script.Model,
	})
}

// Running is a running scripted server of either protocol.
type Running interface {
	URL() string
	Model() string
	EmbedModel() string
	Failures() []error
	Remaining() int
	Seek(i int)
	Close() error
}

// Start serves script with the protocol provider names: "ollama" (or "")
// for Server, "openai" for OpenAIServer.
func Start(provider string, script Script) (Running, error) {
	switch provider {
	case "", "ollama":
		return NewServer(script)
	case "openai":
		return NewOpenAIServer(script)
	}
	return nil, fmt.Errorf("scripted server: provider %q: want ollama or openai", provider)
}
