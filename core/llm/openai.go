package llm

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/param"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"
)

// OpenAI talks to one OpenAI-compatible server (LM Studio, llama.cpp's
// llama-server, vLLM, LocalAI, a hosted gateway) through openai-go: chat
// completions streamed as server-sent events with native tool calls whose
// arguments arrive in pieces, embeddings, and the model list. It is safe for
// concurrent use.
//
// Where the protocol differs from Ollama's the differences stay here:
// reasoning arrives as reasoning_content (or reasoning) and goes to Thinking;
// usage comes in a last chunk asked for with stream_options.include_usage; the
// context window is the server's (there is no num_ctx to send), read from
// /v1/models (vLLM's max_model_len, llama.cpp's meta.n_ctx_train) or
// llama.cpp's /props when the server reports it; a stream must end with
// [DONE] to count as complete. Requests answered 429 or 5xx, or not answered,
// are retried by openai-go with growing jittered delays, a bounded number of
// times, and each retry is reported to OnRetry.
type OpenAI struct {
	client  openai.Client
	base    string // ends in the API prefix, e.g. http://127.0.0.1:1234/v1
	keyEnv  string
	keySet  bool
	retries int
	// maxDelay caps a wait between retries (openai-go's default when 0).
	maxDelay time.Duration
	onRetry  func(Retry)
	usage    usageBox

	mu     sync.Mutex
	ctxLen map[string]int // context lengths learnt from the server
}

var _ Provider = (*OpenAI)(nil)

// OpenAIConfig configures an OpenAI-compatible client.
type OpenAIConfig struct {
	// BaseURL is the API's address including its /v1 prefix, e.g.
	// "http://127.0.0.1:1234/v1" (LM Studio) or "http://127.0.0.1:8080/v1"
	// (llama-server). A URL without a path gets /v1; a bare host:port gets
	// http://. Required.
	BaseURL string
	// APIKey is sent as a bearer token when not "". It is never written to
	// errors or logs.
	APIKey string
	// APIKeyEnv names the environment variable the key came from, for
	// error messages (e.g. "OPENAI_API_KEY").
	APIKeyEnv string
	// Timeout bounds the wait for the server to start answering a call;
	// 0 means DefaultTimeout.
	Timeout time.Duration
	// MaxRetries is how many times a request answered 429 or 5xx (or not
	// answered) is retried; 0 means DefaultMaxRetries, negative none.
	MaxRetries int
	// MaxRetryDelay caps one wait between retries (and a server's
	// Retry-After: a longer one is not waited for); 0 means 8s.
	MaxRetryDelay time.Duration
	// OnRetry, when set, is told of every retry as it happens.
	OnRetry func(Retry)
}

// DefaultMaxRetries is how often a failing request is retried by default.
const DefaultMaxRetries = 3

// NewOpenAI returns a client for the OpenAI-compatible server cfg names. It
// does not contact the server (Probe does).
func NewOpenAI(cfg OpenAIConfig) (*OpenAI, error) {
	base, err := parseOpenAIBase(cfg.BaseURL)
	if err != nil {
		return nil, err
	}
	o := &OpenAI{
		base: base, keyEnv: cfg.APIKeyEnv, keySet: cfg.APIKey != "",
		retries: cfg.MaxRetries, maxDelay: cfg.MaxRetryDelay, onRetry: cfg.OnRetry, ctxLen: map[string]int{},
	}
	switch {
	case o.retries == 0:
		o.retries = DefaultMaxRetries
	case o.retries < 0:
		o.retries = 0
	}
	opts := []option.RequestOption{
		option.WithBaseURL(base),
		// Set even when empty: openai-go would otherwise send OPENAI_API_KEY
		// from the environment to whatever server this is.
		option.WithAPIKey(cfg.APIKey),
		option.WithHTTPClient(httpClient(cfg.Timeout)),
		option.WithMaxRetries(o.retries),
		option.WithMiddleware(o.observe),
	}
	if cfg.MaxRetryDelay > 0 {
		opts = append(opts, option.WithMaxRetryDelay(cfg.MaxRetryDelay))
	}
	o.client = openai.NewClient(opts...)
	return o, nil
}

// parseOpenAIBase accepts a URL or a bare host[:port]; an empty path becomes /v1.
func parseOpenAIBase(s string) (string, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", errors.New("openai-compatible server: no base URL (set openai.base_url in config.yaml or OPENAI_BASE_URL, e.g. http://127.0.0.1:1234/v1 for LM Studio)")
	}
	raw := s
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "", fmt.Errorf("openai-compatible base URL %q: want http://HOST:PORT/v1", raw)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	if u.Path == "" {
		u.Path = "/v1"
	}
	u.RawQuery, u.Fragment, u.User = "", "", nil
	return u.String(), nil
}

// Name is ProviderOpenAI.
func (o *OpenAI) Name() string { return ProviderOpenAI }

// BaseURL is the API address, /v1 included.
func (o *OpenAI) BaseURL() string { return o.base }

// LastUsage is the usage of the last completed Chat.
func (o *OpenAI) LastUsage() Usage { return o.usage.get() }

// observe is the middleware that makes openai-go's retries visible.
func (o *OpenAI) observe(req *http.Request, next option.MiddlewareNext) (*http.Response, error) {
	res, err := next(req)
	if o.onRetry == nil || req.Context().Err() != nil {
		return res, err
	}
	attempt, _ := strconv.Atoi(req.Header.Get("X-Stainless-Retry-Count"))
	if attempt >= o.retries {
		return res, err
	}
	r := Retry{Address: o.base, Path: strings.TrimPrefix(req.URL.Path, mustPath(o.base)+"/"), Attempt: attempt + 1, Of: o.retries + 1}
	switch {
	case err != nil:
		r.Err = err.Error()
	case res.StatusCode == http.StatusTooManyRequests || res.StatusCode >= 500 || res.StatusCode == http.StatusRequestTimeout:
		r.Status = res.StatusCode
		if ra := res.Header.Get("Retry-After"); ra != "" {
			r.Err = "Retry-After " + ra
		}
	default:
		return res, err
	}
	delay, retried := retryDelay(res, attempt, o.maxDelay)
	if !retried {
		return res, err // the server asks for a longer wait than the cap: no retry
	}
	r.Delay = delay
	o.onRetry(r)
	return res, err
}

// openai-go's caps on one wait between retries when none is configured:
// its own backoff's, and a server's Retry-After's.
const (
	defaultMaxRetryDelay      = 8 * time.Second
	defaultMaxRetryAfterDelay = 2 * time.Minute
)

// retryDelay is the most openai-go waits before retrying attempt (from 0)
// answered with res: the server's Retry-After-Ms or Retry-After (seconds or
// a date) when it is within the cap, otherwise half a second doubled per
// attempt, capped. retried is false when the server asks for more than the
// cap, which openai-go does not wait for.
func retryDelay(res *http.Response, attempt int, maxDelay time.Duration) (delay time.Duration, retried bool) {
	afterCap := maxDelay
	if afterCap <= 0 {
		afterCap = defaultMaxRetryAfterDelay
	}
	if res != nil {
		if v, err := strconv.ParseFloat(res.Header.Get("Retry-After-Ms"), 64); err == nil && v >= 0 {
			d := time.Duration(v * float64(time.Millisecond))
			return d, d <= afterCap
		}
		ra := res.Header.Get("Retry-After")
		if v, err := strconv.ParseFloat(ra, 64); err == nil && v >= 0 {
			d := time.Duration(v * float64(time.Second))
			return d, d <= afterCap
		}
		if t, err := time.Parse(time.RFC1123, ra); err == nil {
			d := max(0, time.Until(t))
			return d, d <= afterCap
		}
	}
	if maxDelay <= 0 {
		maxDelay = defaultMaxRetryDelay
	}
	d := maxDelay
	if attempt < 20 {
		d = min(maxDelay, time.Duration(float64(500*time.Millisecond)*float64(int(1)<<attempt)))
	}
	return d, true
}

func mustPath(base string) string {
	u, err := url.Parse(base)
	if err != nil {
		return ""
	}
	return u.Path
}

// Chat sends req to /v1/chat/completions and streams the reply, with the
// same contract as Client.Chat. NumCtx and num_ctx are not sent (the server
// fixes its context window); temperature, top_p, seed, stop and num_predict
// (as max_tokens) are. Think, when set, goes as chat_template_kwargs.enable_thinking,
// which llama.cpp, vLLM and LM Studio pass to the model's template.
func (o *OpenAI) Chat(ctx context.Context, req ChatRequest, onChunk func(Chunk) error) (Reply, error) {
	params, extra, err := toOpenAIRequest(req)
	if err != nil {
		return Reply{}, err
	}
	reply := Reply{Model: req.Model, Usage: Usage{NumCtx: o.knownContext(req.Model, req.NumCtx)}}
	start := time.Now()
	var res *http.Response
	opts := append(extra, option.WithJSONSet("stream", true))
	if err := o.client.Post(ctx, "chat/completions", params, &res, opts...); err != nil {
		if ctx.Err() != nil {
			return reply, fmt.Errorf("chat with %s at %s: %w", req.Model, o.base, ctx.Err())
		}
		return reply, o.explain(ctx, err, req.Model)
	}
	defer res.Body.Close()
	if mt, _, _ := mime.ParseMediaType(res.Header.Get("Content-Type")); mt != "text/event-stream" {
		head, _ := io.ReadAll(io.LimitReader(res.Body, 200))
		return reply, fmt.Errorf("%w: %s answered a streaming chat request with %q instead of text/event-stream (%s); check that the base URL is the server's OpenAI-compatible API (it usually ends in /v1) and that the server supports stream: true",
			ErrNotStreaming, o.base, orNone(res.Header.Get("Content-Type")), clip(strings.TrimSpace(string(head)), 120))
	}

	var (
		text           streamText
		calls          = map[int64]*callParts{}
		done, finished bool
		firstToken     time.Time
		chunkErr       error
	)
	dec := ssestream.NewDecoder(res)
	for dec.Next() {
		data := bytes.TrimSpace(dec.Event().Data)
		if len(data) == 0 {
			continue
		}
		if bytes.Equal(data, []byte("[DONE]")) {
			done = true
			break
		}
		var ch streamChunk
		if err := json.Unmarshal(data, &ch); err != nil {
			return o.finish(reply, &text, calls), fmt.Errorf("chat with %s at %s: a stream event that is not a chat chunk: %q: %w", req.Model, o.base, clip(string(data), 120), err)
		}
		if msg := ch.errorMessage(); msg != "" {
			return o.finish(reply, &text, calls), fmt.Errorf("chat with %s at %s: the server reported an error mid-stream: %s", req.Model, o.base, msg)
		}
		if ch.Model != "" {
			reply.Model = ch.Model
		}
		if ch.Usage != nil {
			reply.Usage.PromptTokens = ch.Usage.PromptTokens
			reply.Usage.OutputTokens = ch.Usage.CompletionTokens
		}
		if t := ch.Timings; t != nil {
			reply.Usage.PromptDuration = time.Duration(t.PromptMS * float64(time.Millisecond))
			reply.Usage.EvalDuration = time.Duration(t.PredictedMS * float64(time.Millisecond))
			reply.Usage.TotalDuration = reply.Usage.PromptDuration + reply.Usage.EvalDuration
		}
		for _, choice := range ch.Choices {
			if choice.Index != 0 {
				continue
			}
			d := choice.Delta
			// vLLM renamed reasoning_content to reasoning; a server may send both.
			think := cmp.Or(d.ReasoningContent, d.Reasoning)
			for _, tc := range d.ToolCalls {
				p := calls[tc.Index]
				if p == nil {
					p = &callParts{}
					calls[tc.Index] = p
				}
				if tc.ID != "" {
					p.id = tc.ID
				}
				p.name += tc.Function.Name
				p.args.WriteString(tc.Function.Arguments)
			}
			if choice.FinishReason != "" {
				finished = true
				reply.DoneReason = choice.FinishReason
			}
			if d.Content == "" && think == "" {
				continue
			}
			if firstToken.IsZero() {
				firstToken = time.Now()
			}
			if ch := text.add(d.Content, think); onChunk != nil && !ch.empty() {
				if err := onChunk(ch); err != nil {
					chunkErr = err
					break
				}
			}
		}
		if chunkErr != nil {
			break
		}
	}
	if last := text.end(); done && chunkErr == nil && onChunk != nil && !last.empty() {
		chunkErr = onChunk(last)
	}
	reply = o.finish(reply, &text, calls)
	if reply.Usage.EvalDuration == 0 && !firstToken.IsZero() {
		reply.Usage.PromptDuration = firstToken.Sub(start)
		reply.Usage.EvalDuration = time.Since(firstToken)
	}
	if reply.Usage.TotalDuration == 0 {
		reply.Usage.TotalDuration = time.Since(start)
	}
	switch {
	case chunkErr != nil:
		return reply, chunkErr
	case ctx.Err() != nil:
		return reply, fmt.Errorf("chat with %s at %s: %w", req.Model, o.base, ctx.Err())
	case dec.Err() != nil:
		return reply, fmt.Errorf("chat with %s at %s: %w after %d bytes: %w (the server stopped or the connection broke; see the server's log)",
			req.Model, o.base, ErrIncomplete, len(reply.Content), dec.Err())
	case !done:
		what := "before the reply finished"
		if finished {
			what = "after the reply finished but before its end marker"
		}
		return reply, fmt.Errorf("chat with %s at %s: %w: the stream stopped %s, without [DONE], after %d bytes (the server stopped or the connection broke; see the server's log)",
			req.Model, o.base, ErrIncomplete, what, len(reply.Content))
	}
	if reply.DoneReason == "" || reply.DoneReason == "tool_calls" || reply.DoneReason == "function_call" {
		reply.DoneReason = "stop"
	}
	o.usage.set(reply.Usage)
	return reply, nil
}

type callParts struct {
	id, name string
	args     strings.Builder
}

// finish fills in the text and the tool calls in index order.
func (o *OpenAI) finish(r Reply, text *streamText, calls map[int64]*callParts) Reply {
	text.end()
	r.Content, r.Thinking = text.content.String(), text.thinking.String()
	r.ToolCalls = nil
	for _, i := range slices.Sorted(maps.Keys(calls)) {
		p := calls[i]
		args := json.RawMessage(strings.TrimSpace(p.args.String()))
		if len(args) == 0 {
			args = json.RawMessage("{}")
		}
		r.ToolCalls = append(r.ToolCalls, ToolCall{ID: p.id, Name: p.name, Arguments: args})
	}
	return r
}

// streamChunk is one event of a streamed chat completion, with the fields
// servers add that the OpenAI API does not have (reasoning_content or
// reasoning, llama.cpp's timings) and an error object a server may send
// mid-stream. It is decoded with encoding/json rather than into openai-go's
// ChatCompletionChunk: that type's decoder keeps metadata for every field and
// cost about six times as much per chunk (docs/perf/llm.md).
type streamChunk struct {
	Model   string `json:"model"`
	Choices []struct {
		Index int64 `json:"index"`
		Delta struct {
			Content          string `json:"content"`
			ReasoningContent string `json:"reasoning_content"`
			Reasoning        string `json:"reasoning"`
			ToolCalls        []struct {
				Index    int64  `json:"index"`
				ID       string `json:"id"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason string `json:"finish_reason"`
	} `json:"choices"`
	Usage *struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
	} `json:"usage"`
	// Timings are llama.cpp's server-side durations, when sent.
	Timings *struct {
		PromptMS    float64 `json:"prompt_ms"`
		PredictedMS float64 `json:"predicted_ms"`
	} `json:"timings"`
	Error json.RawMessage `json:"error"`
}

// errorMessage is the message of an {"error": ...} event, "" when there is none.
func (c *streamChunk) errorMessage() string {
	if len(c.Error) == 0 || string(c.Error) == "null" {
		return ""
	}
	var obj struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(c.Error, &obj) == nil && obj.Message != "" {
		return obj.Message
	}
	return string(c.Error)
}

// toOpenAIRequest builds the chat completion parameters, and request options
// for the fields openai-go does not model.
func toOpenAIRequest(req ChatRequest) (openai.ChatCompletionNewParams, []option.RequestOption, error) {
	var p openai.ChatCompletionNewParams
	if strings.TrimSpace(req.Model) == "" {
		return p, nil, errors.New("chat request: no model named (the name the server lists in /v1/models)")
	}
	if len(req.Messages) == 0 {
		return p, nil, fmt.Errorf("chat request to %s: no messages", req.Model)
	}
	p.Model = req.Model
	p.StreamOptions.IncludeUsage = param.NewOpt(true)
	for i, m := range req.Messages {
		mp, err := toOpenAIMessage(m)
		if err != nil {
			return p, nil, fmt.Errorf("chat request to %s: message %d: %w", req.Model, i, err)
		}
		p.Messages = append(p.Messages, mp)
	}
	for _, t := range req.Tools {
		if strings.TrimSpace(t.Name) == "" {
			return p, nil, fmt.Errorf("chat request to %s: a tool without a name", req.Model)
		}
		schema := []byte(t.Parameters)
		if len(schema) == 0 || string(schema) == "null" {
			schema = emptyParameters
		}
		var params shared.FunctionParameters
		if err := json.Unmarshal(schema, &params); err != nil || params == nil {
			return p, nil, fmt.Errorf("chat request to %s: tool %s: parameters are not a JSON Schema object: %v", req.Model, t.Name, err)
		}
		if _, ok := params["type"]; !ok {
			params["type"] = "object"
		}
		fd := shared.FunctionDefinitionParam{Name: t.Name, Parameters: params}
		if t.Description != "" {
			fd.Description = param.NewOpt(t.Description)
		}
		p.Tools = append(p.Tools, openai.ChatCompletionFunctionTool(fd))
	}
	for k, v := range req.Options {
		if err := setOption(&p, k, v); err != nil {
			return p, nil, fmt.Errorf("chat request to %s: option %s = %v: %w", req.Model, k, v, err)
		}
	}
	switch f := bytes.TrimSpace(req.Format); {
	case len(f) == 0 || string(f) == "null":
	case string(f) == `"json"`:
		p.ResponseFormat.OfJSONObject = &shared.ResponseFormatJSONObjectParam{}
	default:
		var schema map[string]any
		if err := json.Unmarshal(f, &schema); err != nil {
			return p, nil, fmt.Errorf("chat request to %s: format is neither \"json\" nor a JSON Schema object: %w", req.Model, err)
		}
		p.ResponseFormat.OfJSONSchema = &shared.ResponseFormatJSONSchemaParam{
			JSONSchema: shared.ResponseFormatJSONSchemaJSONSchemaParam{Name: "reply", Schema: schema},
		}
	}
	var extra []option.RequestOption
	if req.Think != nil {
		extra = append(extra, option.WithJSONSet("chat_template_kwargs", map[string]any{"enable_thinking": *req.Think}))
	}
	return p, extra, nil
}

func toOpenAIMessage(m Message) (openai.ChatCompletionMessageParamUnion, error) {
	switch m.Role {
	case RoleSystem:
		return openai.SystemMessage(m.Content), nil
	case RoleUser:
		return openai.UserMessage(m.Content), nil
	case RoleTool:
		if m.ToolCallID == "" {
			// Without the call's id a server cannot pair the result with its
			// call; as text it still reaches the model.
			return openai.UserMessage(fmt.Sprintf("Result of tool %s:\n%s", m.ToolName, m.Content)), nil
		}
		return openai.ToolMessage(m.Content, m.ToolCallID), nil
	case RoleAssistant:
		a := openai.ChatCompletionAssistantMessageParam{}
		if m.Content != "" || len(m.ToolCalls) == 0 {
			a.Content.OfString = param.NewOpt(m.Content)
		}
		for i, tc := range m.ToolCalls {
			args := strings.TrimSpace(string(tc.Arguments))
			if args == "" {
				args = "{}"
			}
			id := tc.ID
			if id == "" {
				id = fmt.Sprintf("call_%d", i)
			}
			a.ToolCalls = append(a.ToolCalls, openai.ChatCompletionMessageToolCallUnionParam{
				OfFunction: &openai.ChatCompletionMessageFunctionToolCallParam{
					ID:       id,
					Function: openai.ChatCompletionMessageFunctionToolCallFunctionParam{Name: tc.Name, Arguments: args},
				},
			})
		}
		return openai.ChatCompletionMessageParamUnion{OfAssistant: &a}, nil
	}
	return openai.ChatCompletionMessageParamUnion{}, fmt.Errorf("role %q: want system, user, assistant or tool", m.Role)
}

// setOption maps an Ollama-style model option onto the OpenAI request;
// options the protocol has no place for (num_ctx, ...) are left out.
func setOption(p *openai.ChatCompletionNewParams, key string, v any) error {
	num := func() (float64, error) {
		switch n := v.(type) {
		case int:
			return float64(n), nil
		case int64:
			return float64(n), nil
		case float64:
			return n, nil
		case float32:
			return float64(n), nil
		case json.Number:
			return n.Float64()
		}
		return 0, errors.New("want a number")
	}
	switch key {
	case "temperature", "top_p", "seed", "num_predict", "presence_penalty", "frequency_penalty":
		f, err := num()
		if err != nil {
			return err
		}
		switch key {
		case "temperature":
			p.Temperature = param.NewOpt(f)
		case "top_p":
			p.TopP = param.NewOpt(f)
		case "seed":
			p.Seed = param.NewOpt(int64(f))
		case "num_predict":
			if f > 0 {
				p.MaxTokens = param.NewOpt(int64(f))
			}
		case "presence_penalty":
			p.PresencePenalty = param.NewOpt(f)
		case "frequency_penalty":
			p.FrequencyPenalty = param.NewOpt(f)
		}
	case "stop":
		switch s := v.(type) {
		case string:
			p.Stop.OfString = param.NewOpt(s)
		case []string:
			p.Stop.OfStringArray = s
		case []any:
			for _, x := range s {
				str, ok := x.(string)
				if !ok {
					return errors.New("want strings")
				}
				p.Stop.OfStringArray = append(p.Stop.OfStringArray, str)
			}
		default:
			return errors.New("want a string or a list of strings")
		}
	}
	return nil
}

// Embed sends the texts to /v1/embeddings in one request and returns the
// vectors in input order.
func (o *OpenAI) Embed(ctx context.Context, model string, texts []string) ([][]float32, error) {
	if len(texts) == 0 {
		return nil, nil
	}
	resp, err := o.client.Embeddings.New(ctx, openai.EmbeddingNewParams{
		Model:          openai.EmbeddingModel(model),
		Input:          openai.EmbeddingNewParamsInputUnion{OfArrayOfStrings: texts},
		EncodingFormat: openai.EmbeddingNewParamsEncodingFormatFloat,
	})
	if err != nil {
		return nil, o.explain(ctx, err, model)
	}
	if len(resp.Data) != len(texts) {
		return nil, fmt.Errorf("openai-compatible server at %s, model %s: %d embeddings for %d texts", o.base, model, len(resp.Data), len(texts))
	}
	out := make([][]float32, len(texts))
	for _, d := range resp.Data {
		if d.Index < 0 || int(d.Index) >= len(texts) || out[d.Index] != nil {
			return nil, fmt.Errorf("openai-compatible server at %s, model %s: embedding index %d out of order for %d texts", o.base, model, d.Index, len(texts))
		}
		v := make([]float32, len(d.Embedding))
		for i, x := range d.Embedding {
			v[i] = float32(x)
		}
		out[d.Index] = v
	}
	return out, nil
}

// modelEntry is one /v1/models entry with the context fields servers add.
type modelEntry struct {
	ID          string `json:"id"`
	MaxModelLen int    `json:"max_model_len"` // vLLM
	Context     int    `json:"context_length"`
	MaxContext  int    `json:"max_context_length"`
	Meta        struct {
		NCtxTrain int `json:"n_ctx_train"` // llama.cpp
	} `json:"meta"`
}

func (o *OpenAI) models(ctx context.Context) ([]modelEntry, error) {
	var list struct {
		Data []modelEntry `json:"data"`
	}
	if err := o.client.Get(ctx, "models", nil, &list); err != nil {
		return nil, o.explain(ctx, err, "")
	}
	return list.Data, nil
}

// Probe checks that the server answers /v1/models and, when model is not "",
// that it lists the model. A server that lists nothing (some gateways) is
// taken at its word that it serves whatever it is asked for.
func (o *OpenAI) Probe(ctx context.Context, model string) (ServerInfo, error) {
	info := ServerInfo{BaseURL: o.base, Version: "openai-compatible"}
	list, err := o.models(ctx)
	if err != nil {
		return info, err
	}
	var found *modelEntry
	for i, m := range list {
		info.Models = append(info.Models, m.ID)
		if m.ID == model {
			found = &list[i]
		}
	}
	if model == "" {
		return info, nil
	}
	if found == nil && len(list) > 0 {
		return info, o.notFound(model, info.Models)
	}
	info.Model = model
	info.Capabilities = []string{"completion"}
	if found != nil {
		info.ContextLength = o.contextFrom(ctx, *found)
	}
	return info, nil
}

// ContextLength is the server's context window for model: vLLM's
// max_model_len or another context field in /v1/models, llama.cpp's runtime
// n_ctx from /props, or its trained n_ctx_train; 0 when none says.
func (o *OpenAI) ContextLength(ctx context.Context, model string) (int, error) {
	list, err := o.models(ctx)
	if err != nil {
		return 0, err
	}
	for _, m := range list {
		if m.ID == model {
			return o.contextFrom(ctx, m), nil
		}
	}
	if len(list) == 0 {
		return 0, nil
	}
	ids := make([]string, 0, len(list))
	for _, m := range list {
		ids = append(ids, m.ID)
	}
	return 0, o.notFound(model, ids)
}

func (o *OpenAI) contextFrom(ctx context.Context, m modelEntry) int {
	n := max(m.MaxModelLen, m.Context, m.MaxContext)
	if n == 0 {
		// llama-server: /props (beside /v1) has the window it runs with.
		var props struct {
			Settings struct {
				NCtx int `json:"n_ctx"`
			} `json:"default_generation_settings"`
		}
		if err := o.client.Get(ctx, "../props", nil, &props, option.WithMaxRetries(0)); err == nil {
			n = props.Settings.NCtx
		}
	}
	if n == 0 {
		n = m.Meta.NCtxTrain
	}
	if n > 0 {
		o.mu.Lock()
		o.ctxLen[m.ID] = n
		o.mu.Unlock()
	}
	return n
}

// knownContext is the learnt context length of model, or asked when unknown.
func (o *OpenAI) knownContext(model string, asked int) int {
	o.mu.Lock()
	defer o.mu.Unlock()
	if n := o.ctxLen[model]; n > 0 {
		return n
	}
	if asked <= 0 {
		return DefaultNumCtx
	}
	return asked
}

func (o *OpenAI) notFound(model string, have []string) error {
	present := "none"
	if len(have) > 0 {
		present = strings.Join(have, ", ")
	}
	return fmt.Errorf("%w: the server at %s does not have %q (models it lists: %s); load it in the server or choose one of those with /model or --model",
		ErrModelNotFound, o.base, model, present)
}

// explain turns a transport or status error into one that says what to do.
func (o *OpenAI) explain(ctx context.Context, err error, model string) error {
	var apiErr *openai.Error
	if errors.As(err, &apiErr) {
		msg := apiErr.Message
		switch code := apiErr.StatusCode; {
		case code == http.StatusUnauthorized || code == http.StatusForbidden:
			key := "no key was sent"
			if o.keySet {
				key = "the key sent was refused"
			}
			env := o.keyEnv
			if env == "" {
				env = "OPENAI_API_KEY"
			}
			return fmt.Errorf("%w: %s answered HTTP %d (%s): set the server's key in $%s (or name another variable with openai.api_key_env in config.yaml)",
				ErrUnauthorized, o.base, code, key, env)
		case code == http.StatusNotFound && model != "":
			if list, lerr := o.models(ctx); lerr == nil {
				ids := make([]string, 0, len(list))
				for _, m := range list {
					ids = append(ids, m.ID)
				}
				return o.notFound(model, ids)
			}
			return fmt.Errorf("%w: %s answered HTTP 404 for %q (%s); check the model name and that the base URL ends in the API prefix (usually /v1)",
				ErrModelNotFound, o.base, model, orNone(msg))
		case code == http.StatusTooManyRequests || code >= 500:
			return fmt.Errorf("%w: %s answered HTTP %d (%s) after %d attempts; try again later or check the server's log",
				ErrBusy, o.base, code, orNone(msg), o.retries+1)
		}
		return fmt.Errorf("openai-compatible server at %s, model %s: HTTP %d: %s", o.base, orNone(model), apiErr.StatusCode, orNone(msg))
	}
	if unreachable(err) {
		return fmt.Errorf("%w: nothing answered at %s (%v); start the server (LM Studio: lms server start; llama.cpp: llama-server -m MODEL.gguf --port 8080; vLLM: vllm serve MODEL) or point openai.base_url / OPENAI_BASE_URL at a running one",
			ErrUnreachable, o.base, err)
	}
	return fmt.Errorf("openai-compatible server at %s, model %s: %w", o.base, orNone(model), err)
}

func orNone(s string) string {
	if strings.TrimSpace(s) == "" {
		return "none"
	}
	return s
}
