package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/exocortex/exocortex/config"
	"github.com/exocortex/exocortex/core/discover"
	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/core/llm"
	"github.com/exocortex/exocortex/core/llm/scripted"
	"github.com/exocortex/exocortex/extensions/builtin"
	"github.com/exocortex/exocortex/lint"
	"github.com/exocortex/exocortex/memory"
	"github.com/exocortex/exocortex/prompts"
	"github.com/exocortex/exocortex/replay"
	"github.com/exocortex/exocortex/secrets"
)

// app is what every subcommand starts from: the home directory and the
// configuration, with flags applied by the subcommand.
type app struct {
	home string
	cfg  config.Config
	log  *slog.Logger
	// logFile receives the host's and the plugins' logs, through logMask,
	// which masks the secrets out of every line once they are read.
	logFile io.WriteCloser
	logMask *secrets.Writer
	// secrets are the operator's secrets, read by loadSecrets for an agent.
	secrets       *secrets.Store
	secretsLoaded bool
	// allowWiringErrors starts plugins the wiring lint finds errors in
	// (--allow-wiring-errors); by default they are kept out, as hot reload does.
	allowWiringErrors bool
	// failures, when set, gets one line for each plugin failure during the
	// session (a crash, a hang killed at its deadline, a quarantine, an
	// extension over its time budget; failed loads are reported at start): `run -p` without --json sets it
	// to stderr, so none of them passes unseen.
	failures io.Writer
	// failureEvents, when set, gets the same failures as events: `run --json`
	// sets it, so they are in its output.
	failureEvents func(host.Event, string)

	mu sync.Mutex
	// notify, when set, shows the operator a notice (a retried model request).
	notify func(string)
	// retried, when set, is told of each retried model request instead of
	// notify (the terminal session shows them in its status line).
	retried func(llm.Retry)
	// recorders record the sessions held, for `exocortex replay` (record.go).
	recorders map[string]*replay.Recorder
}

// setNotify sets where notices go.
func (a *app) setNotify(fn func(string)) {
	a.mu.Lock()
	a.notify = fn
	a.mu.Unlock()
}

func loadApp() (*app, error) {
	home, err := config.Home()
	if err != nil {
		return nil, err
	}
	cfg, err := config.Load(home)
	if err != nil {
		return nil, err
	}
	a := &app{home: home, cfg: cfg}
	if err := os.MkdirAll(filepath.Join(home, "logs"), 0o755); err != nil {
		return nil, fmt.Errorf("creating %s: %w", filepath.Join(home, "logs"), err)
	}
	f, err := os.OpenFile(filepath.Join(home, "logs", "exocortex.log"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening the log: %w", err)
	}
	a.logMask = secrets.NewWriter(f)
	a.logFile = a.logMask
	a.log = slog.New(slog.NewTextHandler(a.logFile, &slog.HandlerOptions{Level: slog.LevelInfo}))
	return a, nil
}

// tools is the tools' section of the configuration loadApp read (config.ToolsAt):
// the configuration is read once per process and passed down.
func (a *app) tools() (config.Tools, error) { return a.cfg.ToolsAt(a.home) }

// promptDirs are the prompt override directories of projectDir's project and
// the user, as the loop reads them (prompts.Dirs).
func (a *app) promptDirs(projectDir string) []string {
	return prompts.Dirs(projectDir, a.home, a.cfg.TrustedProjects)
}

func (a *app) close() {
	a.closeRecorders()
	if a.logFile != nil {
		a.logFile.Close()
	}
}

// pluginDirs lists the plugin directories in priority order: the project's,
// the user's, then the configured ones.
func (a *app) pluginDirs() []discover.Dir {
	var dirs []discover.Dir
	if wd, err := os.Getwd(); err == nil {
		dirs = append(dirs, discover.Dir{Path: filepath.Join(wd, ".exocortex", "plugins"), Source: discover.Project})
	}
	dirs = append(dirs, discover.Dir{Path: filepath.Join(a.home, "plugins"), Source: discover.User})
	for _, d := range a.cfg.PluginDirs {
		dirs = append(dirs, discover.Dir{Path: d, Source: discover.Extra})
	}
	return dirs
}

// builtins are the built-in plugins: this binary, re-executed as a plugin server.
func builtins() ([]discover.Candidate, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("finding the exocortex binary to serve the built-in plugins: %w", err)
	}
	var out []discover.Candidate
	for _, name := range builtin.Names() {
		out = append(out, builtinCandidate(exe, name))
	}
	return out, nil
}

// builtinCandidate is the built-in plugin name, served by the exocortex
// binary exe re-executed as `exe plugin serve name`.
func builtinCandidate(exe, name string) discover.Candidate {
	return discover.Candidate{
		Name: name, Path: exe + " plugin serve " + name,
		Command: []string{exe, "plugin", "serve", name},
		WorkDir: filepath.Dir(exe), Dir: discover.Dir{Path: "(built in)", Source: discover.Builtin},
	}
}

// hostOptions builds the host's options from the configuration.
func (a *app) hostOptions() (host.Options, error) {
	b, err := builtins()
	if err != nil {
		return host.Options{}, err
	}
	opts := host.Options{
		Dirs:           a.pluginDirs(),
		Builtins:       b,
		Logger:         a.log,
		PluginLog:      a.logFile,
		DefaultTimeout: time.Duration(a.cfg.Timeouts.Default),
		Timeouts:       map[string]time.Duration{},
		Disabled:       set(a.cfg.DisabledExtensions),
		Enabled:        set(a.cfg.EnabledExtensions),
		Checksums:      a.cfg.Checksums,
		InProcess:      a.inProcessBuiltins(),
		OnEvent:        a.eventLogger(),
		// Built-in plugins run from the binary's directory; they learn the
		// operator's project (editor roots, code_execution's start) and home here.
		PluginEnv:       []string{config.EnvProject + "=" + cwd(), config.HomeEnv + "=" + a.home},
		TrustedProjects: a.cfg.TrustedProjects,
		// One rule at start and at hot reload: a plugin that adds wiring
		// errors is kept out (or started anyway with --allow-wiring-errors).
		WiringCheck:       lint.HostCheck(prompts.Embedded(), a.promptDirs(cwd())...),
		AllowWiringErrors: a.allowWiringErrors,
		Utility: host.UtilityLimits{Timeout: time.Duration(a.cfg.UtilityCalls.Timeout), PerMinute: a.cfg.UtilityCalls.PerMinute,
			Burst: a.cfg.UtilityCalls.Burst, Concurrent: a.cfg.UtilityCalls.Concurrent, MaxPromptBytes: a.cfg.UtilityCalls.MaxPromptBytes},
	}
	for k, v := range a.cfg.Timeouts.Extensions {
		opts.Timeouts[k] = time.Duration(v)
	}
	// The session's settings a plugin may read (config.PluginSettings).
	settings, err := a.cfg.PluginSettingsEnv(a.home, cwd())
	if err != nil {
		return host.Options{}, err
	}
	opts.PluginEnv = append(opts.PluginEnv, settings)
	return opts, nil
}

// openHost starts the plugins; agent says they are started to run an agent
// (config.EnvAgent), not only to be listed. A host that runs an agent for
// longer than one command opens with openLiveHost instead, which watches.
func (a *app) openHost(ctx context.Context, agent bool) (*host.Host, error) {
	opts, err := a.hostOptionsFor(agent)
	if err != nil {
		return nil, err
	}
	h, err := host.New(ctx, opts)
	if err != nil || !agent {
		return h, err
	}
	a.warmMemory(ctx, h)
	return h, nil
}

// hostOptionsFor is hostOptions, for plugins started to run an agent when
// agent is set: marked so, and given the secrets.
func (a *app) hostOptionsFor(agent bool) (host.Options, error) {
	opts, err := a.hostOptions()
	if err != nil {
		return opts, err
	}
	if agent {
		opts.PluginEnv = append(opts.PluginEnv, config.EnvAgent+"=1")
		if opts.Secrets, err = a.loadSecrets(); err != nil {
			return host.Options{}, err
		}
		if env := a.mcpEnvSecrets(opts.Secrets); env != "" {
			opts.BuiltinEnv = map[string][]string{builtin.MCPPlugin: {env}}
		}
		// The plugins reach the home's memory service through the host.
		opts.Memory = homeMemoryOn(a.home, a.cfg.Tools.Memory.WithDefaults().Embedder, journalSetting(a.cfg), a.log)
	}
	return opts, nil
}

// warmMemory connects an agent's host to the memory service (and, as its
// owner, opens the store) beside the start-up. A home without a store gets
// one at its first memory call (the first prompt's recall), not by starting a
// session.
func (a *app) warmMemory(ctx context.Context, h *host.Host) {
	if _, err := os.Stat(filepath.Join(a.home, "memory", memory.JournalFile)); err == nil {
		go h.Services().WarmMemory(ctx)
	}
}

// eventLogger appends plugin events to $EXOCORTEX_HOME/logs/events.jsonl.
func (a *app) eventLogger() func(host.Event) {
	path := filepath.Join(a.home, "logs", "events.jsonl")
	var mu sync.Mutex
	return func(e host.Event) {
		b, err := json.Marshal(e)
		if err != nil {
			return
		}
		b = a.secrets.Masker().MaskBytes(b)
		mu.Lock()
		defer mu.Unlock()
		f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			a.log.Warn("writing the event log", "err", err)
			return
		}
		_, _ = f.Write(append(b, '\n'))
		f.Close()
		if line := failureLine(e); line != "" {
			if a.failures != nil {
				fmt.Fprintln(a.failures, a.secrets.Masker().Mask(line))
			}
			if a.failureEvents != nil {
				a.failureEvents(e, a.secrets.Masker().Mask(line))
			}
		}
	}
}

// failureLine is the operator's one line for a host event that means a plugin
// failed or misbehaved, or "" for the others.
func failureLine(e host.Event) string {
	name := e.Plugin
	if e.Extension != "" {
		name += "/" + e.Extension
	}
	switch e.Kind {
	case "crash":
		return fmt.Sprintf("warning: plugin %s crashed or hung and was stopped: %s (it restarts on its next use; see exocortex plugins status)", name, e.Detail)
	case "quarantine":
		return fmt.Sprintf("warning: plugin %s is quarantined: %s (it is retried when its file changes)", name, e.Detail)
	case host.EventBudgetStopped:
		return fmt.Sprintf("warning: extension %s kept exceeding its time budget at %s and is not called again this monologue", name, e.Hook)
	case host.EventLateStateWrite:
		return fmt.Sprintf("warning: plugin %s, extension %s changed state key %q after its call at %s had returned (from a goroutine or background task), so the change was refused: state changes travel with the call's response; make the change before the method returns (await the task), or at the extension's next call", e.Plugin, e.Extension, e.Detail, e.Hook)
	case host.EventCommandHook:
		return "warning: " + e.Detail
	case host.EventOverBudget:
		return fmt.Sprintf("warning: extension %s took %d ms at %s, over its %d ms budget", name, e.TookMS, e.Hook, e.BudgetMS)
	}
	return ""
}

// model returns the configured provider and the chat model's name.
// "script:FILE" starts a scripted server of the configured provider's
// protocol that replays FILE through the same client path as a real model;
// the returned stop function shuts it down.
func (a *app) model() (llm.Provider, string, func(), error) {
	return openModel(a.cfg, a.cfg.Model, a.retryNotice)
}

// openModel opens cfg's provider for model, starting a scripted server for
// "script:FILE".
func openModel(cfg config.Config, model string, onRetry func(llm.Retry)) (llm.Provider, string, func(), error) {
	pc := providerConfig(cfg, onRetry)
	if file, ok := strings.CutPrefix(model, "script:"); ok {
		s, err := scripted.LoadScript(file)
		if err != nil {
			return nil, "", nil, err
		}
		srv, err := scripted.Start(pc.Provider, s)
		if err != nil {
			return nil, "", nil, err
		}
		pc.BaseURL = srv.URL()
		c, err := llm.Open(pc)
		if err != nil {
			srv.Close()
			return nil, "", nil, err
		}
		return c, srv.Model(), func() { srv.Close() }, nil
	}
	c, err := llm.Open(pc)
	if err != nil {
		return nil, "", nil, err
	}
	return c, model, func() {}, nil
}

// providerConfig is the llm.Config of the configured provider; the API key
// is read from its environment variable here and goes nowhere else.
func providerConfig(cfg config.Config, onRetry func(llm.Retry)) llm.Config {
	if cfg.Provider == llm.ProviderOpenAI {
		key, env := cfg.OpenAI.APIKey()
		return llm.Config{
			Provider: llm.ProviderOpenAI, BaseURL: cfg.OpenAI.BaseURL, APIKey: key, APIKeyEnv: env,
			Timeout: time.Duration(cfg.OpenAI.Timeout), MaxRetries: cfg.OpenAI.MaxRetries, OnRetry: onRetry,
		}
	}
	return llm.Config{Provider: llm.ProviderOllama, BaseURL: cfg.OllamaHost, Timeout: time.Duration(cfg.Ollama.Timeout)}
}

// retryNotice makes a retried model request visible: in the log, and to
// the operator through notify when a command set it.
func (a *app) retryNotice(r llm.Retry) {
	a.log.Warn("model request retried", "retry", r.String())
	a.mu.Lock()
	notify, retried := a.notify, a.retried
	a.mu.Unlock()
	switch {
	case retried != nil:
		retried(r)
	case notify != nil:
		notify(r.String())
	}
}

func set(xs []string) map[string]bool {
	m := map[string]bool{}
	for _, x := range xs {
		m[x] = true
	}
	return m
}

func cwd() string {
	wd, err := os.Getwd()
	if err != nil {
		return "."
	}
	return wd
}
