package llm

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// Provider is a model server Exocortex chats with and embeds through. Two
// protocols implement it: Ollama's own (Client, through ollama/api) and the
// OpenAI-compatible one that LM Studio, llama.cpp's llama-server, vLLM,
// LocalAI and hosted gateways speak (OpenAI, through openai-go). The loop, the
// terminal session, sleep's summariser and the memory embedder see only this
// interface, so everything that works with one works with the other.
//
// Implementations are safe for concurrent use.
type Provider interface {
	// Name is the protocol: ProviderOllama or ProviderOpenAI.
	Name() string
	// BaseURL is the server's address, for messages and the welcome card.
	BaseURL() string
	// Chat streams one reply (see Client.Chat for the contract every
	// implementation keeps: onChunk in order from the calling goroutine, the
	// partial Reply on error, cancelling ctx closes the stream).
	Chat(ctx context.Context, req ChatRequest, onChunk func(Chunk) error) (Reply, error)
	// Embed returns one vector per text from an embedding model.
	Embed(ctx context.Context, model string, texts []string) ([][]float32, error)
	// Probe checks the server answers and, when model is not "", that it
	// has the model; its errors say how to fix the problem.
	Probe(ctx context.Context, model string) (ServerInfo, error)
	// ContextLength is the model's context window in tokens as the server
	// reports it, 0 when the server does not say.
	ContextLength(ctx context.Context, model string) (int, error)
	// LastUsage is the usage of the most recent Chat that completed, zero
	// before the first. The context budget reads the prompt tokens here.
	LastUsage() Usage
}

// Provider names, as config.yaml's provider: and --provider spell them.
const (
	ProviderOllama = "ollama"
	ProviderOpenAI = "openai"
)

// Providers lists the provider names, the default first.
func Providers() []string { return []string{ProviderOllama, ProviderOpenAI} }

// CheckProvider returns name when it names a provider ("" means Ollama), and
// an error saying which names there are otherwise.
func CheckProvider(name string) (string, error) {
	switch n := strings.ToLower(strings.TrimSpace(name)); n {
	case "":
		return ProviderOllama, nil
	case ProviderOllama, ProviderOpenAI:
		return n, nil
	}
	return "", fmt.Errorf("provider %q: want %s", name, strings.Join(Providers(), " or "))
}

// More errors to tell apart with errors.Is (see also ErrUnreachable,
// ErrModelNotFound and ErrIncomplete).
var (
	// ErrUnauthorized means the server refused the API key (HTTP 401/403).
	ErrUnauthorized = errors.New("the model server refused the API key")
	// ErrNotStreaming means the server answered a streaming request with
	// something other than a stream of server-sent events.
	ErrNotStreaming = errors.New("the model server did not stream")
	// ErrBusy means the server kept answering 429 or 5xx after every retry.
	ErrBusy = errors.New("the model server is busy or failing")
)

// Retry describes one retried request, for the operator to see: a server
// answering 429 or 5xx, or not answering at all, is retried a bounded number
// of times with growing, jittered delays.
type Retry struct {
	// Address is the server; Path the endpoint (e.g. "chat/completions").
	Address string
	Path    string
	// Attempt is the attempt that failed (1 is the first); Of is how many
	// attempts there will be at most.
	Attempt, Of int
	// Status is the HTTP status, 0 when the connection failed.
	Status int
	// Err says what went wrong, without any credential.
	Err string
	// Delay is the most the client waits before the next attempt: the
	// server's Retry-After when it sent one, otherwise the backoff for this
	// attempt (the wait itself is jittered down by up to a quarter).
	Delay time.Duration
}

// String reads like "HTTP 429 from http://127.0.0.1:1234/v1 (chat/completions), attempt 1 of 3; retrying in ≤0.5s".
func (r Retry) String() string {
	return fmt.Sprintf("%s from %s (%s), attempt %d of %d; retrying in %s", r.what(), r.Address, r.Path, r.Attempt, r.Of, r.wait())
}

// Short is the retry for a status line: "retrying in ≤2s (HTTP 503) 1/3",
// the last figures being this retry and how many there may be.
func (r Retry) Short() string {
	return fmt.Sprintf("retrying in %s (%s) %d/%d", r.wait(), r.what(), r.Attempt, r.Of-1)
}

func (r Retry) what() string {
	if r.Status == 0 {
		return r.Err
	}
	what := fmt.Sprintf("HTTP %d", r.Status)
	if r.Err != "" {
		what += ", " + r.Err
	}
	return what
}

func (r Retry) wait() string {
	if r.Delay < time.Second {
		return fmt.Sprintf("≤%.1fs", r.Delay.Seconds())
	}
	return "≤" + r.Delay.Round(100*time.Millisecond).String()
}

// usageBox keeps the last usage behind a mutex (Chat runs concurrently for
// subordinate agents).
type usageBox struct {
	mu sync.Mutex
	u  Usage
}

func (b *usageBox) set(u Usage) {
	b.mu.Lock()
	b.u = u
	b.mu.Unlock()
}

func (b *usageBox) get() Usage {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.u
}

// DefaultTimeout bounds the wait for a server to start answering a call (a
// model may have to load first); the reply may then stream as long as it takes.
const DefaultTimeout = 5 * time.Minute

// Config chooses and configures a provider.
type Config struct {
	// Provider is ProviderOllama ("" too) or ProviderOpenAI.
	Provider string
	// BaseURL is the server's address ("" for Ollama means OLLAMA_HOST).
	BaseURL string
	// APIKey and APIKeyEnv: see OpenAIConfig (Ollama sends no key).
	APIKey, APIKeyEnv string
	// Timeout bounds the wait for a server to start answering; 0 means DefaultTimeout.
	Timeout time.Duration
	// MaxRetries, MaxRetryDelay and OnRetry: see OpenAIConfig.
	MaxRetries    int
	MaxRetryDelay time.Duration
	OnRetry       func(Retry)
}

// Open returns the provider cfg names.
func Open(cfg Config) (Provider, error) {
	name, err := CheckProvider(cfg.Provider)
	if err != nil {
		return nil, err
	}
	if name == ProviderOpenAI {
		return NewOpenAI(OpenAIConfig{
			BaseURL: cfg.BaseURL, APIKey: cfg.APIKey, APIKeyEnv: cfg.APIKeyEnv, Timeout: cfg.Timeout,
			MaxRetries: cfg.MaxRetries, MaxRetryDelay: cfg.MaxRetryDelay, OnRetry: cfg.OnRetry,
		})
	}
	return NewOllama(OllamaConfig{BaseURL: cfg.BaseURL, Timeout: cfg.Timeout})
}
