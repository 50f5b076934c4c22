// Package scripted is a stand-in Ollama server that answers from a script.
//
// No model runs on the machines Exocortex is built and tested on, and a
// newcomer should be able to watch the agent loop before installing one. The
// server speaks Ollama's HTTP protocol (the parts Exocortex uses), so the client
// in core/llm talks to it through github.com/ollama/ollama/api exactly as it
// talks to Ollama: the same streaming, the same error shapes, the same code
// path. It serves
//
//	POST /api/chat     the next scripted reply, streamed as NDJSON in chunks
//	                   (or as one object when "stream": false), ending with a
//	                   done object carrying token counts and durations
//	POST /api/embed    deterministic vectors (see Vector)
//	GET  /api/tags     the script's chat and embedding models
//	POST /api/show     model details, including the context length
//	GET  /api/version  a version string
//	HEAD /             "Ollama is running"
//
// It records every chat request, so a test can assert what the model was shown
// (that an extension's prompt block reached it, say). It backs
// `exocortex --model script:FILE` and the tests; it is not a mock of the client.
//
// Token counts come from a scripted tokenizer (Script.BytesPerToken, four
// bytes a token by default, plus four a message) and durations are measured
// on the server; neither comes from a real model. Like Ollama, the server
// keeps only what fits num_ctx and reports that count; Log keeps the whole
// count of every request, so a test can prove no prompt was cut.
package scripted

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/ollama/ollama/api"
)

// Version is what GET /api/version reports: the Ollama API version the server
// imitates, marked as scripted.
const Version = "0.17.4-scripted"

// Server is a running scripted Ollama server on 127.0.0.1.
type Server struct {
	script  Script
	url     string
	http    *http.Server
	started time.Time

	mu       sync.Mutex
	next     int
	requests []api.ChatRequest
	log      []Logged
	failures []error
}

// Logged is what the server measured of one chat request.
type Logged struct {
	// PromptTokens is the whole prompt's count by the scripted tokenizer,
	// before any cut to the window.
	PromptTokens int
	// NumCtx is the window the request asked for (0 when it named none).
	NumCtx int
}

// Overflow reports whether the prompt was larger than the window it asked for
// (Ollama would have cut its front without a word).
func (l Logged) Overflow() bool { return l.NumCtx > 0 && l.PromptTokens > l.NumCtx }

// NewServer checks script and starts serving it on a random port of
// 127.0.0.1. Close it when done.
func NewServer(script Script) (*Server, error) {
	script, err := script.withDefaults()
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("scripted server: listening on 127.0.0.1: %w", err)
	}
	s := &Server{script: script, url: "http://" + ln.Addr().String(), started: time.Now().UTC()}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /api/chat", s.chat)
	mux.HandleFunc("POST /api/embed", s.embed)
	mux.HandleFunc("GET /api/tags", s.tags)
	mux.HandleFunc("POST /api/show", s.show)
	mux.HandleFunc("GET /api/version", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]string{"version": Version})
	})
	mux.HandleFunc("GET /{$}", running)
	mux.HandleFunc("HEAD /{$}", running)
	s.http = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go s.http.Serve(ln) //nolint:errcheck // Serve returns ErrServerClosed after Close.
	return s, nil
}

func running(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		fmt.Fprint(w, "Ollama is running")
	}
}

// URL returns the base URL to hand to llm.New, e.g. "http://127.0.0.1:41234".
func (s *Server) URL() string { return s.url }

// Model returns the name of the scripted chat model.
func (s *Server) Model() string { return s.script.Model }

// EmbedModel returns the name of the scripted embedding model.
func (s *Server) EmbedModel() string { return s.script.EmbedModel }

// Close stops the server and drops open connections, ending any stream.
func (s *Server) Close() error { return s.http.Close() }

// Requests returns every chat request received so far, in order, including
// those answered with an error.
func (s *Server) Requests() []api.ChatRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// Log returns the measurements of every chat request so far, in the order of
// Requests.
func (s *Server) Log() []Logged {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.log)
}

// CountTokens counts msgs with the script's tokenizer, as the server does.
func (s *Server) CountTokens(msgs []api.Message) int {
	return countTokens(msgs, s.script.BytesPerToken)
}

// Failures returns the script violations seen so far: an expect_contains that
// did not match, a request after the last reply. A test that ends with
// Failures() empty knows the loop asked what the script expected.
func (s *Server) Failures() []error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.failures)
}

// Remaining returns the number of replies not yet served.
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.script.Replies) - s.next
}

// Seek makes reply i the next one served, clamped to the script: a replay
// that stopped a turn early skips the replies that no longer fit.
func (s *Server) Seek(i int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next = max(0, min(i, len(s.script.Replies)))
}

// errorBody is Ollama's error shape.
type errorBody struct {
	Error string `json:"error"`
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v) //nolint:errcheck // the client went away; nothing to do.
}

func writeError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, errorBody{Error: msg})
}

func canonical(name string) string {
	name = strings.ToLower(strings.TrimSpace(name))
	if last := name[strings.LastIndex(name, "/")+1:]; name != "" && !strings.Contains(last, ":") {
		name += ":latest"
	}
	return name
}

func (s *Server) isChatModel(name string) bool { return canonical(name) == canonical(s.script.Model) }
func (s *Server) isEmbedModel(name string) bool {
	return canonical(name) == canonical(s.script.EmbedModel)
}

// take returns the next reply and its index, recording req; ok is false when
// the script has run out.
func (s *Server) take(req api.ChatRequest) (Reply, int, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, req)
	s.log = append(s.log, Logged{PromptTokens: countTokens(req.Messages, s.script.BytesPerToken), NumCtx: numCtx(req.Options)})
	if s.next >= len(s.script.Replies) {
		return Reply{}, s.next, false
	}
	i := s.next
	s.next++
	return s.script.Replies[i], i, true
}

func (s *Server) fail(err error) {
	s.mu.Lock()
	s.failures = append(s.failures, err)
	s.mu.Unlock()
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	var req api.ChatRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid chat request: "+err.Error())
		return
	}
	switch {
	case req.Model == "":
		writeError(w, http.StatusBadRequest, "model is required")
		return
	case s.isEmbedModel(req.Model):
		writeError(w, http.StatusBadRequest, fmt.Sprintf("%q does not support chat", req.Model))
		return
	case !s.isChatModel(req.Model):
		writeError(w, http.StatusNotFound, fmt.Sprintf("model %q not found, try pulling it first (the scripted server has %q)", req.Model, s.script.Model))
		return
	}
	reply, i, ok := s.take(req)
	if !ok {
		err := fmt.Errorf("scripted model: %s has %d replies and all were used; request %d has no reply (add entries under replies:)",
			orLabel(s.script.Source), len(s.script.Replies), i+1)
		s.fail(err)
		writeError(w, http.StatusInternalServerError, err.Error())
		return
	}
	if reply.Error != "" {
		writeError(w, cmpOr(reply.Status, http.StatusInternalServerError), reply.Error)
		return
	}
	if reply.Hang {
		<-r.Context().Done()
		return
	}
	if reply.ExpectContains != "" {
		last := lastUserText(req.Messages)
		if !strings.Contains(last, reply.ExpectContains) {
			err := fmt.Errorf("scripted model: %s: expected the last user message to contain %q; it was %q",
				s.script.where(i), reply.ExpectContains, clip(last, 300))
			s.fail(err)
			writeError(w, http.StatusBadRequest, err.Error())
			return
		}
	}

	if reply.ExpectInRequest != "" && !slices.ContainsFunc(req.Messages, func(m api.Message) bool { return strings.Contains(m.Content, reply.ExpectInRequest) }) {
		err := fmt.Errorf("scripted model: %s: expected a message of the request to contain %q; none did (last user message %q)",
			s.script.where(i), reply.ExpectInRequest, clip(lastUserText(req.Messages), 300))
		s.fail(err)
		writeError(w, http.StatusBadRequest, err.Error())
		return
	}

	promptTokens := countTokens(req.Messages, s.script.BytesPerToken)
	if n := numCtx(req.Options); n > 0 && promptTokens > n {
		promptTokens = n // Ollama, too, keeps only what fits the window.
	}
	final := api.ChatResponse{
		Model:      req.Model,
		Message:    api.Message{Role: "assistant"},
		Done:       true,
		DoneReason: reply.DoneReason,
	}
	final.PromptEvalCount = promptTokens
	final.EvalCount = max(1, (len(reply.Content)+len(reply.Thinking)+argsLen(reply.ToolCalls)+3)/4)
	final.LoadDuration = time.Since(start)
	calls := apiToolCalls(reply.ToolCalls)

	if req.Stream != nil && !*req.Stream {
		final.Message.Content = reply.Content
		final.Message.Thinking = reply.Thinking
		final.Message.ToolCalls = calls
		final.PromptEvalDuration = time.Since(start) - final.LoadDuration
		final.EvalDuration = max(time.Microsecond, time.Since(start)-final.LoadDuration-final.PromptEvalDuration)
		final.TotalDuration = time.Since(start)
		final.CreatedAt = time.Now().UTC()
		writeJSON(w, http.StatusOK, final)
		return
	}

	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	enc := json.NewEncoder(w)
	send := func(resp api.ChatResponse) bool {
		resp.CreatedAt = time.Now().UTC()
		if err := enc.Encode(resp); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return true
	}
	var chunks []api.Message
	for _, part := range split(reply.Thinking, reply.ChunkSize) {
		chunks = append(chunks, api.Message{Role: "assistant", Thinking: part})
	}
	for _, part := range split(reply.Content, reply.ChunkSize) {
		chunks = append(chunks, api.Message{Role: "assistant", Content: part})
	}
	if len(calls) > 0 {
		chunks = append(chunks, api.Message{Role: "assistant", ToolCalls: calls})
	}
	evalStart := time.Now()
	final.PromptEvalDuration = evalStart.Sub(start) - final.LoadDuration
	for n, msg := range chunks {
		if n > 0 && !pause(r.Context(), reply.Delay) {
			return // the client hung up
		}
		if !send(api.ChatResponse{Model: req.Model, Message: msg}) {
			return
		}
	}
	final.EvalDuration = max(time.Microsecond, time.Since(evalStart))
	final.TotalDuration = time.Since(start)
	send(final)
}

// pause waits d, or until ctx ends; it reports whether to go on.
func pause(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// split cuts text into pieces of n runes.
func split(text string, n int) []string {
	var parts []string
	runes := []rune(text)
	for len(runes) > 0 {
		k := min(n, len(runes))
		parts = append(parts, string(runes[:k]))
		runes = runes[k:]
	}
	return parts
}

func apiToolCalls(calls []ToolCall) []api.ToolCall {
	var out []api.ToolCall
	for i, c := range calls {
		args := api.NewToolCallFunctionArguments()
		if len(c.Arguments) > 0 {
			// Checked by withDefaults: the arguments are a JSON object.
			json.Unmarshal(c.Arguments, &args) //nolint:errcheck
		}
		sum := sha256.Sum256(fmt.Appendf(nil, "%d:%s:%s", i, c.Name, c.Arguments))
		out = append(out, api.ToolCall{
			ID:       "call_" + hex.EncodeToString(sum[:6]),
			Function: api.ToolCallFunction{Index: i, Name: c.Name, Arguments: args},
		})
	}
	return out
}

func argsLen(calls []ToolCall) int {
	n := 0
	for _, c := range calls {
		n += len(c.Name) + len(c.Arguments)
	}
	return n
}

// countTokens is the scripted tokenizer: bytesPerToken bytes a token, plus
// four for each message's role markers.
func countTokens(msgs []api.Message, bytesPerToken float64) int {
	n := 0
	tok := func(b int) int { return int(math.Ceil(float64(b) / bytesPerToken)) }
	for _, m := range msgs {
		n += 4 + tok(len(m.Content)+len(m.Thinking))
		for _, tc := range m.ToolCalls {
			n += tok(len(tc.Function.Name) + len(tc.Function.Arguments.String()))
		}
	}
	return n
}

func numCtx(opts map[string]any) int {
	if v, ok := opts["num_ctx"].(float64); ok {
		return int(v)
	}
	return 0
}

// lastUserText is the content of the last message from the user side.
func lastUserText(msgs []api.Message) string {
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == "user" || msgs[i].Role == "tool" {
			return msgs[i].Content
		}
	}
	return ""
}

func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

func orLabel(source string) string {
	if source == "" {
		return "the script"
	}
	return "the script " + source
}

func (s *Server) embed(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	var req api.EmbedRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid embed request: "+err.Error())
		return
	}
	if !s.isEmbedModel(req.Model) {
		writeError(w, http.StatusNotFound, fmt.Sprintf("model %q not found, try pulling it first (the scripted server embeds with %q)", req.Model, s.script.EmbedModel))
		return
	}
	var texts []string
	switch in := req.Input.(type) {
	case string:
		texts = []string{in}
	case []any:
		for i, v := range in {
			t, ok := v.(string)
			if !ok {
				writeError(w, http.StatusBadRequest, fmt.Sprintf("invalid input type: input[%d] is not a string", i))
				return
			}
			texts = append(texts, t)
		}
	default:
		writeError(w, http.StatusBadRequest, "invalid input type: want a string or a list of strings")
		return
	}
	dims := s.script.EmbedDims
	if req.Dimensions > 0 {
		dims = req.Dimensions
	}
	resp := api.EmbedResponse{Model: req.Model, Embeddings: make([][]float32, len(texts))}
	for i, t := range texts {
		resp.Embeddings[i] = Vector(t, dims)
		resp.PromptEvalCount += max(1, (len(t)+3)/4)
	}
	resp.TotalDuration = time.Since(start)
	writeJSON(w, http.StatusOK, resp)
}

func (s *Server) tags(w http.ResponseWriter, r *http.Request) {
	model := func(name, family string) api.ListModelResponse {
		sum := sha256.Sum256([]byte(name))
		return api.ListModelResponse{
			Name:       canonical(name),
			Model:      canonical(name),
			ModifiedAt: s.started,
			Digest:     hex.EncodeToString(sum[:]),
			Details:    api.ModelDetails{Format: "scripted", Family: family, ParameterSize: "0", QuantizationLevel: "none"},
		}
	}
	writeJSON(w, http.StatusOK, api.ListResponse{Models: []api.ListModelResponse{
		model(s.script.Model, "scripted"),
		model(s.script.EmbedModel, "scripted-embed"),
	}})
}

func (s *Server) show(w http.ResponseWriter, r *http.Request) {
	var req api.ShowRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeError(w, http.StatusBadRequest, "invalid show request: "+err.Error())
		return
	}
	name := req.Model
	if name == "" {
		name = req.Name
	}
	resp := api.ShowResponse{ModifiedAt: s.started}
	switch {
	case s.isChatModel(name):
		resp.Details = api.ModelDetails{Format: "scripted", Family: "scripted", ParameterSize: "0", QuantizationLevel: "none"}
		resp.ModelInfo = map[string]any{"general.architecture": "scripted", "scripted.context_length": s.script.ContextLength}
		resp.Capabilities = append(resp.Capabilities, "completion", "tools")
	case s.isEmbedModel(name):
		resp.Details = api.ModelDetails{Format: "scripted", Family: "scripted-embed", ParameterSize: "0", QuantizationLevel: "none"}
		resp.ModelInfo = map[string]any{"general.architecture": "scripted", "scripted.context_length": 512, "scripted.embedding_length": s.script.EmbedDims}
		resp.Capabilities = append(resp.Capabilities, "embedding")
	default:
		writeError(w, http.StatusNotFound, fmt.Sprintf("model '%s' not found", name))
		return
	}
	writeJSON(w, http.StatusOK, resp)
}
