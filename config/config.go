package config

import (
	"fmt"
	"os"
	"strings"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/exocortex/exocortex/secrets"
	"github.com/exocortex/exocortex/toolsettings"
)

//go:generate go run ./internal/genkeydocs -out keydocs_gen.go

// FileName is the configuration file inside the home directory.
const FileName = "config.yaml"

// Config is the operator's configuration.
type Config struct {
	// Model is the chat model, e.g. "qwen3:8b", or "script:FILE" for a scripted
	// model that replays replies without Ollama.
	Model string `yaml:"model" env:"EXOCORTEX_MODEL"`
	// Provider is the model server's protocol: "ollama" (the default) or
	// "openai" for an OpenAI-compatible server (LM Studio, llama.cpp's
	// llama-server, vLLM, LocalAI, a gateway), configured under openai:.
	Provider string `yaml:"provider" env:"EXOCORTEX_PROVIDER" allowed:"ollama,openai"`
	// OllamaHost is the Ollama address ("" means OLLAMA_HOST or Ollama's default).
	OllamaHost string `yaml:"ollama_host" env:"OLLAMA_HOST"`
	// Ollama and OpenAI configure each provider.
	Ollama OllamaProvider `yaml:"ollama"`
	OpenAI OpenAIProvider `yaml:"openai"`
	// NumCtx is the context window sent with every request; 0 asks the model
	// for its context length (Ollama's /api/show), capped by MaxNumCtx.
	NumCtx int `yaml:"num_ctx" env:"EXOCORTEX_NUM_CTX" check:"nonnegative" zero:"asks the model"`
	// MaxNumCtx caps the window taken from the model (a larger window costs
	// the server memory for its cache).
	MaxNumCtx int `yaml:"max_num_ctx" check:"positive"`
	// UtilityModel does the small jobs: the summaries of history compression
	// ("": an extractive summary, no model call; timeouts.compress bounds it),
	// sleep's summaries with --model config and the plugins' utility-model
	// calls (utility_calls bounds them) ("": the chat model).
	UtilityModel string `yaml:"utility_model"`
	// FullToolDocs puts every tool's full documentation in the system prompt
	// instead of one line per tool until the tool is used.
	FullToolDocs bool `yaml:"full_tool_docs"`
	// MaxIterations bounds the iterations (model replies) of one monologue.
	MaxIterations int `yaml:"max_iterations" check:"positive"`
	// UnusableLimit is how many unusable replies in a row (not valid JSON, no
	// tool) end the monologue.
	UnusableLimit int `yaml:"unusable_limit" check:"positive"`
	// Python is the interpreter `plugins port` writes into a ported Agent Zero
	// tree's plugin.json, and checks the tree against ("": Debian's
	// /usr/bin/python3, which has the SDK's gRPC packages). A plugin's own
	// plugin.json names its interpreter; this is the default for new ports.
	Python string `yaml:"python"`
	// PluginDirs are scanned after the project and user plugin directories.
	PluginDirs []string `yaml:"plugin_dirs"`
	Timeouts   Timeouts `yaml:"timeouts"`
	// UtilityCalls bound the plugins' calls of the utility model (Agent Zero's
	// call_utility_model), per plugin; zero values take core/host's defaults.
	UtilityCalls UtilityCalls `yaml:"utility_calls"`
	// TimeBudgets are the hooks' time budgets: an extension over its budget is
	// reported, and a stream extension that keeps exceeding it is not called
	// for the rest of the monologue.
	TimeBudgets TimeBudgets `yaml:"time_budgets"`
	// DisabledExtensions are not run; EnabledExtensions turns on ones shipped disabled.
	DisabledExtensions []string `yaml:"disabled_extensions"`
	EnabledExtensions  []string `yaml:"enabled_extensions"`
	// Checksums pins plugins by name to the hex SHA-256 of their executable.
	Checksums map[string]string `yaml:"checksums"`
	// BuiltinPluginsInProcess serves the built-in plugins inside the host's
	// process, over the same protocol, instead of a process each (default
	// true: about 70-90 CPU-ms less each at start-up; the processes they start
	// get the plugin environment, without the secrets' variables, as from a
	// process of their own). false gives every built-in its own process again
	// (docs/plugin-development.md).
	BuiltinPluginsInProcess *bool `yaml:"builtin_plugins_in_process"`
	// Approval is the approval mode: default, auto-edit or yolo.
	Approval string `yaml:"approval" allowed:"default,auto-edit,auto_edit,yolo"`
	// EmbedModel is the short form of tools.memory.embedder for a model the
	// configured provider serves: embed_model: nomic-embed-text with provider
	// ollama means tools.memory.embedder: ollama:nomic-embed-text. Setting both
	// to different models is an error ("" leaves tools.memory.embedder alone).
	EmbedModel string `yaml:"embed_model"`
	// TrustedProjects are project directories whose plugins may load.
	TrustedProjects []string `yaml:"trusted_projects"`
	// Secrets are the credentials the agent's tools may use and the model
	// never sees, by name, each with its source: {env: VAR}, {file: PATH}
	// (mode 0600) or {keyring: NAME} (package secrets, docs/secrets.md).
	Secrets secrets.Config `yaml:"secrets"`
	// IdleSleep is how long an operator session stays idle before it runs the
	// sleep consolidation the trigger asked for; 0 turns it off.
	IdleSleep Duration `yaml:"idle_sleep" check:"nonnegative" zero:"turns it off"`
	// Tools configures the built-in tools (config/tools.go); the tool plugins
	// load it themselves with LoadTools.
	Tools Tools `yaml:"tools"`
	// MCP configures `exocortex mcp`, the Model Context Protocol server.
	MCP MCPServer `yaml:"mcp"`
	// MCPServers are MCP servers whose tools the agent uses (named
	// SERVER.TOOL), by name, each as the desktop clients write an mcpServers
	// entry: {command, args, env} for a local server on stdio, or {url (or
	// serverUrl), headers, type: sse or streamable-http} for a remote one, with
	// init_timeout and tool_timeout (seconds or a duration) and disabled.
	MCPServers map[string]toolsettings.MCPServer `yaml:"mcp_servers"`
	// MCPServersFile is a JSON file with a top-level mcpServers object, as
	// Claude Desktop and Cursor write it (a relative path starts at the home);
	// mcp_servers entries of the same name win.
	MCPServersFile string `yaml:"mcp_servers_file"`
	// CommandHooks configures the bridge that runs Claude Code, Gemini CLI and
	// Codex hook scripts (docs/command-hooks.md).
	CommandHooks toolsettings.CommandHooks `yaml:"command_hooks"`
	// Serve configures `exocortex serve`, the HTTP server (docs/api.md).
	Serve Serve `yaml:"serve"`
	// Memory configures the long-term memory store itself (the tools that
	// use it are under tools.memory).
	Memory Memory `yaml:"memory"`
}

// Memory is the memory: section.
//
//	memory:
//	  journal: nats://nats.internal:4222?creds=/etc/exo/agent.creds
type Memory struct {
	// Journal is where the memory journal lives: empty (the default) for the
	// journal file in the store's directory, one user on one machine; or a
	// NATS JetStream URL (nats://host:4222, tls://…, several servers
	// comma-separated, options stream=, subject=, replicas=, creds=, nkey=,
	// ca=, cert=, key=) for a journal shared by several hosts, each keeping
	// its store as a replica of the stream (docs/memory-nats.md).
	// $EXOCORTEX_NATS_URL overrides it.
	Journal string `yaml:"journal" env:"EXOCORTEX_NATS_URL"`
}

// MCPServer is the mcp: section: Exocortex served over the Model Context
// Protocol (`exocortex mcp`, and /mcp in `exocortex serve`).
type MCPServer struct {
	// MaxResultBytes bounds one tool result; a larger one is answered with an
	// error naming its size and the limit, never cut (default 1048576).
	MaxResultBytes int `yaml:"max_result_bytes" check:"nonnegative" zero:"takes the default"`
	// Agent adds Agent Zero's send_message and finish_chat tools: an MCP
	// client may run the agent, each chat in its own session (mcp-ID).
	Agent bool `yaml:"agent"`
	// Approval is the approval mode of the agent's chats over MCP: a tool
	// call held for approval is refused with the reason (an MCP client cannot
	// answer), unless the mode lets it run.
	Approval string `yaml:"approval" allowed:"default,auto-edit,auto_edit,yolo"`
}

// Serve is the serve: section: `exocortex serve`'s address, API keys and limits.
//
//	serve:
//	  addr: 127.0.0.1:8765
//	  api_key: …            # admin; better in EXOCORTEX_API_KEY
//	  agent_key: …          # chat, read and search only
type Serve struct {
	// Addr is the address serve listens on; an address other than loopback
	// needs api_key or agent_key.
	Addr string `yaml:"addr" env:"EXOCORTEX_SERVE_ADDR"`
	// APIKey is the key with the admin role (chat, read, search, write,
	// delete, register tools, approve), sent as X-API-KEY or Authorization:
	// Bearer. With no key, serve listens on loopback only and every local
	// caller is an admin.
	APIKey string `yaml:"api_key" env:"EXOCORTEX_API_KEY" secret:"true"`
	// AgentKey is the key with the agent role: chat, read and search.
	AgentKey string `yaml:"agent_key" env:"EXOCORTEX_AGENT_KEY" secret:"true"`
	// MaxBodyBytes bounds a request body (attachments included).
	MaxBodyBytes int `yaml:"max_body_bytes" check:"positive"`
	// RequestTimeout bounds a request (a whole turn of api_message), except
	// streamed answers.
	RequestTimeout Duration `yaml:"request_timeout" check:"positive"`
	// RatePerSecond and RateBurst are each key's rate limit: requests a
	// second, and at once after a quiet spell.
	RatePerSecond int `yaml:"rate_per_second" check:"positive"`
	RateBurst     int `yaml:"rate_burst" check:"positive"`
	// ShutdownTimeout is how long running turns may take to finish when serve
	// is stopped.
	ShutdownTimeout Duration `yaml:"shutdown_timeout" check:"positive"`
	// ApprovalTimeout is how long a held tool call of a served session waits
	// for POST /api/v1/approvals/{id} before it is refused.
	ApprovalTimeout Duration `yaml:"approval_timeout" check:"positive"`
}

// OllamaProvider is the ollama: section.
type OllamaProvider struct {
	// Timeout bounds the wait for Ollama to start answering a call, loading
	// the model included (default 5m); a reply then streams as long as it takes.
	Timeout Duration `yaml:"timeout" check:"nonnegative"`
}

// OpenAIProvider is the openai: section, for an OpenAI-compatible server.
type OpenAIProvider struct {
	// BaseURL is the API address with its /v1 prefix, e.g.
	// http://127.0.0.1:1234/v1 (LM Studio) or http://127.0.0.1:8080/v1
	// (llama-server); OPENAI_BASE_URL overrides it.
	BaseURL string `yaml:"base_url" env:"OPENAI_BASE_URL"`
	// APIKeyEnv names the environment variable holding the API key
	// (default OPENAI_API_KEY). The key itself never goes in this file.
	APIKeyEnv string `yaml:"api_key_env"`
	// Timeout bounds the wait for the server to start answering a call (default 5m).
	Timeout Duration `yaml:"timeout" check:"nonnegative"`
	// MaxRetries bounds the retries of a request answered 429 or 5xx (default 3; -1 none).
	MaxRetries int `yaml:"max_retries" check:"nonnegative|-1"`
}

// DefaultOpenAIBaseURL is LM Studio's default address.
const DefaultOpenAIBaseURL = "http://127.0.0.1:1234/v1"

// APIKey returns the OpenAI-compatible server's key from the environment
// variable api_key_env names, and that variable's name. The key is read when
// needed and never stored in the Config, so printing a Config cannot show it.
func (p OpenAIProvider) APIKey() (key, env string) {
	env = p.APIKeyEnv
	if env == "" {
		env = EnvOpenAIKey
	}
	return os.Getenv(env), env
}

// Timeouts are per-call deadlines.
type Timeouts struct {
	// Default applies to extensions whose manifest names none.
	Default Duration `yaml:"default" check:"positive"`
	// Tool bounds one tool call.
	Tool Duration `yaml:"tool" check:"positive"`
	// Tools overrides Tool per tool name (call_subordinate runs a whole agent).
	Tools map[string]Duration `yaml:"tools" check:"positive"`
	// Extensions overrides the deadline per extension name.
	Extensions map[string]Duration `yaml:"extensions" check:"positive"`
	// Compress bounds the utility model's summary of a history compression;
	// the extractive summary is used when it is late.
	Compress Duration `yaml:"compress" check:"nonnegative"`
}

// UtilityCalls bound each plugin's utility-model calls (core/host's
// UtilityLimits; zero values take its defaults: 60s, 30 a minute with bursts
// of 5, 2 at once, 64 KiB of prompt).
//
//	utility_calls:
//	  timeout: 60s          # one call, the util_model_call hooks included
//	  per_minute: 30        # calls a plugin may start per minute...
//	  burst: 5              # ...this many at once after a quiet spell
//	  concurrent: 2         # calls of one plugin running at once
//	  max_prompt_bytes: 65536  # system prompt and message together
type UtilityCalls struct {
	// Timeout bounds one call, the util_model_call hooks included.
	Timeout Duration `yaml:"timeout" check:"nonnegative"`
	// PerMinute is how many calls a plugin may start per minute.
	PerMinute int `yaml:"per_minute" check:"nonnegative"`
	// Burst is how many calls a plugin may start at once after a quiet spell.
	Burst int `yaml:"burst" check:"nonnegative"`
	// Concurrent is how many calls of one plugin may run at once.
	Concurrent int `yaml:"concurrent" check:"nonnegative"`
	// MaxPromptBytes bounds the system prompt and message of one call together.
	MaxPromptBytes int `yaml:"max_prompt_bytes" check:"nonnegative"`
}

// TimeBudgets are the time an extension may take at a hook before it is
// reported (core/loop's TimeBudgets; zero values take its defaults).
//
//	time_budgets:
//	  stream: 100ms        # one call at response_stream_chunk or response_stream_end
//	  iteration: 2s        # an extension's calls at any other hook in one iteration
//	  stop_after: 3        # over-budget stream calls in a row that stop it for the monologue
//	  hooks:
//	    response_stream_chunk: 50ms
type TimeBudgets struct {
	// Stream is the budget of one call at response_stream_chunk or
	// response_stream_end (default 100ms).
	Stream Duration `yaml:"stream" check:"nonnegative"`
	// Iteration is the budget of an extension's calls at any other hook in one
	// iteration (default 2s).
	Iteration Duration `yaml:"iteration" check:"nonnegative"`
	// StopAfter is how many over-budget stream calls in a row stop an
	// extension for the rest of the monologue (default 3).
	StopAfter int `yaml:"stop_after" check:"nonnegative"`
	// Hooks overrides the budget per hook name.
	Hooks map[string]Duration `yaml:"hooks" check:"positive"`
}

// Duration is a time.Duration written as "10s" in YAML
// (toolsettings.Duration, which the tools' settings share).
type Duration = toolsettings.Duration

// Default returns the configuration used when there is no file.
func Default() Config {
	return Config{
		Model:         "qwen3:8b",
		MaxNumCtx:     8192,
		Provider:      "ollama",
		OpenAI:        OpenAIProvider{BaseURL: DefaultOpenAIBaseURL, APIKeyEnv: EnvOpenAIKey},
		MaxIterations: 25,
		UnusableLimit: 5,
		Timeouts:      Timeouts{Default: Duration(10 * time.Second), Tool: Duration(2 * time.Minute), Compress: Duration(20 * time.Second)},
		Approval:      "default",
		IdleSleep:     Duration(10 * time.Minute),
		MCP:           MCPServer{Approval: "default"},
		Serve: Serve{Addr: "127.0.0.1:8765", MaxBodyBytes: 8 << 20, RequestTimeout: Duration(10 * time.Minute),
			RatePerSecond: 20, RateBurst: 40, ShutdownTimeout: Duration(30 * time.Second), ApprovalTimeout: Duration(5 * time.Minute)},
	}
}

// Environment variables that override the file.
const (
	EnvModel  = "EXOCORTEX_MODEL"
	EnvNumCtx = "EXOCORTEX_NUM_CTX"
	EnvOllama = "OLLAMA_HOST"
	// EnvProvider chooses the provider; EnvOpenAIBase the OpenAI-compatible
	// server's address; EnvOpenAIKey is the default variable holding its key.
	EnvProvider   = "EXOCORTEX_PROVIDER"
	EnvOpenAIBase = "OPENAI_BASE_URL"
	EnvOpenAIKey  = "OPENAI_API_KEY"
)

// CheckProvider reports whether name is a provider this build knows.
func CheckProvider(name string) error {
	switch name {
	case "ollama", "openai":
		return nil
	}
	return fmt.Errorf("provider %q: want ollama or openai", name)
}

// Load reads home/config.yaml over the defaults (a missing file is fine), then
// applies the environment, and refuses the configuration with every problem
// Inspect finds (Problems), each naming the file and line or the
// environment variable, and the key. Unknown keys are errors, so a typo does
// not pass unnoticed.
func Load(home string) (Config, error) {
	l, ps := Inspect(home, os.Getenv)
	if len(ps) > 0 {
		return l.Config, ps
	}
	return l.Config, nil
}

// applyEmbedModel turns embed_model into tools.memory.embedder, so the short
// form is not read by one part and ignored by the others.
func (c *Config) applyEmbedModel() error {
	m := strings.TrimSpace(c.EmbedModel)
	if m == "" {
		return nil
	}
	want := c.Provider + ":" + m
	switch e := strings.TrimSpace(c.Tools.Memory.Embedder); e {
	case "":
		c.Tools.Memory.Embedder = want
	case want:
	default:
		return fmt.Errorf("embed_model %q (%s) and tools.memory.embedder %q disagree: keep one of them (tools.memory.embedder takes \"auto\", \"none\", \"glove:PATH\", \"ollama:MODEL\" or \"openai:MODEL\")", m, want, e)
	}
	return nil
}

// Marshal renders the configuration as YAML (for `exocortex config`).
func (c Config) Marshal() ([]byte, error) { return yaml.Marshal(c) }
