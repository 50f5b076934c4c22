package embed

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/ollama/ollama/api"
)

// OllamaConfig configures the Ollama embedder.
type OllamaConfig struct {
	// Client talks to the server; nil means api.ClientFromEnvironment (OLLAMA_HOST,
	// default http://127.0.0.1:11434).
	Client *api.Client
	// Model is the embedding model, e.g. "nomic-embed-text" or "all-minilm".
	Model string
	// Dimensions, if set, is checked against every vector; if 0 it is learnt from
	// one request when the embedder is created.
	Dimensions int
	// BatchSize is the number of texts per request; 0 means 32.
	BatchSize int
}

// Ollama embeds texts with an Ollama server's /api/embed. It is safe for concurrent
// use (the api.Client is).
type Ollama struct {
	client *api.Client
	model  string
	dims   int
	batch  int
	id     string
}

// NewOllama checks the model answers and learns its vector length. The model id
// includes the model's digest when the server lists it (/api/tags), so re-pulling
// a tag that now points at different weights changes the id and triggers a
// re-embed.
func NewOllama(ctx context.Context, cfg OllamaConfig) (*Ollama, error) {
	if strings.TrimSpace(cfg.Model) == "" {
		return nil, errors.New("ollama embedder: no model configured (set the embedding model, e.g. nomic-embed-text)")
	}
	c := cfg.Client
	if c == nil {
		var err error
		if c, err = api.ClientFromEnvironment(); err != nil {
			return nil, fmt.Errorf("ollama embedder: %w", err)
		}
	}
	o := &Ollama{client: c, model: cfg.Model, dims: cfg.Dimensions, batch: cfg.BatchSize}
	if o.batch <= 0 {
		o.batch = 32
	}
	if o.dims <= 0 {
		vs, err := o.request(ctx, []string{"dimension probe"})
		if err != nil {
			return nil, err
		}
		o.dims = len(vs[0])
	}
	digest := ""
	if list, err := c.List(ctx); err == nil {
		for _, m := range list.Models {
			if m.Name == o.model || m.Model == o.model || m.Name == o.model+":latest" {
				digest = m.Digest
				break
			}
		}
	}
	if len(digest) > 12 {
		digest = digest[:12]
	}
	o.id = fmt.Sprintf("ollama:%s:%s:%dd", o.model, digest, o.dims)
	return o, nil
}

// Dimensions is the model's vector length.
func (o *Ollama) Dimensions() int { return o.dims }

// ModelID is "ollama:MODEL:DIGEST:Nd" (the digest is empty if the server does not
// list the model).
func (o *Ollama) ModelID() string { return o.id }

// Embed sends the texts in batches and returns unit-length vectors.
func (o *Ollama) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += o.batch {
		batch := texts[start:min(start+o.batch, len(texts))]
		vs, err := o.request(ctx, batch)
		if err != nil {
			return nil, err
		}
		for i, v := range vs {
			if len(v) != o.dims {
				return nil, fmt.Errorf("ollama embed with model %q: text %d got %d dimensions, expected %d (did the model change? the store re-embeds when the model id changes)", o.model, start+i, len(v), o.dims)
			}
		}
		out = append(out, vs...)
	}
	return out, nil
}

func (o *Ollama) request(ctx context.Context, texts []string) ([][]float32, error) {
	resp, err := o.client.Embed(ctx, &api.EmbedRequest{Model: o.model, Input: texts})
	if err != nil {
		var se api.StatusError
		if errors.As(err, &se) && se.StatusCode == 404 {
			return nil, fmt.Errorf("ollama embed with model %q: %w (pull it with: ollama pull %s)", o.model, err, o.model)
		}
		return nil, fmt.Errorf("ollama embed with model %q: %w (is the Ollama server running? OLLAMA_HOST sets its address)", o.model, err)
	}
	if len(resp.Embeddings) != len(texts) {
		return nil, fmt.Errorf("ollama embed with model %q: sent %d texts, got %d vectors", o.model, len(texts), len(resp.Embeddings))
	}
	for i, v := range resp.Embeddings {
		if len(v) == 0 {
			return nil, fmt.Errorf("ollama embed with model %q: empty vector for text %d", o.model, i)
		}
		var ss float64
		for _, x := range v {
			ss += float64(x) * float64(x)
		}
		if ss == 0 || math.IsNaN(ss) || math.IsInf(ss, 0) {
			return nil, fmt.Errorf("ollama embed with model %q: zero or non-finite vector for text %d", o.model, i)
		}
		inv := float32(1 / math.Sqrt(ss))
		for j := range v {
			v[j] *= inv
		}
	}
	return resp.Embeddings, nil
}
