package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/exocortex/exocortex/sandbox"
	"github.com/exocortex/exocortex/toolsettings"
)

// Tools configures the agent's built-in tools: the `tools:` section of config.yaml.
// A zero field means its default (see WithDefaults), so an empty section is a
// working configuration, except for web_search, which needs a provider.
//
// The host resolves it (ToolsAt) and sends the tool plugins what they need in
// the plugin settings (PluginSettingsEnv, package toolsettings): text_editor's
// settings so far. The tools not yet moved there read this themselves with
// LoadTools: they are the exocortex binary re-executed by the host (`exocortex
// plugin serve NAME`), so they find the same home directory and the same
// config.yaml. What only the running host knows reaches them through the
// environment the host gives its plugins (host.Options.PluginEnv): the project
// directory in EXOCORTEX_PROJECT and, to be safe, the home directory in
// EXOCORTEX_HOME.
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
// in (code_execution's shells, the data tools' scripts, the operator's
// !commands): writes only beneath the project directory, the session's scratch
// directory and WritePaths; no reading of the secrets; network as set. See
// docs/sandbox.md.
//
//	tools:
//	  sandbox:
//	    write_paths: ["~/.cache/pip", "/srv/data"]
//	    secrets: ["~/.config/exocortex-keys"]
//	    network: off
type Sandbox struct {
	// WritePaths are more directories the sandboxed processes may write beneath
	// (relative to the project directory; ~ is the home directory).
	WritePaths []string `yaml:"write_paths"`
	// Secrets are more files and directories they may not read, beside ~/.ssh,
	// ~/.gnupg, ~/.aws, ~/.netrc, ... (sandbox.DefaultSecrets) and the
	// Exocortex config.yaml, which may hold API keys.
	Secrets []string `yaml:"secrets"`
	// Network is "on" (the default) or "off" (a network namespace with nothing in
	// it: no connection anywhere, localhost included).
	Network string `yaml:"network" allowed:"on,off"`
	// ScratchDir holds the per-session scratch directories (default
	// $TMPDIR/exocortex-scratch); each session may write only its own.
	ScratchDir string `yaml:"scratch_dir"`
	// UnsafeDisable turns the sandbox off: the agent's commands then run with all
	// the operator's rights. The approval mode (even yolo) never does this.
	UnsafeDisable bool `yaml:"UNSAFE_disable_sandbox"`
}

// Confinement is the sandbox as one tool applies it, derived from the
// tools.sandbox section by Tools.WithDefaults (never read from the file).
type Confinement struct {
	// Policy is the sandbox policy; the session's own scratch directory is
	// added to its write roots when the session starts.
	Policy sandbox.Policy
	// ScratchDir is where the per-session scratch directories are made.
	ScratchDir string
	// Off is tools.sandbox.UNSAFE_disable_sandbox.
	Off bool
}

// confinement resolves the sandbox settings for the tools: paths absolute,
// ~ expanded, secrets added to the defaults.
func (t Tools) confinement() Confinement {
	userHome, _ := os.UserHomeDir()
	expand := func(p string) string {
		if p == "~" || strings.HasPrefix(p, "~/") {
			return filepath.Join(userHome, strings.TrimPrefix(p, "~"))
		}
		return under(t.ProjectDir, p)
	}
	s := t.Sandbox
	scratch := s.ScratchDir
	if scratch == "" {
		scratch = filepath.Join(os.TempDir(), "exocortex-scratch")
	}
	scratch = expand(scratch)
	p := sandbox.Policy{Network: s.Network != "off"}
	for _, d := range []string{t.ProjectDir, t.CodeExecution.WorkDir, t.Data.BaseDir} {
		if d != "" && !slices.Contains(p.WriteRoots, d) {
			p.WriteRoots = append(p.WriteRoots, d)
		}
	}
	for _, d := range s.WritePaths {
		p.WriteRoots = append(p.WriteRoots, expand(d))
	}
	p.Secrets = sandbox.DefaultSecrets(userHome)
	if t.Home != "" {
		p.Secrets = append(p.Secrets, filepath.Join(t.Home, FileName))
	}
	for _, f := range s.Secrets {
		p.Secrets = append(p.Secrets, expand(f))
	}
	return Confinement{Policy: p, ScratchDir: scratch, Off: s.UnsafeDisable}
}

// Editor configures text_editor: the tools' settings contract
// (toolsettings), which the host sends its plugins.
type Editor = toolsettings.Editor

// CodeExecution configures code_execution.
type CodeExecution struct {
	// Timeout bounds one call; the command's processes are killed when it passes
	// (default 60s). Keep it below timeouts.tool: the host kills the whole plugin
	// at that deadline, and the tool shortens its own timeout to fit inside it.
	Timeout Duration `yaml:"timeout" check:"nonnegative"`
	// OutputLimit is how many bytes of output the model sees; longer output is cut
	// to its last OutputLimit bytes, with a note saying so (default 10000).
	OutputLimit int `yaml:"output_limit" check:"nonnegative"`
	// WorkDir is where a new session's shell starts (default the project
	// directory).
	WorkDir string `yaml:"work_dir"`
	// Shell, Python and Node are the programs behind the runtimes terminal,
	// python and nodejs (default bash, python3, node).
	Shell  string `yaml:"shell"`
	Python string `yaml:"python"`
	Node   string `yaml:"node"`
	// MaxSessions bounds the live shells of the plugin; starting one more stops
	// the least recently used (default 8).
	MaxSessions int `yaml:"max_sessions" check:"nonnegative"`
	// Confine is the sandbox its shells run in (from tools.sandbox).
	Confine Confinement `yaml:"-"`
}

// Data configures data_analyze and data_visualize.
type Data struct {
	// Python is the interpreter that runs the scripts (default python3).
	Python string `yaml:"python"`
	// Timeout bounds one script (default 60s).
	Timeout Duration `yaml:"timeout" check:"nonnegative"`
	// OutputLimit bounds the standard output returned (default 10000 bytes).
	OutputLimit int `yaml:"output_limit" check:"nonnegative"`
	// BaseDir is where relative input and output paths start (default the project
	// directory).
	BaseDir string `yaml:"base_dir"`
	// Confine is the sandbox the scripts run in (from tools.sandbox).
	Confine Confinement `yaml:"-"`
}

// WebSearch configures web_search. Without a URL or an API key the tool answers
// with an error saying what to set.
type WebSearch struct {
	// Provider is "searxng" or "tavily". Empty: searxng when URL is set, else
	// tavily when APIKey is set.
	Provider string `yaml:"provider" env:"EXOCORTEX_SEARCH_PROVIDER" allowed:"searxng,tavily"`
	// URL is the SearXNG instance (GET URL/search?q=...&format=json), or for
	// tavily a replacement of https://api.tavily.com.
	URL string `yaml:"url" env:"EXOCORTEX_SEARCH_URL"`
	// APIKey is the provider's key (tavily: required; searxng: sent as a bearer
	// token when set, for instances behind a proxy).
	APIKey string `yaml:"api_key" env:"EXOCORTEX_SEARCH_API_KEY" secret:"true"`
	// Rate is the sustained requests per second (default 1); Burst how many may
	// go at once after a quiet spell (default 1).
	Rate  float64 `yaml:"rate" env:"EXOCORTEX_SEARCH_RATE" check:"nonnegative"`
	Burst int     `yaml:"burst" check:"nonnegative"`
	// MaxResults is the default number of results (default 5, at most 20).
	MaxResults int `yaml:"max_results" check:"nonnegative"`
	// Timeout bounds one request (default 20s).
	Timeout Duration `yaml:"timeout" check:"nonnegative"`
}

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

// Recall configures the recall extensions (Agent Zero's memory recall settings).
type Recall struct {
	// Threshold is the least similarity a recalled memory needs: its BM25
	// score over the best, or with vectors the better of that and its cosine
	// similarity to the prompt (memory.MatchScore; default 0: the relevance
	// filter's relative floor alone decides).
	Threshold float64 `yaml:"threshold" check:"nonnegative"`
	// Limit is how many memories the block holds (default 5).
	Limit int `yaml:"limit" check:"nonnegative"`
	// AreaLimits caps the memories of one area in the block, e.g.
	// {main: 5, solutions: 3, fragments: 2}; areas not named share Limit.
	AreaLimits map[string]int `yaml:"area_limits" check:"nonnegative"`
	// BlockChars bounds the block within the prompt (default 2000).
	BlockChars int `yaml:"block_chars" check:"nonnegative"`
}

// Environment variables read by LoadTools.
const (
	// EnvProject is the project directory; the host sets it for its plugins.
	EnvProject = "EXOCORTEX_PROJECT"
	// EnvSearchProvider, EnvSearchURL and EnvSearchKey override
	// tools.web_search.provider, .url and .api_key.
	EnvSearchProvider = "EXOCORTEX_SEARCH_PROVIDER"
	EnvSearchURL      = "EXOCORTEX_SEARCH_URL"
	EnvSearchKey      = "EXOCORTEX_SEARCH_API_KEY"
	// EnvSearchRate overrides tools.web_search.rate (requests per second).
	EnvSearchRate = "EXOCORTEX_SEARCH_RATE"
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
	SearchSearXNG = "searxng"
	SearchTavily  = "tavily"
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

// under resolves p against base unless it is absolute.
func under(base, p string) string { return toolsettings.Under(base, p) }

// WithDefaults fills in code_execution's defaults; a relative work directory
// starts at project.
func (c CodeExecution) WithDefaults(project string) CodeExecution {
	if c.Timeout <= 0 {
		c.Timeout = Duration(60 * time.Second)
	}
	if c.OutputLimit <= 0 {
		c.OutputLimit = 10000
	}
	if c.WorkDir == "" {
		c.WorkDir = project
	}
	c.WorkDir = under(project, c.WorkDir)
	if c.Shell == "" {
		c.Shell = "bash"
	}
	if c.Python == "" {
		c.Python = "python3"
	}
	if c.Node == "" {
		c.Node = "node"
	}
	if c.MaxSessions <= 0 {
		c.MaxSessions = 8
	}
	if c.Confine.ScratchDir == "" {
		// Not derived from a whole tools section (an embedder, a test): the
		// default sandbox around the project and the work directory.
		off := c.Confine.Off
		c.Confine = Tools{ProjectDir: project, CodeExecution: c}.confinement()
		c.Confine.Off = off
	}
	return c
}

// WithDefaults fills in the data tools' defaults.
func (d Data) WithDefaults(project string) Data {
	if d.Python == "" {
		d.Python = "python3"
	}
	if d.Timeout <= 0 {
		d.Timeout = Duration(60 * time.Second)
	}
	if d.OutputLimit <= 0 {
		d.OutputLimit = 10000
	}
	if d.BaseDir == "" {
		d.BaseDir = project
	}
	d.BaseDir = under(project, d.BaseDir)
	if d.Confine.ScratchDir == "" {
		off := d.Confine.Off
		d.Confine = Tools{ProjectDir: project, Data: d}.confinement()
		d.Confine.Off = off
	}
	return d
}

// WithDefaults fills in web_search's defaults, choosing the provider from what is
// set when none is named.
func (w WebSearch) WithDefaults() WebSearch {
	if w.Provider == "" {
		switch {
		case w.URL != "":
			w.Provider = SearchSearXNG
		case w.APIKey != "":
			w.Provider = SearchTavily
		}
	}
	if w.Rate <= 0 {
		w.Rate = 1
	}
	if w.Burst <= 0 {
		w.Burst = 1
	}
	if w.MaxResults <= 0 {
		w.MaxResults = 5
	}
	if w.Timeout <= 0 {
		w.Timeout = Duration(20 * time.Second)
	}
	return w
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
