package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestLoad(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		env     map[string]string
		check   func(Config) bool
		wantErr string
	}{
		{name: "no file", check: func(c Config) bool { return c.Model == "qwen3:8b" && c.NumCtx == 0 && c.MaxNumCtx == 8192 }},
		{name: "budget keys", file: "max_num_ctx: 4096\nutility_model: qwen3:0.6b\nfull_tool_docs: true\ntimeouts:\n  compress: 5s\n",
			check: func(c Config) bool {
				return c.MaxNumCtx == 4096 && c.UtilityModel == "qwen3:0.6b" && c.FullToolDocs && time.Duration(c.Timeouts.Compress) == 5*time.Second
			}},
		{name: "empty file", file: "", check: func(c Config) bool { return c.MaxIterations == 25 }},
		{name: "values", file: "model: llama3.2\nnum_ctx: 4096\ntimeouts:\n  default: 3s\n  extensions:\n    recall: 1.5\n",
			check: func(c Config) bool {
				return c.Model == "llama3.2" && c.NumCtx == 4096 && time.Duration(c.Timeouts.Default) == 3*time.Second &&
					time.Duration(c.Timeouts.Extensions["recall"]) == 1500*time.Millisecond
			}},
		{name: "env overrides file", file: "model: llama3.2\n", env: map[string]string{EnvModel: "qwen3:4b", EnvNumCtx: "16384"},
			check: func(c Config) bool { return c.Model == "qwen3:4b" && c.NumCtx == 16384 }},
		{name: "time budgets", file: "time_budgets:\n  stream: 50ms\n  iteration: 1s\n  stop_after: 2\n  hooks:\n    message_loop_end: 3s\n",
			check: func(c Config) bool {
				b := c.TimeBudgets
				return time.Duration(b.Stream) == 50*time.Millisecond && time.Duration(b.Iteration) == time.Second &&
					b.StopAfter == 2 && time.Duration(b.Hooks["message_loop_end"]) == 3*time.Second
			}},
		{name: "embed_model is the provider's embedder", file: "embed_model: nomic-embed-text\n",
			check: func(c Config) bool { return c.Tools.Memory.Embedder == "ollama:nomic-embed-text" }},
		{name: "embed_model with an openai provider", file: "provider: openai\nembed_model: text-embedding-3-small\n",
			check: func(c Config) bool { return c.Tools.Memory.Embedder == "openai:text-embedding-3-small" }},
		{name: "embed_model agreeing with the embedder", file: "embed_model: m\ntools:\n  memory:\n    embedder: ollama:m\n",
			check: func(c Config) bool { return c.Tools.Memory.Embedder == "ollama:m" }},
		{name: "embed_model against the embedder", file: "embed_model: m\ntools:\n  memory:\n    embedder: none\n", wantErr: `embed_model "m" (ollama:m) and tools.memory.embedder "none" disagree`},
		{name: "typo", file: "modle: x\n", wantErr: "modle: is not a setting (did you mean model?)"},
		{name: "bad duration", file: "timeouts:\n  default: soon\n", wantErr: `"soon" is not a duration`},
		{name: "bad env", env: map[string]string{EnvNumCtx: "lots"}, wantErr: "EXOCORTEX_NUM_CTX"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			if tt.file != "" || tt.name == "empty file" {
				if err := os.WriteFile(filepath.Join(home, FileName), []byte(tt.file), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			for _, k := range []string{EnvModel, EnvNumCtx, EnvOllama} {
				t.Setenv(k, tt.env[k])
			}
			c, err := Load(home)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(c) {
				t.Fatalf("config = %+v", c)
			}
		})
	}
}

func TestProviderConfig(t *testing.T) {
	tests := []struct {
		name    string
		file    string
		env     map[string]string
		check   func(Config) bool
		wantErr string
	}{
		{name: "default is ollama", check: func(c Config) bool {
			return c.Provider == "ollama" && c.OpenAI.BaseURL == DefaultOpenAIBaseURL && c.OpenAI.APIKeyEnv == EnvOpenAIKey
		}},
		{name: "file", file: "provider: openai\nutility_model: small\nopenai:\n  base_url: http://gpu:8000/v1\n  api_key_env: VLLM_KEY\n  timeout: 30s\n  max_retries: 1\nollama:\n  timeout: 2m\n",
			check: func(c Config) bool {
				return c.Provider == "openai" && c.UtilityModel == "small" && c.OpenAI.BaseURL == "http://gpu:8000/v1" &&
					c.OpenAI.APIKeyEnv == "VLLM_KEY" && time.Duration(c.OpenAI.Timeout) == 30*time.Second && c.OpenAI.MaxRetries == 1 &&
					time.Duration(c.Ollama.Timeout) == 2*time.Minute
			}},
		{name: "env overrides file", file: "provider: ollama\nopenai:\n  base_url: http://a/v1\n",
			env:   map[string]string{EnvProvider: "openai", EnvOpenAIBase: "http://b:1234/v1"},
			check: func(c Config) bool { return c.Provider == "openai" && c.OpenAI.BaseURL == "http://b:1234/v1" }},
		{name: "unknown provider", file: "provider: anthropic\n", wantErr: `provider: "anthropic" is not one of ollama, openai`},
		{name: "unknown provider in env", env: map[string]string{EnvProvider: "lmstudio"}, wantErr: EnvProvider},
		{name: "a key in the file is refused", file: "openai:\n  api_key: sk-x\n", wantErr: "openai.api_key: is not a setting (did you mean openai.api_key_env?)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			if tt.file != "" {
				if err := os.WriteFile(filepath.Join(home, FileName), []byte(tt.file), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			for _, k := range []string{EnvModel, EnvNumCtx, EnvOllama, EnvProvider, EnvOpenAIBase} {
				t.Setenv(k, tt.env[k])
			}
			c, err := Load(home)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(c) {
				t.Fatalf("config = %+v", c)
			}
		})
	}
}

// TestAPIKeyStaysOut: the key is read from the named variable and never
// appears in the configuration as printed.
func TestAPIKeyStaysOut(t *testing.T) {
	t.Setenv("MY_LLM_KEY", "sk-very-secret")
	p := OpenAIProvider{APIKeyEnv: "MY_LLM_KEY"}
	if key, env := p.APIKey(); key != "sk-very-secret" || env != "MY_LLM_KEY" {
		t.Fatalf("APIKey() = %q, %q", key, env)
	}
	t.Setenv(EnvOpenAIKey, "sk-default")
	if key, env := (OpenAIProvider{}).APIKey(); key != "sk-default" || env != EnvOpenAIKey {
		t.Fatalf("default APIKey() = %q, %q", key, env)
	}
	c := Default()
	c.OpenAI = p
	b, err := c.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "sk-very-secret") || !strings.Contains(string(b), "MY_LLM_KEY") {
		t.Fatalf("config as printed:\n%s", b)
	}
}
