package embed

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
)

// ModelServer is the embedding half of a model provider (core/llm.Provider
// has it, for Ollama and for OpenAI-compatible servers alike). The embedder
// needs nothing else, so this package does not depend on the chat client.
type ModelServer interface {
	// Name is the protocol, e.g. "openai".
	Name() string
	// BaseURL is the server's address, for messages.
	BaseURL() string
	// Embed returns one vector per text.
	Embed(ctx context.Context, model string, texts []string) ([][]float32, error)
}

// ProviderConfig configures a Provider embedder.
type ProviderConfig struct {
	Server ModelServer
	// Model is the embedding model as the server names it.
	Model string
	// Dimensions, if set, is checked against every vector; if 0 it is learnt
	// from one request when the embedder is created.
	Dimensions int
	// BatchSize is the number of texts per request; 0 means 32.
	BatchSize int
}

// Provider embeds through a model server's embeddings endpoint (for an
// OpenAI-compatible server, /v1/embeddings). Servers do not all return unit
// vectors, so it normalises them. It is safe for concurrent use when the
// server is.
type Provider struct {
	server ModelServer
	model  string
	dims   int
	batch  int
	id     string
}

// NewProvider checks the model answers and learns its vector length.
func NewProvider(ctx context.Context, cfg ProviderConfig) (*Provider, error) {
	if cfg.Server == nil {
		return nil, errors.New("embedder: no model server given")
	}
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, fmt.Errorf("%s embedder at %s: no model configured (set tools.memory.embedder in config.yaml, e.g. ollama:nomic-embed-text, or embed_model: nomic-embed-text)", cfg.Server.Name(), cfg.Server.BaseURL())
	}
	p := &Provider{server: cfg.Server, model: cfg.Model, dims: cfg.Dimensions, batch: cfg.BatchSize}
	if p.batch <= 0 {
		p.batch = 32
	}
	if p.dims <= 0 {
		vs, err := p.request(ctx, []string{"dimension probe"})
		if err != nil {
			return nil, err
		}
		p.dims = len(vs[0])
	}
	p.id = fmt.Sprintf("%s:%s:%dd", cfg.Server.Name(), p.model, p.dims)
	return p, nil
}

// Dimensions is the model's vector length.
func (p *Provider) Dimensions() int { return p.dims }

// ModelID is "PROVIDER:MODEL:Nd".
func (p *Provider) ModelID() string { return p.id }

// Embed sends the texts in batches and returns unit-length vectors.
func (p *Provider) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += p.batch {
		vs, err := p.request(ctx, texts[start:min(start+p.batch, len(texts))])
		if err != nil {
			return nil, err
		}
		for i, v := range vs {
			if len(v) != p.dims {
				return nil, fmt.Errorf("%s embed with model %q: text %d got %d dimensions, expected %d (did the model change? the store re-embeds when the model id changes)",
					p.server.Name(), p.model, start+i, len(v), p.dims)
			}
		}
		out = append(out, vs...)
	}
	return out, nil
}

func (p *Provider) request(ctx context.Context, texts []string) ([][]float32, error) {
	vs, err := p.server.Embed(ctx, p.model, texts)
	if err != nil {
		return nil, fmt.Errorf("%s embed with model %q: %w", p.server.Name(), p.model, err)
	}
	if len(vs) != len(texts) {
		return nil, fmt.Errorf("%s embed with model %q: sent %d texts, got %d vectors", p.server.Name(), p.model, len(texts), len(vs))
	}
	for i, v := range vs {
		var ss float64
		for _, x := range v {
			ss += float64(x) * float64(x)
		}
		if len(v) == 0 || ss == 0 || math.IsNaN(ss) || math.IsInf(ss, 0) {
			return nil, fmt.Errorf("%s embed with model %q: empty, zero or non-finite vector for text %d", p.server.Name(), p.model, i)
		}
		inv := float32(1 / math.Sqrt(ss))
		for j := range v {
			v[j] *= inv
		}
	}
	return vs, nil
}
