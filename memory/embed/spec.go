package embed

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
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

// GloVePaths lists where the full offline word-vector file is looked for, in
// order: $EXOCORTEX_GLOVE (alone, when set), the home directory, the user's data
// directory (UserDataDir: where scripts/fetch-glove.sh links it, so a binary built
// anywhere with `go build` finds it), and data/ beside the bin/ directory of the
// running executable (where `make build` and `make test` put it).
func GloVePaths(home string) []string {
	var out []string
	if p := os.Getenv(GloVeEnv); p != "" {
		return []string{p}
	}
	if home != "" {
		out = append(out, filepath.Join(home, GloVeFile))
	}
	if dir := UserDataDir(); dir != "" {
		out = append(out, filepath.Join(dir, GloVeFile))
	}
	if exe, err := os.Executable(); err == nil {
		if real, err := filepath.EvalSymlinks(exe); err == nil {
			exe = real
		}
		out = append(out, filepath.Join(filepath.Dir(filepath.Dir(exe)), "data", GloVeFile))
	}
	return out
}

// UserDataDir is the user's Exocortex data directory: $XDG_DATA_HOME/exocortex,
// else ~/.local/share/exocortex (the XDG base directory default); "" when neither
// is known.
func UserDataDir() string {
	if d := os.Getenv("XDG_DATA_HOME"); filepath.IsAbs(d) {
		return filepath.Join(d, "exocortex")
	}
	if h, err := os.UserHomeDir(); err == nil && h != "" {
		return filepath.Join(h, ".local", "share", "exocortex")
	}
	return ""
}

// CompactSpec is the argument of glove: that names the table compiled into the
// binary (glove:compact).
const CompactSpec = "compact"

// Spec names an embedder:
//
//	auto           the full offline GloVe file if it is found (GloVePaths), else the
//	               compact table compiled into the binary (CompactWords words, int8)
//	none           no vectors: the store runs on BM25 alone
//	glove[:PATH]   the full offline GloVe file (an error if it is missing)
//	glove:compact  the compact table compiled into the binary
//	ollama:MODEL   an Ollama embedding model, e.g. ollama:nomic-embed-text
//	openai:MODEL   an embedding model of the OpenAI-compatible server configured
//	               under openai: in config.yaml (LM Studio, llama-server, vLLM)
//
// The empty spec is auto.
type Spec string

// Open returns the embedder spec names (nil for none). home is the Exocortex home
// directory.
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
		if kind == "glove" && arg == CompactSpec {
			return LoadBuiltin(GloVeConfig{})
		}
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
				return nil, fmt.Errorf("loading the word vectors %s (scripts/fetch-glove.sh makes them; embedder glove:compact uses the built-in table, none runs on BM25 alone): %w", p, err)
			}
		}
		if kind == "glove" {
			return nil, fmt.Errorf("no word vectors at %s (run scripts/fetch-glove.sh or set %s; embedder glove:compact uses the built-in table, none runs on BM25 alone)", strings.Join(paths, " or "), GloVeEnv)
		}
		return LoadBuiltin(GloVeConfig{})
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

// Describe says in a few words which embedder is active, for the welcome card,
// `memory stats` and `memory search --json`: "glove (compact, 50k words, built
// in)", "glove (/home/me/.local/share/exocortex/glove-100d.bin)",
// "ollama nomic-embed-text", "none (BM25 only)".
func Describe(e Embedder) string {
	switch e := e.(type) {
	case nil:
		return "none (BM25 only)"
	case *GloVe:
		return describeGloVe(e.Compact(), e.Words(), e.Dimensions(), e.Source())
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
		if kind != "glove" || arg != CompactSpec {
			paths := GloVePaths(home)
			if arg != "" {
				paths = []string{arg}
			}
			for _, p := range paths {
				if _, err := os.Stat(p); err == nil {
					if words, dim, ok := peekCompact(p); ok {
						return describeGloVe(true, words, dim, p)
					}
					return "glove (" + p + ")"
				}
			}
			if kind == "glove" {
				return "GloVe file missing (" + strings.Join(paths, ", ") + ")"
			}
		}
		info, err := BuiltinInfo()
		if err != nil {
			return "the built-in word vectors are damaged: " + err.Error()
		}
		return describeGloVe(true, info.Words, info.Dim, BuiltinSource)
	}
	return string(spec)
}

// peekCompact reads the header of the word-vector file at path and reports the
// size of a compact table (ok false for the full format or an unreadable file).
func peekCompact(path string) (words, dim int, ok bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, 0, false
	}
	defer f.Close()
	var hdr [cqHeaderSize]byte
	if _, err := io.ReadFull(f, hdr[:]); err != nil || !IsCompact(hdr[:]) {
		return 0, 0, false
	}
	return int(binary.LittleEndian.Uint32(hdr[16:])), int(binary.LittleEndian.Uint32(hdr[12:])), true
}

// describeGloVe names GloVe vectors by where they came from.
func describeGloVe(compact bool, words, dim int, source string) string {
	if source == "" {
		source = fmt.Sprintf("%dd", dim)
	}
	if !compact {
		return "glove (" + source + ")"
	}
	n := strconv.Itoa(words)
	if words%1000 == 0 {
		n = strconv.Itoa(words/1000) + "k"
	}
	return "glove (compact, " + n + " words, " + source + ")"
}
