package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/config"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// TestProviderCLI runs the binary against the scripted OpenAI-compatible
// server: a retried 429 is shown to the operator, a refused key is explained
// without printing it, and the key never reaches stdout, stderr, the log, the
// session or any other file in the home directory.
func TestProviderCLI(t *testing.T) {
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	const secret = "sk-e2e-secret-4242"
	script := filepath.Join(t.TempDir(), "openai.yaml")
	if err := os.WriteFile(script, []byte(`model: local-model
api_key: `+secret+`
replies:
  - error: slow down
    status: 429
  - content: '{"thoughts":["done"],"tool_name":"response","tool_args":{"text":"All done."}}'
`), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		key      string
		args     []string
		wantCode int
		stdout   []string
		stderr   []string
	}{
		{name: "retry shown, key kept out", key: secret, args: []string{"--json", "--session", "s1"},
			stdout: []string{`"type":"model","provider":"openai","model":"local-model"`, `HTTP 429`, `retrying`, `All done.`}},
		{name: "retry shown as a notice", key: secret,
			stdout: []string{"All done."}, stderr: []string{"notice: HTTP 429", "attempt 1 of 4; retrying"}},
		{name: "refused key", key: "sk-wrong-7777", wantCode: 1,
			stderr: []string{"refused the API key", "HTTP 401", "$" + config.EnvOpenAIKey}},
		{name: "unknown provider", key: secret, args: []string{"--provider", "lmstudio"}, wantCode: 2,
			stderr: []string{`--provider: provider "lmstudio": want ollama or openai`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			t.Setenv(config.EnvOpenAIKey, tt.key)
			t.Setenv(config.EnvProvider, "openai")
			args := append([]string{"run", "-p", "hello", "--model", "script:" + script}, tt.args...)
			stdout, stderr, code := runExo(t, exe, t.TempDir(), home, args...)
			if code != tt.wantCode {
				t.Fatalf("exit %d, want %d\nstderr:\n%s\nstdout:\n%s", code, tt.wantCode, stderr, stdout)
			}
			for _, s := range tt.stdout {
				if !strings.Contains(stdout, s) {
					t.Errorf("stdout lacks %q:\n%s", s, stdout)
				}
			}
			for _, s := range tt.stderr {
				if !strings.Contains(stderr, s) {
					t.Errorf("stderr lacks %q:\n%s", s, stderr)
				}
			}
			for _, out := range []string{stdout, stderr} {
				if strings.Contains(out, secret) || strings.Contains(out, "sk-wrong") {
					t.Errorf("the key was printed:\n%s", out)
				}
			}
			filepath.WalkDir(home, func(path string, d os.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return nil
				}
				b, err := os.ReadFile(path)
				if err == nil && (strings.Contains(string(b), secret) || strings.Contains(string(b), "sk-wrong")) {
					t.Errorf("the key is in %s", path)
				}
				return nil
			})
		})
	}
}

// TestReasoningCLI: run -p folds the model's reasoning to one stderr line,
// run --json writes it as reasoning events, and the answer is parsed without
// it, whether the server separates the reasoning (Ollama's thinking,
// reasoning_content) or leaves a <think> block in the text.
func TestReasoningCLI(t *testing.T) {
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	const answer = `{"thoughts":["done"],"tool_name":"response","tool_args":{"text":"All done."}}`
	scripts := map[string]string{
		"think block": `model: thinker
replies:
  - content: "<think>\nSECRETPLAN answer briefly.\n</think>\n\n` + strings.ReplaceAll(answer, `"`, `\"`) + `"
    chunk_size: 5
`,
		"reasoning field": `model: thinker
replies:
  - thinking: "SECRETPLAN answer briefly."
    content: '` + answer + `'
    chunk_size: 5
`,
	}
	tests := []struct {
		provider, script string
		json             bool
	}{
		{"ollama", "think block", false},
		{"openai", "reasoning field", false},
		{"openai", "think block", true},
		{"ollama", "reasoning field", true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%s %s json=%v", tt.provider, tt.script, tt.json), func(t *testing.T) {
			script := filepath.Join(t.TempDir(), "think.yaml")
			if err := os.WriteFile(script, []byte(scripts[tt.script]), 0o644); err != nil {
				t.Fatal(err)
			}
			t.Setenv(config.EnvProvider, tt.provider)
			args := []string{"run", "-p", "hello", "--model", "script:" + script}
			if tt.json {
				args = append(args, "--json")
			}
			stdout, stderr, code := runExo(t, exe, t.TempDir(), t.TempDir(), args...)
			if code != 0 {
				t.Fatalf("exit %d\nstderr:\n%s\nstdout:\n%s", code, stderr, stdout)
			}
			if !tt.json {
				if strings.TrimSpace(stdout) != "All done." || strings.Contains(stdout+stderr, "SECRETPLAN") ||
					!strings.Contains(stderr, "✻ Thought for ") || !strings.Contains(stderr, "26 chars (--json shows it)") {
					t.Errorf("stdout:\n%s\nstderr:\n%s", stdout, stderr)
				}
				return
			}
			var reasoning strings.Builder
			replies := 0
			for _, line := range strings.Split(strings.TrimSpace(stdout), "\n") {
				var e struct{ Type, Text string }
				if err := json.Unmarshal([]byte(line), &e); err != nil {
					t.Fatalf("not a JSON line: %q", line)
				}
				switch e.Type {
				case "reasoning":
					reasoning.WriteString(e.Text)
				case "llm_reply":
					replies++
					if e.Text != answer {
						t.Errorf("llm_reply text %q, want %q", e.Text, answer)
					}
				}
			}
			if strings.TrimSpace(reasoning.String()) != "SECRETPLAN answer briefly." || replies != 1 || !strings.Contains(stdout, `"type":"response","time"`) {
				t.Errorf("reasoning %q, %d replies:\n%s", reasoning.String(), replies, stdout)
			}
		})
	}
}
