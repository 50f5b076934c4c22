// Package llm is Exocortex's model client: it talks to an Ollama server through
// Ollama's own Go client (github.com/ollama/ollama/api) and parses what the model
// replies into a tool request.
//
// Chat streams one reply, handing each piece to a callback as it arrives (the
// loop turns them into response_stream_chunk hooks and the UI into live text),
// and returns the whole Reply with native tool calls, token counts and timings.
// Every request names its context window (num_ctx): Ollama's default is small,
// and a prompt longer than the window is cut from the front without an error,
// which is the most common silent failure with local models.
//
// ParseReply reads the tool request out of a Reply: native tool calls when the
// model made any, otherwise the JSON object of the Agent Zero reply format,
// found and repaired leniently because small local models rarely write it
// exactly. When nothing usable is there, the *ParseError says precisely why,
// so the loop can answer with the right signal and the model with the right
// correction.
//
// Probe checks before a session starts that the server answers and has the
// model, and says how to fix it when not. Tests and `--model script:FILE` point
// the client at the scripted server in package core/llm/scripted, which speaks
// the same HTTP protocol, so the code path is the same with or without a model.
package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/ollama/ollama/api"
	"github.com/ollama/ollama/envconfig"
)

// Errors a caller may want to tell apart with errors.Is. The returned errors
// wrap them with the address, the model and the way to fix it.
var (
	// ErrUnreachable means nothing answered at the server's address.
	ErrUnreachable = errors.New("model server unreachable")
	// ErrModelNotFound means the server answered but does not have the model.
	ErrModelNotFound = errors.New("model not found")
	// ErrIncomplete means the reply stream ended before the server said it
	// was done (the server stopped or the connection broke).
	ErrIncomplete = errors.New("reply stream ended early")
)

// defaultPort is Ollama's port, used when an address gives none.
const defaultPort = "11434"

// Client talks to one Ollama server: the Ollama Provider. It is safe for
// concurrent use.
type Client struct {
	api   *api.Client
	base  string
	usage usageBox
}

var _ Provider = (*Client)(nil)

// OllamaConfig configures an Ollama client.
type OllamaConfig struct {
	// BaseURL is the server, e.g. "http://127.0.0.1:11434", "localhost:11434"
	// or "gpu-box"; "" means OLLAMA_HOST, or Ollama's default address when
	// that is unset, exactly as the ollama command reads it.
	BaseURL string
	// Timeout bounds the wait for the server to start answering a call
	// (loading a model included); 0 means DefaultTimeout. A reply then
	// streams for as long as it takes: ctx bounds the whole call.
	Timeout time.Duration
}

// New returns a client for the Ollama server at baseURL (see
// OllamaConfig.BaseURL) with the default timeout.
func New(baseURL string) (*Client, error) { return NewOllama(OllamaConfig{BaseURL: baseURL}) }

// NewOllama returns a client for the Ollama server cfg names.
func NewOllama(cfg OllamaConfig) (*Client, error) {
	var u *url.URL
	if strings.TrimSpace(cfg.BaseURL) == "" {
		u = envconfig.Host()
	} else {
		var err error
		if u, err = parseBaseURL(cfg.BaseURL); err != nil {
			return nil, err
		}
	}
	return &Client{api: api.NewClient(u, httpClient(cfg.Timeout)), base: u.String()}, nil
}

// httpClient has no overall timeout (a reply may stream for minutes; ctx
// bounds each call) but bounds the wait for the response headers.
func httpClient(timeout time.Duration) *http.Client {
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.ResponseHeaderTimeout = timeout
	return &http.Client{Transport: t}
}

// Name is ProviderOllama.
func (c *Client) Name() string { return ProviderOllama }

// LastUsage is the usage of the last completed Chat.
func (c *Client) LastUsage() Usage { return c.usage.get() }

// parseBaseURL accepts a URL or a bare host[:port]; a bare host gets Ollama's
// port, a URL with a scheme keeps the scheme's default port.
func parseBaseURL(s string) (*url.URL, error) {
	s = strings.TrimSpace(s)
	bare := !strings.Contains(s, "://")
	if bare {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("ollama address %q: want http://HOST:PORT or HOST[:PORT]", strings.TrimPrefix(s, "http://"))
	}
	if bare && u.Port() == "" {
		u.Host = net.JoinHostPort(u.Hostname(), defaultPort)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	return u, nil
}

// BaseURL returns the server address the client talks to.
func (c *Client) BaseURL() string { return c.base }

// Chat sends req and streams the reply. onChunk, when not nil, is called with
// each new piece of content or thinking, in order, from the calling goroutine;
// an error it returns stops the stream and is returned by Chat. Cancelling ctx
// closes the connection and Chat returns promptly with ctx's error. On any
// error, the returned Reply holds what arrived before it.
func (c *Client) Chat(ctx context.Context, req ChatRequest, onChunk func(Chunk) error) (Reply, error) {
	areq, err := toAPIRequest(req)
	if err != nil {
		return Reply{}, err
	}
	numCtx := areq.Options["num_ctx"].(int)

	var (
		reply    = Reply{Model: req.Model, Usage: Usage{NumCtx: numCtx}}
		text     streamText
		done     bool
		chunkErr error
	)
	err = c.api.Chat(ctx, areq, func(r api.ChatResponse) error {
		ch := text.add(r.Message.Content, r.Message.Thinking)
		if r.Done {
			last := text.end()
			ch.Content += last.Content
			ch.Thinking += last.Thinking
		}
		for _, tc := range r.Message.ToolCalls {
			reply.ToolCalls = append(reply.ToolCalls, fromAPIToolCall(tc))
		}
		if r.Model != "" {
			reply.Model = r.Model
		}
		if onChunk != nil && !ch.empty() {
			if err := onChunk(ch); err != nil {
				chunkErr = err
				return err
			}
		}
		if r.Done {
			done = true
			reply.DoneReason = r.DoneReason
			reply.Usage.PromptTokens = r.PromptEvalCount
			reply.Usage.OutputTokens = r.EvalCount
			reply.Usage.TotalDuration = r.TotalDuration
			reply.Usage.LoadDuration = r.LoadDuration
			reply.Usage.PromptDuration = r.PromptEvalDuration
			reply.Usage.EvalDuration = r.EvalDuration
		}
		return nil
	})
	if !done {
		text.end()
	}
	reply.Content = text.content.String()
	reply.Thinking = text.thinking.String()
	switch {
	case chunkErr != nil:
		return reply, chunkErr
	case err == nil && done:
		c.usage.set(reply.Usage)
		return reply, nil
	case ctx.Err() != nil:
		// Checked before err: ollama/api ends a stream quietly when the body
		// read fails, so a cancelled call may come back with err == nil.
		return reply, fmt.Errorf("chat with %s at %s: %w", req.Model, c.base, ctx.Err())
	case err != nil:
		return reply, c.explain(err, req.Model)
	default:
		return reply, fmt.Errorf("chat with %s at %s: %w after %d bytes (the server stopped or the connection broke; see the Ollama server log)",
			req.Model, c.base, ErrIncomplete, len(reply.Content))
	}
}

// toAPIRequest builds the ollama/api request, num_ctx included.
func toAPIRequest(req ChatRequest) (*api.ChatRequest, error) {
	if strings.TrimSpace(req.Model) == "" {
		return nil, errors.New("chat request: no model named (e.g. qwen3:8b)")
	}
	if len(req.Messages) == 0 {
		return nil, fmt.Errorf("chat request to %s: no messages", req.Model)
	}
	opts := maps.Clone(req.Options)
	if opts == nil {
		opts = make(map[string]any)
	}
	numCtx := req.NumCtx
	if numCtx <= 0 {
		numCtx = DefaultNumCtx
		if v, ok := opts["num_ctx"]; ok {
			n, err := asInt(v)
			if err != nil || n <= 0 {
				return nil, fmt.Errorf("chat request to %s: option num_ctx = %v: want a positive integer", req.Model, v)
			}
			numCtx = n
		}
	}
	opts["num_ctx"] = numCtx

	stream := true
	areq := &api.ChatRequest{
		Model:    req.Model,
		Stream:   &stream,
		Options:  opts,
		Format:   req.Format,
		Messages: make([]api.Message, 0, len(req.Messages)),
	}
	if req.Think != nil {
		areq.Think = &api.ThinkValue{Value: *req.Think}
	}
	for i, m := range req.Messages {
		am := api.Message{Role: m.Role, Content: m.Content, Thinking: m.Thinking, ToolName: m.ToolName}
		for _, tc := range m.ToolCalls {
			atc, err := toAPIToolCall(tc)
			if err != nil {
				return nil, fmt.Errorf("chat request to %s: message %d: %w", req.Model, i, err)
			}
			am.ToolCalls = append(am.ToolCalls, atc)
		}
		areq.Messages = append(areq.Messages, am)
	}
	for _, t := range req.Tools {
		at, err := toAPITool(t)
		if err != nil {
			return nil, fmt.Errorf("chat request to %s: %w", req.Model, err)
		}
		areq.Tools = append(areq.Tools, at)
	}
	return areq, nil
}

func asInt(v any) (int, error) {
	switch n := v.(type) {
	case int:
		return n, nil
	case int64:
		return int(n), nil
	case float64:
		if n == float64(int(n)) {
			return int(n), nil
		}
	case json.Number:
		i, err := n.Int64()
		return int(i), err
	}
	return 0, fmt.Errorf("not an integer: %v", v)
}

func toAPIToolCall(tc ToolCall) (api.ToolCall, error) {
	args := api.NewToolCallFunctionArguments()
	if len(tc.Arguments) > 0 {
		if err := json.Unmarshal(tc.Arguments, &args); err != nil {
			return api.ToolCall{}, fmt.Errorf("tool call %s: arguments are not a JSON object: %w", tc.Name, err)
		}
	}
	return api.ToolCall{ID: tc.ID, Function: api.ToolCallFunction{Name: tc.Name, Arguments: args}}, nil
}

func fromAPIToolCall(tc api.ToolCall) ToolCall {
	// Marshalling the ordered map keeps the model's key order; it cannot fail
	// for values that came out of JSON.
	args, err := json.Marshal(tc.Function.Arguments)
	if err != nil {
		args = []byte("{}")
	}
	return ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: args}
}

// emptyParameters is the schema of a tool without arguments.
var emptyParameters = []byte(`{"type":"object","properties":{}}`)

func toAPITool(t Tool) (api.Tool, error) {
	if strings.TrimSpace(t.Name) == "" {
		return api.Tool{}, errors.New("a tool without a name")
	}
	schema := []byte(t.Parameters)
	if len(schema) == 0 || string(schema) == "null" {
		schema = emptyParameters
	}
	var params api.ToolFunctionParameters
	if err := json.Unmarshal(schema, &params); err != nil {
		return api.Tool{}, fmt.Errorf("tool %s: parameters are not a JSON Schema object: %w", t.Name, err)
	}
	if params.Type == "" {
		params.Type = "object"
	}
	if params.Properties == nil {
		params.Properties = api.NewToolPropertiesMap()
	}
	return api.Tool{
		Type:     "function",
		Function: api.ToolFunction{Name: t.Name, Description: t.Description, Parameters: params},
	}, nil
}

// explain turns a transport or status error into one that says what to do.
func (c *Client) explain(err error, model string) error {
	var status api.StatusError
	if errors.As(err, &status) && status.StatusCode == http.StatusNotFound && model != "" {
		return fmt.Errorf("%w: the Ollama server at %s does not have %q (%s); download it with: ollama pull %s",
			ErrModelNotFound, c.base, model, status.ErrorMessage, model)
	}
	if unreachable(err) {
		return fmt.Errorf("%w: nothing answered at %s (%v); start Ollama with: ollama serve, or point OLLAMA_HOST at a running server",
			ErrUnreachable, c.base, err)
	}
	if model != "" {
		return fmt.Errorf("ollama at %s, model %s: %w", c.base, model, err)
	}
	return fmt.Errorf("ollama at %s: %w", c.base, err)
}

func unreachable(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var dns *net.DNSError
	return errors.As(err, &dns)
}

// ServerInfo is what Probe found.
type ServerInfo struct {
	// BaseURL is the address probed.
	BaseURL string
	// Version is the server's version string.
	Version string
	// Model is the probed model as the server lists it (e.g. "qwen3:latest"
	// for "qwen3"), "" when Probe was not asked about a model.
	Model string
	// Models lists every model the server has.
	Models []string
	// ContextLength is the context the model was trained for, 0 if the server
	// does not say. A NumCtx above it buys nothing.
	ContextLength int
	// Capabilities are the model's capabilities as the server reports them
	// ("completion", "tools", "thinking", "embedding", ...).
	Capabilities []string
}

// HasCapability reports whether the probed model has capability c.
func (s ServerInfo) HasCapability(c string) bool { return slices.Contains(s.Capabilities, c) }

// Probe checks that the server answers and, when model is not "", that it has
// the model. Its errors wrap ErrUnreachable or ErrModelNotFound and say how to
// fix the problem (ollama serve, ollama pull MODEL).
func (c *Client) Probe(ctx context.Context, model string) (ServerInfo, error) {
	info := ServerInfo{BaseURL: c.base}
	v, err := c.api.Version(ctx)
	if err != nil {
		return info, c.explain(err, "")
	}
	info.Version = v
	if model == "" {
		return info, nil
	}
	list, err := c.api.List(ctx)
	if err != nil {
		return info, c.explain(err, "")
	}
	want := canonicalModel(model)
	for _, m := range list.Models {
		info.Models = append(info.Models, m.Name)
		if canonicalModel(m.Name) == want || canonicalModel(m.Model) == want {
			info.Model = m.Name
		}
	}
	// A model missing from the list may still be served (a remote model, an
	// alias), so /api/show has the last word.
	show, err := c.api.Show(ctx, &api.ShowRequest{Model: model})
	if err != nil {
		var status api.StatusError
		if errors.As(err, &status) && status.StatusCode == http.StatusNotFound {
			present := "none"
			if len(info.Models) > 0 {
				present = strings.Join(info.Models, ", ")
			}
			return info, fmt.Errorf("%w: the Ollama server at %s does not have %q (models present: %s); download it with: ollama pull %s",
				ErrModelNotFound, c.base, model, present, model)
		}
		return info, c.explain(err, model)
	}
	if info.Model == "" {
		info.Model = model
	}
	info.ContextLength = contextLength(show.ModelInfo)
	for _, cap := range show.Capabilities {
		info.Capabilities = append(info.Capabilities, string(cap))
	}
	return info, nil
}

// canonicalModel adds Ollama's implicit ":latest" tag.
func canonicalModel(name string) string {
	name = strings.ToLower(strings.TrimSpace(name))
	if name == "" {
		return ""
	}
	last := name[strings.LastIndex(name, "/")+1:]
	if !strings.Contains(last, ":") {
		name += ":latest"
	}
	return name
}

// contextLength reads "<architecture>.context_length" from /api/show's model_info.
func contextLength(info map[string]any) int {
	arch, _ := info["general.architecture"].(string)
	if n, err := asInt(info[arch+".context_length"]); err == nil && n > 0 {
		return n
	}
	return 0
}

// Embed returns one embedding per text from an embedding model. Ollama
// normalises the vectors to unit length.
func (c *Client) Embed(ctx context.Context, model string, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	resp, err := c.api.Embed(ctx, &api.EmbedRequest{Model: model, Input: texts})
	if err != nil {
		return nil, c.explain(err, model)
	}
	if len(resp.Embeddings) != len(texts) {
		return nil, fmt.Errorf("ollama at %s, model %s: %d embeddings for %d texts", c.base, model, len(resp.Embeddings), len(texts))
	}
	return resp.Embeddings, nil
}
