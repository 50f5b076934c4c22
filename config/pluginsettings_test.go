package config

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPluginSettingsEnv checks what a plugin is shown of the session's
// settings: config.yaml with the environment over it, and no secret.
func TestPluginSettingsEnv(t *testing.T) {
	home := t.TempDir()
	yaml := "model: qwen3:8b\nutility_model: qwen3:1.7b\nnum_ctx: 8192\nprovider: openai\nopenai:\n  base_url: http://127.0.0.1:1\n  api_key_env: KEEPER_SECRET_KEY_VAR\ntools:\n  web_search:\n    api_key: tvly-KEEPER-KEY-123\n"
	if err := os.WriteFile(filepath.Join(home, FileName), []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(EnvModel, "llama3.2:3b")
	cfg, err := Load(home)
	if err != nil {
		t.Fatal(err)
	}
	env, err := cfg.PluginSettingsEnv(home, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	name, js, ok := strings.Cut(env, "=")
	if !ok || name != EnvSettings {
		t.Fatalf("entry %q, want %s=JSON", env, EnvSettings)
	}
	var got map[string]any
	if err := json.Unmarshal([]byte(js), &got); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		key  string
		want any
	}{
		{"model", "llama3.2:3b"}, // the environment over the file
		{"utility_model", "qwen3:1.7b"},
		{"num_ctx", 8192.0},
		{"provider", "openai"},
	}
	for _, tt := range tests {
		if got[tt.key] != tt.want {
			t.Errorf("%s = %v, want %v", tt.key, got[tt.key], tt.want)
		}
	}
	if ws, _ := got["tools"].(map[string]any)["web_search"].(map[string]any); ws["provider"] != SearchTavily {
		t.Errorf("web_search settings %v: want the provider the key chose (tavily) sent", ws)
	}
	if strings.Contains(js, "KEEPER_SECRET_KEY_VAR") || strings.Contains(js, "127.0.0.1") || strings.Contains(js, "KEEPER-KEY") {
		t.Errorf("the settings shown to plugins carry a secret or an address: %s", js)
	}
}
