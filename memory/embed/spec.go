package embed

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/exocortex/exocortex/config"
	"github.com/exocortex/exocortex/core/llm"
)

// GloVeEnv names the environment variable that points at the offline word-vector
// file (scripts/fetch-glove.sh makes it).
const GloVeEnv = "EXOCORTEX_GLOVE"

// GloVeFile is the word-vector file's name, in the home directory or in the
// checkout's data/ directory.
const GloVeFile = "glove-100d.bin"

// GloVePaths lists where the offline word vectors are looked for, in order:
// $EXOCORTEX_GLOVE, the home directory, and data/ beside the bin/ directory of the
// running executable (where `make run` and `make test` put them, so a build from
// a checkout finds them without further steps).
func GloVePaths(home string) []string {
	var out []string
	if p := os.Getenv(GloVeEnv); p != "" {
		return []string{p}
	}
	if home != "" {
		out = append(out, filepath.Join(home, GloVeFile))
	}
	if exe, err := os.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			exe = real
		}
		out = append(out, filepath.Join(filepath.Dir(filepath.Dir(exe)), "data", GloVeFile))
	}
	return out
}

// Spec names an embedder:
//
//	auto           the offline GloVe vectors if their file is found (GloVePaths), else none
//	none           no vectors: the store runs on BM25 alone
//	glove[:PATH]   the offline GloVe vectors (an error if the file is missing)
//	ollama:MODEL   an Ollama embedding model, e.g. ollama:nomic-embed-text
//	openai:MODEL   an embedding model of the OpenAI-compatible server configured
//	               under openai: in config.yaml (LM Studio, llama-server, vLLM)
//
// The empty spec is auto.
type Spec string

// Open returns the embedder spec names (nil for none, or for auto without the
// word-vector file). home is the Exocortex home directory.
func Open(ctx context.Context, spec Spec, home string) (Embedder, error) {
	kind, arg, _ := strings.Cut(strings.TrimSpace(string(spec)), ":")
	switch kind {
	case "none":
		return nil, nil
	case "ollama":
		if arg == "" {
			return nil, errors.New(`embedder "ollama:MODEL" needs a model, e.g. ollama:nomic-embed-text`)
		}
		return NewOllama(ctx, OllamaConfig{Model: arg})
	case "openai":
		if arg == "" {
			return nil, errors.New(`embedder "openai:MODEL" needs a model, e.g. openai:text-embedding-nomic-embed-text-v1.5`)
		}
		server, err := openAIServer(home)
		if err != nil {
			return nil, err
		}
		return NewProvider(ctx, ProviderConfig{Server: server, Model: arg})
	case "", "auto", "glove":
		paths := GloVePaths(home)
		if arg != "" {
			paths = []string{arg}
		}
		for _, p := range paths {
			g, err := LoadGloVe(p, GloVeConfig{})
			if err == nil {
				return g, nil
			}
			if !errors.Is(err, fs.ErrNotExist) {
				return nil, fmt.Errorf("loading the word vectors %s (scripts/fetch-glove.sh makes them; embedder none runs on BM25 alone): %w", p, err)
			}
		}
		if kind == "glove" {
			return nil, fmt.Errorf("no word vectors at %s (run scripts/fetch-glove.sh or set %s; embedder none runs on BM25 alone)", strings.Join(paths, " or "), GloVeEnv)
		}
		return nil, nil
	}
	return nil, fmt.Errorf(`embedder %q: use auto, none, glove[:PATH], ollama:MODEL or openai:MODEL`, spec)
}

// openAIServer is the OpenAI-compatible server config.yaml in home names,
// with its key from the environment variable openai.api_key_env names.
func openAIServer(home string) (*llm.OpenAI, error) {
	cfg, err := config.Load(home)
	if err != nil {
		return nil, err
	}
	key, env := cfg.OpenAI.APIKey()
	return llm.NewOpenAI(llm.OpenAIConfig{
		BaseURL: cfg.OpenAI.BaseURL, APIKey: key, APIKeyEnv: env,
		Timeout: time.Duration(cfg.OpenAI.Timeout), MaxRetries: cfg.OpenAI.MaxRetries,
	})
}

// Describe says in a few words which embedder is active, for the welcome card and
// `memory stats`.
func Describe(e Embedder) string {
	switch e := e.(type) {
	case nil:
		return "none (BM25 only)"
	case *GloVe:
		return "offline GloVe " + fmt.Sprintf("%dd", e.Dimensions())
	case *Ollama:
		return "ollama " + e.model
	default:
		return e.ModelID()
	}
}

// ConfiguredSpec is the embedder the configuration names: $EXOCORTEX_EMBEDDER,
// else configured (tools.memory.embedder), else auto.
func ConfiguredSpec(configured string) Spec {
	if v := os.Getenv("EXOCORTEX_EMBEDDER"); v != "" {
		return Spec(v)
	}
	if configured != "" {
		return Spec(configured)
	}
	return "auto"
}

// DescribeSpec says which embedder spec would give, without loading it: for auto,
// whether the word-vector file is there.
func DescribeSpec(spec Spec, home string) string {
	kind, arg, _ := strings.Cut(strings.TrimSpace(string(spec)), ":")
	switch kind {
	case "none":
		return "none (BM25 only)"
	case "ollama":
		return "ollama " + arg
	case "", "auto", "glove":
		paths := GloVePaths(home)
		if arg != "" {
			paths = []string{arg}
		}
		for _, p := range paths {
			if _, err := os.Stat(p); err == nil {
				return "offline GloVe"
			}
		}
		if kind == "glove" {
			return "GloVe file missing (" + strings.Join(paths, ", ") + ")"
		}
		return "none (BM25 only: no GloVe file; run make glove)"
	}
	return string(spec)
}
