package config

import (
	"os"
	"path/filepath"
	"time"

	"github.com/exocortex/exocortex/toolsettings"
)

// Tools configures the agent's built-in tools: the `tools:` section of config.yaml.
// A zero field means its default (see WithDefaults), so an empty section is a
// working configuration, except for web_search, which needs a provider.
//
// The host resolves it (ToolsAt) and sends the tool plugins what they need in
// the plugin settings (PluginSettingsEnv, package toolsettings): every section
// but the secrets, so no plugin reads config.yaml. web_search's api_key is a
// secret: the plugin serving web_search declares it (sdk.Plugin.SettingSecrets)
// and asks the host for it (docs/secrets.md). What only the running host knows
// reaches the plugins through the environment the host gives them
// (host.Options.PluginEnv): the project directory in EXOCORTEX_PROJECT and the
// home directory in EXOCORTEX_HOME.
//
//	tools:
//	  editor:
//	    roots: [".", "/srv/data"]
//	  code_execution:
//	    timeout: 60s
//	    output_limit: 10000
//	  web_search:
//	    url: http://127.0.0.1:8888      # a SearXNG instance with the json format on
//	    rate: 1                         # requests per second
type Tools struct {
	// Home is the Exocortex home directory (filled in by LoadTools, not read from
	// the file): the memory store, staging.jsonl and the library catalog live in it.
	Home string `yaml:"-"`
	// ProjectDir is where relative paths of the tools start: $EXOCORTEX_PROJECT,
	// else the process's working directory (filled in by LoadTools).
	ProjectDir string `yaml:"-"`

	Editor        Editor        `yaml:"editor"`
	CodeExecution CodeExecution `yaml:"code_execution"`
	Data          Data          `yaml:"data"`
	WebSearch     WebSearch     `yaml:"web_search"`
	Memory        MemoryTools   `yaml:"memory"`
	// Sandbox confines the processes the tools run (docs/sandbox.md).
	Sandbox Sandbox `yaml:"sandbox"`
}

// Sandbox configures the OS sandbox every process the agent's tools start runs
// in: the tools' settings contract (toolsettings.Sandbox).
type Sandbox = toolsettings.Sandbox

// Confinement is the sandbox as one tool applies it (toolsettings.Confinement).
type Confinement = toolsettings.Confinement

// confinement resolves the sandbox settings for the tools: paths absolute,
// ~ expanded, secrets added to the defaults (config.yaml among them).
func (t Tools) confinement() Confinement {
	var hidden []string
	if t.Home != "" {
		hidden = append(hidden, filepath.Join(t.Home, FileName))
	}
	return toolsettings.Confine(t.Sandbox, t.ProjectDir, hidden, t.CodeExecution.WorkDir, t.Data.BaseDir)
}

// Editor configures text_editor: the tools' settings contract
// (toolsettings), which the host sends its plugins.
type Editor = toolsettings.Editor

// CodeExecution configures code_execution (toolsettings.CodeExecution).
type CodeExecution = toolsettings.CodeExecution

// Data configures data_analyze and data_visualize (toolsettings.Data).
type Data = toolsettings.Data

// WebSearch configures web_search (toolsettings.WebSearch; its APIKey is
// never sent to a plugin in the settings).
type WebSearch = toolsettings.WebSearch

// MemoryTools configures the memory, library and staging tools.
type MemoryTools struct {
	// IdleClose closes the memory store after this long without a tool call,
	// releasing its lock (so `exocortex memory` works between turns) and leaving
	// its indexes cleanly closed; it reopens on the next call. Default 1m; a
	// negative value keeps it open until the plugin exits.
	IdleClose Duration `yaml:"idle_close" check:"any"`
	// Embedder computes the store's vectors, for the tools, the recall
	// extensions and the CLI alike: "auto" (the default: the full offline GloVe
	// file if it is found, else the compact table built into the binary), "none"
	// (BM25 alone), "glove:PATH", "glove:compact",
	// "ollama:MODEL" (e.g. ollama:nomic-embed-text) or "openai:MODEL" (the
	// OpenAI-compatible server under openai:). $EXOCORTEX_EMBEDDER
	// overrides it. Changing the model re-embeds every record from the journal
	// on the next open.
	Embedder string `yaml:"embedder" env:"EXOCORTEX_EMBEDDER"`
	// Recall configures the memories recalled into every user prompt.
	Recall Recall `yaml:"recall"`
}

// Recall configures the recall extensions (toolsettings.Recall).
type Recall = toolsettings.Recall

// Environment variables read by LoadTools.
const (
	// EnvProject is the project directory; the host sets it for its plugins.
	EnvProject = "EXOCORTEX_PROJECT"
	// EnvSearchProvider, EnvSearchURL and EnvSearchKey override
	// tools.web_search.provider, .url and .api_key.
	EnvSearchProvider = toolsettings.EnvSearchProvider
	EnvSearchURL      = toolsettings.EnvSearchURL
	EnvSearchKey      = toolsettings.EnvSearchKey
	// EnvSearchRate overrides tools.web_search.rate (requests per second).
	EnvSearchRate = toolsettings.EnvSearchRate
	// EnvEmbedder overrides tools.memory.embedder.
	EnvEmbedder = "EXOCORTEX_EMBEDDER"
	// EnvAgent is set to 1 by the host for plugins it starts to run an agent
	// (`exocortex run`, the operator's session), not for those it starts only
	// to list or check them: a plugin that prepares slow work when its process
	// starts (memory-tools opens its store) does so only for an agent.
	EnvAgent = "EXOCORTEX_AGENT"
)

// Search providers.
const (
	SearchSearXNG = toolsettings.SearchSearXNG
	SearchTavily  = toolsettings.SearchTavily
)

// LoadTools loads the tools' configuration as a built-in plugin sees it: home's
// config.yaml (Load), the tool environment variables, then the defaults, with
// Home and ProjectDir filled in.
func LoadTools(home string) (Tools, error) {
	cfg, err := Load(home)
	if err != nil {
		return Tools{}, err
	}
	return cfg.ToolsAt(home)
}

// ToolsAt is what LoadTools returns, from a configuration already read from
// home (Load): the tools' section with the home, the environment's overrides
// and the defaults applied. A process that has read its configuration passes
// it down rather than reading config.yaml again.
func (c Config) ToolsAt(home string) (Tools, error) { return c.toolsWith(home, os.Getenv) }

// toolsWith is ToolsAt with the environment read through getenv.
func (c Config) toolsWith(home string, getenv func(string) string) (Tools, error) {
	t := c.Tools
	t.Home = home
	t.applyEnv(getenv)
	return t.WithDefaults(), nil
}

// LoadToolsFromEnv is LoadTools on the home directory Home finds.
func LoadToolsFromEnv() (Tools, error) {
	home, err := Home()
	if err != nil {
		return Tools{}, err
	}
	return LoadTools(home)
}

// applyEnv applies the project directory the host gives its plugins; the
// tools' other variables are their keys' env tags, applied by Inspect.
func (t *Tools) applyEnv(getenv func(string) string) {
	if v := getenv(EnvProject); v != "" {
		t.ProjectDir = v
	}
}

// WithDefaults returns t with every zero field set to its default, the project
// directory made absolute and relative paths resolved against it.
func (t Tools) WithDefaults() Tools {
	if t.ProjectDir == "" {
		if wd, err := os.Getwd(); err == nil {
			t.ProjectDir = wd
		}
	}
	if abs, err := filepath.Abs(t.ProjectDir); err == nil {
		t.ProjectDir = abs
	}
	t.Editor = t.Editor.WithDefaults(t.ProjectDir)
	t.CodeExecution = t.CodeExecution.WithDefaults(t.ProjectDir)
	t.Data = t.Data.WithDefaults(t.ProjectDir)
	t.WebSearch = t.WebSearch.WithDefaults()
	t.Memory = t.Memory.WithDefaults()
	if t.Sandbox.Network == "" {
		t.Sandbox.Network = "on"
	}
	c := t.confinement()
	t.CodeExecution.Confine, t.Data.Confine = c, c
	return t
}

// WithDefaults fills in the memory tools' defaults.
func (m MemoryTools) WithDefaults() MemoryTools {
	if m.IdleClose == 0 {
		m.IdleClose = Duration(time.Minute)
	}
	if m.Embedder == "" {
		m.Embedder = "auto"
	}
	return m
}
