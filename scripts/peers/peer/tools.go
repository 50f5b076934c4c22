// Package peer is what the side-by-side harnesses of scripts/peers share: the
// agents under measurement (exocortex and the peers make peers installs), how
// each is pointed at the scripted OpenAI-compatible server, how a run is
// started and killed, a bridge from the Responses API codex speaks to that
// server, the o200k token count, and medians.
package peer

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/exocortex/exocortex/core/llm/scripted"
)

// Paths are where the agents' binaries are.
type Paths struct {
	// Exocortex is the exocortex binary (bin/exocortex).
	Exocortex string
	// Peers is the npm prefix make peers installs opencode-ai and @openai/codex into.
	Peers string
	// Crush is the crush binary make peers builds.
	Crush string
}

// Run is what one run of an agent is given.
type Run struct {
	// Home is the run's directory, kept across an agent's runs: its config,
	// data and caches, and the working directory of the run.
	Home string
	// BaseURL is the OpenAI-compatible base URL, /v1 included.
	BaseURL string
	// Model is the scripted model's name.
	Model string
	// Prompt is the task.
	Prompt string
	// Window is the context window to configure, in tokens; 0 leaves the
	// agent's default.
	Window int
	// Cache, when set, is the agent's cache directory (XDG_CACHE_HOME), kept
	// across runs whose homes are not; Home/.cache when "".
	Cache string
}

// Tool is one agent under measurement.
type Tool struct {
	Name, Exe string
	// Answer is the scripted reply that gives text as the agent's final answer.
	Answer func(text string) scripted.Reply
	// Read is the scripted reply that has the agent read file (a name in the
	// run's working directory dir) with its own tool, chosen from what req
	// offers; ok false when req offers no such tool (a side request: a title,
	// a summary).
	Read func(req scripted.OpenAIRequest, dir, file string) (reply scripted.Reply, ok bool)
	// Setup gives the arguments and environment of one run (in r.Home).
	Setup func(r Run) (args, env []string, err error)
	// WindowHow says how Setup configures Run.Window for this agent.
	WindowHow string
}

// Isolated keeps a tool's config, data and caches inside r.Home (the caches
// in r.Cache when set).
func Isolated(r Run) []string {
	cache := r.Cache
	if cache == "" {
		cache = filepath.Join(r.Home, ".cache")
	}
	return []string{
		"HOME=" + r.Home,
		"XDG_CONFIG_HOME=" + filepath.Join(r.Home, ".config"),
		"XDG_DATA_HOME=" + filepath.Join(r.Home, ".local", "share"),
		"XDG_CACHE_HOME=" + cache,
		"XDG_STATE_HOME=" + filepath.Join(r.Home, ".local", "state"),
	}
}

// Bin is the path of an npm-installed command under prefix.
func Bin(prefix, name string) string { return filepath.Join(prefix, "node_modules", ".bin", name) }

// Tools are the four agents, in their usual order.
func Tools(p Paths) []Tool {
	text := func(s string) scripted.Reply { return scripted.Reply{Content: s} }
	return []Tool{exocortex(p), opencode(p, text), codex(p, text), crush(p, text)}
}

// Select keeps the tools named in only (comma-separated; all when empty).
func Select(all []Tool, only string) []Tool {
	want := map[string]bool{}
	for _, n := range strings.Split(only, ",") {
		if n = strings.TrimSpace(n); n != "" {
			want[n] = true
		}
	}
	var out []Tool
	for _, t := range all {
		if len(want) == 0 || want[t.Name] {
			out = append(out, t)
		}
	}
	return out
}

// call is a reply with one native tool call.
func call(name string, args map[string]any) scripted.Reply {
	b, _ := json.Marshal(args) //nolint:errchkjson // plain values
	return scripted.Reply{ToolCalls: []scripted.ToolCall{{Name: name, Arguments: b}}}
}

// offers reports whether req offers a native tool called name.
func offers(req scripted.OpenAIRequest, name string) bool {
	for _, t := range req.Tools {
		if t.Function.Name == name {
			return true
		}
	}
	return false
}

func exocortex(p Paths) Tool {
	return Tool{
		Name: "exocortex", Exe: p.Exocortex,
		// Exocortex's default prompt answers in its JSON tool format; its tools
		// are documented in the system prompt, not offered natively, and it
		// takes a native call all the same.
		Answer: func(s string) scripted.Reply {
			b, _ := json.Marshal(map[string]any{"thoughts": []string{"done"}, "tool_name": "response", "tool_args": map[string]string{"text": s}}) //nolint:errchkjson // plain values
			return scripted.Reply{Content: string(b)}
		},
		Read: func(req scripted.OpenAIRequest, _, file string) (scripted.Reply, bool) {
			if len(req.Messages) == 0 || !strings.Contains(string(req.Messages[0].Content), "code_execution") {
				return scripted.Reply{}, false // a utility-model request (a summary)
			}
			return call("code_execution", map[string]any{"runtime": "terminal", "code": "cat " + file}), true
		},
		Setup: func(r Run) ([]string, []string, error) {
			env := []string{"EXOCORTEX_HOME=" + r.Home, "OPENAI_BASE_URL=" + r.BaseURL, "EXOCORTEX_EMBEDDER=none"}
			if r.Window > 0 {
				env = append(env, fmt.Sprintf("EXOCORTEX_NUM_CTX=%d", r.Window))
			}
			return []string{"run", "-p", r.Prompt, "--provider", "openai", "--model", r.Model}, env, nil
		},
		WindowHow: "EXOCORTEX_NUM_CTX=N (num_ctx)",
	}
}

func opencode(p Paths, text func(string) scripted.Reply) Tool {
	return Tool{
		// opencode run: a custom provider through @ai-sdk/openai-compatible,
		// given as OPENCODE_CONFIG_CONTENT; -m provider/model.
		Name: "opencode", Exe: Bin(p.Peers, "opencode"), Answer: text,
		Read: func(req scripted.OpenAIRequest, dir, file string) (scripted.Reply, bool) {
			switch {
			case offers(req, "read"):
				return call("read", map[string]any{"filePath": filepath.Join(dir, file)}), true
			case offers(req, "bash"):
				return call("bash", map[string]any{"command": "cat " + file, "description": "Read " + file}), true
			}
			return scripted.Reply{}, false
		},
		Setup: func(r Run) ([]string, []string, error) {
			m := map[string]any{"name": r.Model}
			if r.Window > 0 {
				m["limit"] = map[string]any{"context": r.Window, "output": 1024}
			}
			cfg, err := json.Marshal(map[string]any{
				"$schema":     "https://opencode.ai/config.json",
				"autoupdate":  false,
				"share":       "disabled",
				"model":       "scripted/" + r.Model,
				"small_model": "scripted/" + r.Model,
				"permission":  map[string]any{"edit": "allow", "bash": "allow", "webfetch": "allow", "external_directory": "allow"},
				"provider": map[string]any{"scripted": map[string]any{
					"npm":     "@ai-sdk/openai-compatible",
					"name":    "scripted",
					"options": map[string]any{"baseURL": r.BaseURL, "apiKey": "scripted"},
					"models":  map[string]any{r.Model: m},
				}},
			})
			if err != nil {
				return nil, nil, fmt.Errorf("opencode config: %w", err)
			}
			env := append(Isolated(r), "OPENCODE_CONFIG_CONTENT="+string(cfg),
				"OPENCODE_DISABLE_AUTOUPDATE=1", "OPENCODE_DISABLE_MODELS_FETCH=1")
			return []string{"run", "-m", "scripted/" + r.Model, r.Prompt}, env, nil
		},
		WindowHow: `the model's "limit": {"context": N, "output": 1024} in OPENCODE_CONFIG_CONTENT`,
	}
}

func codex(p Paths, text func(string) scripted.Reply) Tool {
	return Tool{
		// codex exec: a model provider with wire_api = "responses" in
		// $CODEX_HOME/config.toml (codex appends /responses to base_url and
		// reads the key from env_key).
		Name: "codex", Exe: Bin(p.Peers, "codex"), Answer: text,
		Read: func(req scripted.OpenAIRequest, dir, file string) (scripted.Reply, bool) {
			for _, t := range req.Tools {
				switch t.Function.Name {
				case "shell":
					return call("shell", map[string]any{"command": []string{"bash", "-lc", "cat " + file}, "workdir": dir}), true
				case "exec_command":
					return call("exec_command", map[string]any{"cmd": "cat " + file, "workdir": dir}), true
				case "shell_command":
					return call("shell_command", map[string]any{"command": "cat " + file, "workdir": dir}), true
				}
			}
			return scripted.Reply{}, false
		},
		Setup: func(r Run) ([]string, []string, error) {
			dir := filepath.Join(r.Home, ".codex")
			if err := os.MkdirAll(dir, 0o755); err != nil {
				return nil, nil, fmt.Errorf("codex home %s: %w", dir, err)
			}
			cfg := fmt.Sprintf("model = %q\nmodel_provider = \"scripted\"\n", r.Model)
			if r.Window > 0 {
				cfg += fmt.Sprintf("model_context_window = %d\n", r.Window)
			}
			cfg += fmt.Sprintf("\n[model_providers.scripted]\nname = \"scripted\"\nbase_url = %q\nenv_key = \"SCRIPTED_API_KEY\"\nwire_api = \"responses\"\n", r.BaseURL)
			if err := os.WriteFile(filepath.Join(dir, "config.toml"), []byte(cfg), 0o644); err != nil {
				return nil, nil, fmt.Errorf("codex config: %w", err)
			}
			env := append(Isolated(r), "CODEX_HOME="+dir, "SCRIPTED_API_KEY=scripted")
			return []string{"exec", "--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox", "-m", r.Model, r.Prompt}, env, nil
		},
		WindowHow: "model_context_window = N in $CODEX_HOME/config.toml",
	}
}

func crush(p Paths, text func(string) scripted.Reply) Tool {
	return Tool{
		// crush run: an OpenAI-compatible provider in ./crush.json.
		Name: "crush", Exe: p.Crush, Answer: text,
		Read: func(req scripted.OpenAIRequest, dir, file string) (scripted.Reply, bool) {
			switch {
			case offers(req, "view"):
				return call("view", map[string]any{"file_path": filepath.Join(dir, file)}), true
			case offers(req, "bash"):
				return call("bash", map[string]any{"command": "cat " + file, "description": "Read " + file}), true
			}
			return scripted.Reply{}, false
		},
		Setup: func(r Run) ([]string, []string, error) {
			window := 32768
			if r.Window > 0 {
				window = r.Window
			}
			cfg, err := json.Marshal(map[string]any{
				"providers": map[string]any{"scripted": map[string]any{
					"type": "openai-compat", "base_url": r.BaseURL, "api_key": "scripted",
					"models": []map[string]any{{"id": r.Model, "name": r.Model, "context_window": window, "default_max_tokens": 1024}},
				}},
				"models": map[string]any{
					"large": map[string]any{"provider": "scripted", "model": r.Model},
					"small": map[string]any{"provider": "scripted", "model": r.Model},
				},
			})
			if err != nil {
				return nil, nil, fmt.Errorf("crush config: %w", err)
			}
			if err := os.WriteFile(filepath.Join(r.Home, "crush.json"), cfg, 0o644); err != nil {
				return nil, nil, fmt.Errorf("crush config: %w", err)
			}
			return []string{"run", r.Prompt}, Isolated(r), nil
		},
		WindowHow: `the model's "context_window": N in ./crush.json`,
	}
}
