// Package host loads plugins and keeps them running. It finds plugins with package
// discover, starts each as a process through hashicorp/go-plugin (gRPC only), reads
// its manifest, checks the wiring the manifests declare, and then runs calls
// against the extensions with a deadline each: one at a time (Call), several of
// one plugin in one round trip (CallBatch), or over the plugin's long-lived
// Dispatch stream (Dispatch, dispatch.go).
//
// Failure isolation: a plugin that panics or exits mid-call fails that call only;
// it is restarted on its next use after a backoff, and quarantined after three
// crashes within a minute until its file changes on disk. A call that misses its
// deadline kills the plugin, so a hung plugin cannot hold the turn twice. Plugins
// run in their own process group and die with the host.
//
// Built-in plugins the caller names in Options.InProcess are served inside the
// host's process over the same protocol instead (inprocess.go).
//
// The host does not know what the hooks mean; the agent loop (core/loop) decides
// what to send and what to do with the answers.
package host

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/exocortex/exocortex/core/discover"
	"github.com/exocortex/exocortex/core/hooks"
	"github.com/exocortex/exocortex/core/state"
	"github.com/exocortex/exocortex/core/wirecheck"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/secrets"
)

// Options configure a Host.
type Options struct {
	// Dirs are scanned in priority order; Builtins follow them.
	Dirs []discover.Dir
	// Builtins are the plugins shipped in the exocortex binary (re-executed as
	// plugin servers), with the lowest priority.
	Builtins []discover.Candidate
	Logger   *slog.Logger
	// Memory connects to the home's memory service, which the host serves its
	// plugins that declare uses_memory (nil: none, until Services.SetMemory).
	Memory MemoryConnector
	// PluginLog receives go-plugin's log and the plugins' stderr (default: discarded).
	PluginLog io.Writer
	// DefaultTimeout is the per-call deadline when a manifest gives none (10 s).
	DefaultTimeout time.Duration
	// Timeouts overrides deadlines per extension name.
	Timeouts map[string]time.Duration
	// StartTimeout bounds start-up and handshake (10 s).
	StartTimeout time.Duration
	// SlowStart is the start-up time (process start to manifest) beyond which
	// a plugin is reported as slow to start (DefaultSlowStart when 0; a
	// negative value turns the report off). Every run waits for it.
	SlowStart time.Duration
	// Disabled extensions are not run; Enabled turns on extensions shipped disabled.
	Disabled, Enabled map[string]bool
	// Checksums pins plugins by name to the hex SHA-256 of their executable.
	Checksums map[string]string
	// PluginEnv is added to every plugin's environment.
	PluginEnv []string
	// BuiltinEnv is added to the environment of one built-in plugin, by
	// name (a user's plugin of the same name gets none of it): what one
	// built-in needs and no other plugin may see, such as the values of the
	// env-sourced secrets the MCP servers' configuration names.
	BuiltinEnv map[string][]string
	// InProcess serves built-in plugins, by name, inside the host's process
	// over the same protocol instead of starting a process each (inprocess.go).
	// A plugin with a pinned checksum is started as a process all the same.
	InProcess map[string]InProcessServer
	// Secrets are the operator's secrets: masked out of every request to a
	// plugin and every answer, put only in the arguments of the tools that
	// declare them, and kept out of plugins' environments (secrets.go).
	Secrets *secrets.Store
	// OnEvent receives loads, crashes, restarts and quarantines, and the hot
	// reload events (reload.go).
	OnEvent func(Event)
	// TrustedProjects are the projects whose plugin directory (a Dir of source
	// Project) may load; an untrusted project's plugins are skipped with a
	// notice (trust.go).
	TrustedProjects []string
	// WatchDebounce is how quiet a changed plugin must be before Watch reloads
	// it (watch.DefaultDebounce when 0).
	WatchDebounce time.Duration
	// WiringCheck is the wiring lint (lint.HostCheck). With it, New keeps out
	// every plugin that adds an error finding, and hot reload refuses a version
	// that adds one: one rule at start and at reload (startcheck.go). Without
	// it only Wire's own checks apply.
	WiringCheck wirecheck.Func
	// AllowWiringErrors starts plugins with wiring errors anyway (the
	// operator's --allow-wiring-errors); the errors are still reported.
	AllowWiringErrors bool
	// Utility bounds each plugin's utility-model calls (utility.go).
	Utility UtilityLimits
}

// Event is something that happened to a plugin.
type Event struct {
	Time      time.Time `json:"time"`
	Kind      string    `json:"kind"`
	Plugin    string    `json:"plugin"`
	Extension string    `json:"extension,omitempty"`
	Detail    string    `json:"detail,omitempty"`
	// Hook, TookMS and BudgetMS, on over_budget and budget_stopped: where the
	// extension ran, how long it took and the budget it exceeded.
	Hook     string `json:"hook,omitempty"`
	TookMS   int64  `json:"took_ms,omitempty"`
	BudgetMS int64  `json:"budget_ms,omitempty"`
}

// Extension is one loaded extension at one hook.
type Extension struct {
	Spec    *exocortexv1.ExtensionSpec
	Plugin  *Plugin
	Hook    hooks.Info
	Timeout time.Duration
	Access  state.Access
}

// Name is the extension's name.
func (e *Extension) Name() string { return e.Spec.GetName() }

// Tool is a tool the agent may call: a plugin's (Plugin set) or another
// provider's (Provider set, Plugin nil; provider.go).
type Tool struct {
	Spec     *exocortexv1.ToolSpec
	Plugin   *Plugin
	Provider ToolProvider
}

// Shadow records an extension or tool hidden by a higher-priority plugin.
type Shadow struct {
	Kind   string `json:"kind"` // "plugin", "extension" or "tool"
	Name   string `json:"name"`
	Hidden string `json:"hidden"` // the plugin whose copy does not run
	By     string `json:"by"`     // the plugin whose copy runs
}

// Host runs the loaded plugins.
type Host struct {
	opts   Options
	logger *slog.Logger
	hclog  hclog.Logger
	// loaded is set once Load has started the first plugins: a slow start
	// after it (a restart, a new version) is an event of its own (slowstart.go).
	loaded atomic.Bool

	mu      sync.RWMutex
	plugins []*Plugin
	byHook  map[exocortexv1.Hook][]*Extension
	tools   map[string]*Tool
	// providers add tools that run outside the plugins (provider.go).
	providers []ToolLister
	shadows   []Shadow
	failed    []*StartError
	registry  *state.Registry
	services  *Services

	rl reloadState // hot reload (reload.go)

	// startup is set by the first ClaimStartup: startup_migration fires once
	// per host process.
	startup atomic.Bool
}

// ClaimStartup reports whether this is the first call in the host's life: the
// caller fires startup_migration then, and no later caller does.
func (h *Host) ClaimStartup() bool { return h.startup.CompareAndSwap(false, true) }

// Load starts every plugin and reads its manifest, without wiring them: the
// returned host has no extensions or tools to run. It is for tools that inspect
// what would run, broken wiring included (the wiring lint). Plugins that fail to
// start are reported in Status and FailedPlugins and do not stop the others.
func Load(ctx context.Context, opts Options) (*Host, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.PluginLog == nil {
		opts.PluginLog = io.Discard
	}
	if opts.DefaultTimeout == 0 {
		opts.DefaultTimeout = 10 * time.Second
	}
	if opts.StartTimeout == 0 {
		opts.StartTimeout = 10 * time.Second
	}
	if opts.SlowStart == 0 {
		opts.SlowStart = DefaultSlowStart
	}
	h := &Host{opts: opts, logger: opts.Logger, hclog: newHCLog(opts.PluginLog, hclog.Info), services: &Services{}}
	h.services.memConnect = opts.Memory
	h.services.host = h

	// Untrusted projects are left out (trust.go); discovery is shared with
	// hot reload (reload.go).
	cands, shadows := h.candidates(h.scanDirs())
	h.shadows = shadows
	h.noteSkips()

	plugins := make([]*Plugin, len(cands))
	var wg sync.WaitGroup
	for i, c := range cands {
		p := &Plugin{cand: c, h: h, stderr: newTail(20, opts.PluginLog)}
		p.stderr.watch = p.watchLog
		plugins[i] = p
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.mu.Lock()
			defer p.mu.Unlock()
			if err := p.start(ctx); err != nil {
				p.lastErr = err
			}
		}()
	}
	wg.Wait()

	for _, p := range plugins {
		if p.lastErr != nil {
			var se *StartError
			if !errors.As(p.lastErr, &se) {
				se = &StartError{Plugin: p.Name(), Path: p.cand.Path, Reason: p.lastErr.Error(), err: p.lastErr}
			}
			h.failed = append(h.failed, se)
			h.emit(Event{Kind: "load_failed", Plugin: p.Name(), Detail: se.Error()})
			continue
		}
		h.emit(Event{Kind: "load", Plugin: p.Name(), Detail: p.cand.Path})
		h.noteSlowStart(p)
	}
	h.plugins = plugins
	h.loaded.Store(true)
	h.registry = state.NewRegistry()
	h.byHook, h.tools = map[exocortexv1.Hook][]*Extension{}, map[string]*Tool{}
	return h, nil
}

// New loads every plugin (see Load) and wires them. Wiring errors between the
// loaded manifests (an order collision, a key declared with two types, prompt
// injection at a hook that fires after the prompt is built, an undeclared key)
// are returned as a *WiringError: the host does not run a pipeline it knows to be
// broken.
func New(ctx context.Context, opts Options) (*Host, error) {
	h, err := Load(ctx, opts)
	if err != nil {
		return nil, err
	}
	h.keepOutWiringErrors()
	var loaded []*Plugin
	for _, p := range h.plugins {
		if p.Manifest() != nil && !h.isFailed(p.Name()) {
			loaded = append(loaded, p)
		}
	}
	reg, table, err := Wire(loaded, h.opts)
	if err != nil {
		h.Close()
		return nil, err
	}
	h.registry, h.byHook, h.tools = reg, table.ByHook, table.Tools
	h.shadows = append(h.shadows, table.Shadows...)
	return h, nil
}

// Table is the wiring the manifests declare.
type Table struct {
	ByHook  map[exocortexv1.Hook][]*Extension
	Tools   map[string]*Tool
	Shadows []Shadow
}

// WiringError lists every problem found between the manifests.
type WiringError struct{ Problems []string }

func (e *WiringError) Error() string {
	return "the plugins' wiring is inconsistent:\n  - " + strings.Join(e.Problems, "\n  - ")
}

// Wire checks the manifests of plugins (in priority order) against each other and
// builds the hook table. It is used at start-up and to vet a reloaded plugin
// before it is swapped in.
func Wire(plugins []*Plugin, opts Options) (*state.Registry, Table, error) {
	reg := state.NewRegistry()
	var problems []string
	for _, p := range plugins {
		for _, k := range p.Manifest().GetStateKeys() {
			if err := reg.Declare(state.FromSpec(p.Name(), k)); err != nil {
				problems = append(problems, err.Error())
			}
		}
	}
	t := Table{ByHook: map[exocortexv1.Hook][]*Extension{}, Tools: map[string]*Tool{}}
	type owner struct{ plugin string }
	extOwner := map[string]string{}
	for _, p := range plugins {
		for _, spec := range p.Manifest().GetExtensions() {
			name := spec.GetName()
			info, ok := hooks.Of(spec.GetHook())
			if !ok {
				problems = append(problems, fmt.Sprintf("plugin %s, extension %s: unknown hook %v", p.Name(), name, spec.GetHook()))
				continue
			}
			if prev, ok := extOwner[name+"@"+info.Name]; ok && prev != p.Name() {
				t.Shadows = append(t.Shadows, Shadow{Kind: "extension", Name: name, Hidden: p.Name(), By: prev})
				continue
			}
			extOwner[name+"@"+info.Name] = p.Name()
			if spec.GetInjectsPrompt() && !info.InjectsPrompt {
				problems = append(problems, fmt.Sprintf("plugin %s, extension %s declares prompt injection at %s, which fires after the prompt is built: its text would never reach the model; move it to message_loop_prompts_after", p.Name(), name, info.Name))
			}
			if spec.GetFailOpen() && !info.Gates {
				problems = append(problems, fmt.Sprintf("plugin %s, extension %s declares fail_open at %s, whose response stops nothing: a failure there is always skipped; drop fail_open (it means something only at %s)", p.Name(), name, info.Name, strings.Join(hooks.Gating(), ", ")))
			}
			for _, k := range append(append([]string(nil), spec.GetReads()...), spec.GetWrites()...) {
				if _, ok := reg.Lookup(k); !ok {
					problems = append(problems, fmt.Sprintf("plugin %s, extension %s uses state key %q, which nobody declares; declare it in the plugin's manifest state_keys or fix the name", p.Name(), name, k))
				}
			}
			if opts.Disabled[name] || (spec.GetDisabled() && !opts.Enabled[name]) {
				continue
			}
			timeout := opts.DefaultTimeout
			if spec.GetTimeoutMs() > 0 {
				timeout = time.Duration(spec.GetTimeoutMs()) * time.Millisecond
			}
			if d, ok := opts.Timeouts[name]; ok && d > 0 {
				timeout = d
			}
			t.ByHook[info.Hook] = append(t.ByHook[info.Hook], &Extension{
				Spec: spec, Plugin: p, Hook: info, Timeout: timeout,
				Access: state.Access{Plugin: p.Name(), Extension: name, Reads: spec.GetReads(), Writes: spec.GetWrites()},
			})
		}
		for _, ts := range p.Manifest().GetTools() {
			if prev, ok := t.Tools[ts.GetName()]; ok {
				if prev.Plugin.cand.Dir.Source == p.cand.Dir.Source && prev.Plugin.cand.Dir.Path == p.cand.Dir.Path {
					problems = append(problems, fmt.Sprintf("tool %q is provided by two plugins of the same directory: %s and %s; rename one", ts.GetName(), prev.Plugin.Name(), p.Name()))
				} else {
					t.Shadows = append(t.Shadows, Shadow{Kind: "tool", Name: ts.GetName(), Hidden: p.Name(), By: prev.Plugin.Name()})
				}
				continue
			}
			t.Tools[ts.GetName()] = &Tool{Spec: ts, Plugin: p, Provider: p}
		}
	}
	for hook, exts := range t.ByHook {
		sort.SliceStable(exts, func(i, j int) bool {
			if exts[i].Spec.GetOrder() != exts[j].Spec.GetOrder() {
				return exts[i].Spec.GetOrder() < exts[j].Spec.GetOrder()
			}
			return exts[i].Name() < exts[j].Name()
		})
		for i := 1; i < len(exts); i++ {
			a, b := exts[i-1], exts[i]
			if a.Spec.GetOrder() == b.Spec.GetOrder() {
				problems = append(problems, fmt.Sprintf("order collision at %s: extensions %s (plugin %s) and %s (plugin %s) both have order %d; give one another number",
					hooks.Name(hook), a.Name(), a.Plugin.Name(), b.Name(), b.Plugin.Name(), a.Spec.GetOrder()))
			}
		}
	}
	if len(problems) > 0 {
		sort.Strings(problems)
		return nil, Table{}, &WiringError{Problems: problems}
	}
	return reg, t, nil
}

// Registry returns the state declarations in force.
func (h *Host) Registry() *state.Registry {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.registry
}

// Extensions returns the extensions of a hook in firing order.
func (h *Host) Extensions(hook exocortexv1.Hook) []*Extension {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.byHook[hook]
}

// Tools returns the tools, the plugins' and the other providers', sorted by name.
func (h *Host) Tools() []*Tool {
	plugin, providers := h.toolSets()
	out := make([]*Tool, 0, len(plugin))
	for _, t := range plugin {
		out = append(out, t)
	}
	more, _ := providerTools(plugin, providers)
	out = append(out, more...)
	sortTools(out)
	return out
}

// Tool returns the tool called name.
func (h *Host) Tool(name string) (*Tool, bool) {
	plugin, providers := h.toolSets()
	if t, ok := plugin[name]; ok {
		return t, true
	}
	more, _ := providerTools(plugin, providers)
	for _, t := range more {
		if t.Spec.GetName() == name {
			return t, true
		}
	}
	return nil, false
}

// Plugins returns every plugin found, loaded or not, in priority order.
func (h *Host) Plugins() []*Plugin {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return append([]*Plugin(nil), h.plugins...)
}

// FailedPlugins returns the plugins that could not be started at load.
func (h *Host) FailedPlugins() []*StartError {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return append([]*StartError(nil), h.failed...)
}

// Shadows returns what higher-priority plugins hide, and the other
// providers' tools a plugin's tool of the same name hides.
func (h *Host) Shadows() []Shadow {
	plugin, providers := h.toolSets()
	_, hidden := providerTools(plugin, providers)
	h.mu.RLock()
	defer h.mu.RUnlock()
	return append(append([]Shadow(nil), h.shadows...), hidden...)
}

// Close stops watching and every plugin.
func (h *Host) Close() {
	h.closeReload()
	h.mu.RLock()
	plugins := append([]*Plugin(nil), h.plugins...)
	h.mu.RUnlock()
	var wg sync.WaitGroup
	for _, p := range plugins {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p.stop()
		}()
	}
	wg.Wait()
	// After the plugins: the memory service they used closes last (an owner
	// writes its snapshot and lets the lock go).
	if err := h.services.closeMemory(); err != nil {
		h.logger.Warn("closing the memory service", "err", err)
	}
}

func (h *Host) emit(e Event) {
	if e.Time.IsZero() {
		e.Time = time.Now().UTC()
	}
	// A crash's report quotes the plugin's stderr: no value goes out in it.
	e.Detail = h.opts.Secrets.Masker().Mask(e.Detail)
	switch e.Kind {
	case "crash", "quarantine", "load_failed", EventLateStateWrite, EventCommandHook:
		h.logger.Warn("plugin "+e.Kind, "plugin", e.Plugin, "extension", e.Extension, "hook", e.Hook, "detail", e.Detail)
	default:
		h.logger.Debug("plugin "+e.Kind, "plugin", e.Plugin, "detail", e.Detail)
	}
	if h.opts.OnEvent != nil {
		h.opts.OnEvent(e)
	}
}
