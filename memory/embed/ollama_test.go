package embed_test

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/exocortex/exocortex/memory/embed"
)

// fakeOllama answers /api/embed and /api/tags the way an Ollama server does: JSON
// in, {"model":..., "embeddings": [[...], ...]} out, and a JSON {"error": ...} with
// status 404 for an unknown model. Its vectors are derived from each text's bytes,
// deliberately not unit length, so the test can check normalisation.
type fakeOllama struct {
	model    string
	dims     int
	requests atomic.Int64
	maxBatch atomic.Int64
	wrong    atomic.Int64 // when set, answer with one vector fewer
}

func (f *fakeOllama) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/api/tags":
		json.NewEncoder(w).Encode(map[string]any{"models": []map[string]any{
			{"name": f.model + ":latest", "model": f.model + ":latest", "digest": "sha256:0123456789abcdef0123"},
		}})
	case "/api/embed":
		f.requests.Add(1)
		var req struct {
			Model string `json:"model"`
			Input any    `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, `{"error":"bad request"}`, http.StatusBadRequest)
			return
		}
		if req.Model != f.model {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusNotFound)
			json.NewEncoder(w).Encode(map[string]string{"error": "model \"" + req.Model + "\" not found, try pulling it first"})
			return
		}
		var inputs []string
		switch in := req.Input.(type) {
		case string:
			inputs = []string{in}
		case []any:
			for _, x := range in {
				inputs = append(inputs, x.(string))
			}
		}
		if n := int64(len(inputs)); n > f.maxBatch.Load() {
			f.maxBatch.Store(n)
		}
		out := make([][]float32, 0, len(inputs))
		for _, s := range inputs {
			v := make([]float32, f.dims)
			for i := range v {
				v[i] = 1
			}
			for i, b := range []byte(s) {
				v[i%f.dims] += float32(b)
			}
			out = append(out, v)
		}
		if f.wrong.Load() != 0 && len(out) > 0 {
			out = out[:len(out)-1]
		}
		json.NewEncoder(w).Encode(map[string]any{"model": f.model, "embeddings": out})
	default:
		http.NotFound(w, r)
	}
}

func newFake(t *testing.T, dims int) (*fakeOllama, *api.Client) {
	t.Helper()
	f := &fakeOllama{model: "nomic-embed-text", dims: dims}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	return f, api.NewClient(u, srv.Client())
}

func TestOllamaEmbed(t *testing.T) {
	f, client := newFake(t, 8)
	ctx := context.Background()
	o, err := embed.NewOllama(ctx, embed.OllamaConfig{Client: client, Model: "nomic-embed-text", BatchSize: 3})
	if err != nil {
		t.Fatal(err)
	}
	var _ embed.Embedder = o
	if o.Dimensions() != 8 {
		t.Fatalf("Dimensions = %d, want 8 (probed)", o.Dimensions())
	}
	if got := o.ModelID(); got != "ollama:nomic-embed-text:sha256:01234:8d" {
		t.Errorf("ModelID = %q", got)
	}
	texts := []string{"alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta"}
	before := f.requests.Load()
	vs, err := o.Embed(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(vs) != len(texts) {
		t.Fatalf("%d vectors for %d texts", len(vs), len(texts))
	}
	if n := f.requests.Load() - before; n != 3 || f.maxBatch.Load() != 3 {
		t.Errorf("%d requests, largest batch %d; want 3 requests of at most 3", n, f.maxBatch.Load())
	}
	for i, v := range vs {
		var ss float64
		for _, x := range v {
			ss += float64(x) * float64(x)
		}
		if math.Abs(ss-1) > 1e-5 {
			t.Errorf("vector %d has norm² %v, want 1", i, ss)
		}
	}
	// Order is kept: each text's vector matches embedding it alone.
	one, _ := o.Embed(ctx, []string{"delta"})
	for j := range one[0] {
		if math.Abs(float64(one[0][j]-vs[3][j])) > 1e-6 {
			t.Fatal("batched vector differs from the single one: order lost")
		}
	}
	if vs, err := o.Embed(ctx, nil); err != nil || len(vs) != 0 {
		t.Errorf("empty input: %v, %d", err, len(vs))
	}
}

func TestOllamaErrors(t *testing.T) {
	f, client := newFake(t, 8)
	ctx := context.Background()
	if _, err := embed.NewOllama(ctx, embed.OllamaConfig{Client: client}); err == nil || !strings.Contains(err.Error(), "no model") {
		t.Errorf("no model: %v", err)
	}
	_, err := embed.NewOllama(ctx, embed.OllamaConfig{Client: client, Model: "missing-model"})
	if err == nil || !strings.Contains(err.Error(), "ollama pull missing-model") {
		t.Errorf("unknown model: %v", err)
	}
	o, err := embed.NewOllama(ctx, embed.OllamaConfig{Client: client, Model: "nomic-embed-text", Dimensions: 16})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := o.Embed(ctx, []string{"x"}); err == nil || !strings.Contains(err.Error(), "expected 16") {
		t.Errorf("dimension mismatch: %v", err)
	}
	o, _ = embed.NewOllama(ctx, embed.OllamaConfig{Client: client, Model: "nomic-embed-text"})
	f.wrong.Store(1)
	if _, err := o.Embed(ctx, []string{"a", "b"}); err == nil || !strings.Contains(err.Error(), "sent 2 texts, got 1") {
		t.Errorf("short answer: %v", err)
	}
	f.wrong.Store(0)
	// A server that is not there.
	dead := httptest.NewServer(http.NotFoundHandler())
	u, _ := url.Parse(dead.URL)
	dead.Close()
	_, err = embed.NewOllama(ctx, embed.OllamaConfig{Client: api.NewClient(u, http.DefaultClient), Model: "m"})
	if err == nil || !strings.Contains(err.Error(), "OLLAMA_HOST") {
		t.Errorf("no server: %v", err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := o.Embed(cctx, []string{"a"}); err == nil {
		t.Error("cancelled context: no error")
	}
}

func TestOllamaConcurrent(t *testing.T) {
	_, client := newFake(t, 4)
	o, err := embed.NewOllama(context.Background(), embed.OllamaConfig{Client: client, Model: "nomic-embed-text"})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 20 {
				if _, err := o.Embed(context.Background(), []string{"a", "b", "c"}); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
}
