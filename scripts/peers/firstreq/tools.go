package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// tool is one agent under measurement: its binary, the reply the scripted
// model gives it, and how to point it at the scripted server (arguments and
// environment for one run in home, a directory kept across its runs).
type tool struct {
	name, exe, reply string
	setup            func(home, baseURL, model string) (args, env []string, err error)
}

// isolated keeps a tool's config, data and caches inside home.
func isolated(home string) []string {
	return []string{
		"HOME=" + home,
		"XDG_CONFIG_HOME=" + filepath.Join(home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(home, ".local", "share"),
		"XDG_CACHE_HOME=" + filepath.Join(home, ".cache"),
		"XDG_STATE_HOME=" + filepath.Join(home, ".local", "state"),
	}
}

func tools(o options) []tool {
	return []tool{
		{
			name: "exocortex", exe: o.exocortex,
			// Exocortex's default prompt answers in its JSON tool format.
			reply: `{"thoughts":["greet"],"tool_name":"response","tool_args":{"text":"Hello!"}}`,
			setup: func(home, baseURL, model string) ([]string, []string, error) {
				return []string{"run", "-p", "hello", "--provider", "openai", "--model", model},
					[]string{"EXOCORTEX_HOME=" + home, "OPENAI_BASE_URL=" + baseURL, "EXOCORTEX_EMBEDDER=none"}, nil
			},
		},
		{
			// opencode run: a custom provider through @ai-sdk/openai-compatible,
			// given as OPENCODE_CONFIG_CONTENT; -m provider/model.
			name: "opencode", exe: peerBin(o.peers, "opencode"), reply: "Hello!",
			setup: func(home, baseURL, model string) ([]string, []string, error) {
				cfg, err := json.Marshal(map[string]any{
					"$schema":     "https://opencode.ai/config.json",
					"autoupdate":  false,
					"share":       "disabled",
					"model":       "scripted/" + model,
					"small_model": "scripted/" + model,
					"provider": map[string]any{"scripted": map[string]any{
						"npm":     "@ai-sdk/openai-compatible",
						"name":    "scripted",
						"options": map[string]any{"baseURL": baseURL, "apiKey": "scripted"},
						"models":  map[string]any{model: map[string]any{"name": model}},
					}},
				})
				if err != nil {
					return nil, nil, fmt.Errorf("opencode config: %w", err)
				}
				env := append(isolated(home), "OPENCODE_CONFIG_CONTENT="+string(cfg),
					"OPENCODE_DISABLE_AUTOUPDATE=1", "OPENCODE_DISABLE_MODELS_FETCH=1")
				return []string{"run", "-m", "scripted/" + model, "hello"}, env, nil
			},
		},
		{
			// codex exec: a model provider with wire_api = "responses" in
			// $CODEX_HOME/config.toml (codex appends /responses to base_url and
			// reads the key from env_key).
			name: "codex", exe: peerBin(o.peers, "codex"), reply: "Hello!",
			setup: func(home, baseURL, model string) ([]string, []string, error) {
				dir := filepath.Join(home, ".codex")
				if err := os.MkdirAll(dir, 0o755); err != nil {
					return nil, nil, fmt.Errorf("codex home %s: %w", dir, err)
				}
				cfg := fmt.Sprintf("model = %q\nmodel_provider = \"scripted\"\n\n[model_providers.scripted]\n"+
					"name = \"scripted\"\nbase_url = %q\nenv_key = \"SCRIPTED_API_KEY\"\nwire_api = \"responses\"\n",
					model, baseURL)
				if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(cfg), 0o644); err != nil {
					return nil, nil, fmt.Errorf("codex config: %w", err)
				}
				env := append(isolated(home), "CODEX_HOME="+dir, "SCRIPTED_API_KEY=scripted")
				return []string{"exec", "--skip-git-repo-check", "-m", model, "hello"}, env, nil
			},
		},
		{
			// crush run: an OpenAI-compatible provider in ./crush.json.
			name: "crush", exe: o.crush, reply: "Hello!",
			setup: func(home, baseURL, model string) ([]string, []string, error) {
				cfg, err := json.Marshal(map[string]any{
					"providers": map[string]any{"scripted": map[string]any{
						"type": "openai-compat", "base_url": baseURL, "api_key": "scripted",
						"models": []map[string]any{{"id": model, "name": model, "context_window": 32768, "default_max_tokens": 1024}},
					}},
					"models": map[string]any{
						"large": map[string]any{"provider": "scripted", "model": model},
						"small": map[string]any{"provider": "scripted", "model": model},
					},
				})
				if err != nil {
					return nil, nil, fmt.Errorf("crush config: %w", err)
				}
				if err := os.WriteFile(filepath.Join(home, "crush.json"), cfg, 0o644); err != nil {
					return nil, nil, fmt.Errorf("crush config: %w", err)
				}
				return []string{"run", "hello"}, isolated(home), nil
			},
		},
	}
}
