package config

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/toolsettings"
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

// The secret settings a plugin may receive are found by their declaration
// (secret:"true" plugin:"true"), with the environment over the file:
// web_search's key, under the key the plugin declares
// (toolsettings.APIKeySetting); serve's API keys are secret but for no plugin.
func TestSecretSettings(t *testing.T) {
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, FileName), []byte("tools:\n  web_search:\n    api_key: tvly-from-the-file\nserve:\n  api_key: admin-key-not-for-plugins\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, env, want string
	}{
		{"the file", "", "tvly-from-the-file"},
		{"the environment over it", "tvly-from-the-environment", "tvly-from-the-environment"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.env != "" {
				t.Setenv(EnvSearchKey, tt.env)
			}
			cfg, err := Load(home)
			if err != nil {
				t.Fatal(err)
			}
			got := cfg.SecretSettings()
			if len(got) != 1 || got[toolsettings.APIKeySetting] != tt.want {
				t.Fatalf("SecretSettings() = %v, want only %s = %q", got, toolsettings.APIKeySetting, tt.want)
			}
		})
	}
}
