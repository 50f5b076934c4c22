package sdk

import (
	"context"
	"encoding/json"
	"log/slog"
	"time"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// Extension is a type with a Spec that declares at least one hook (Spec.Hooks),
// and the hook methods it declares (the *Hook interfaces of this package). Its
// methods may be called concurrently: keep what must survive a call in shared
// state, through keys, not in fields.
type Extension interface {
	Spec() Spec
}

// Spec declares an extension. Spec is called once, when the server is built; each
// hook in Hooks becomes one ExtensionSpec of the manifest, with the same name and
// these fields.
type Spec struct {
	// Name is unique across all plugins, e.g. "failure_tracker".
	Name string
	// Hooks declares the hooks the extension handles, each made by the hook's
	// constructor from the value with its method, usually the receiver of Spec:
	//
	//	func (g Guard) Spec() sdk.Spec {
	//		return sdk.Spec{Name: "guard", Hooks: []sdk.Hook{sdk.ToolExecuteBefore(g)}}
	//	}
	//
	// A declared hook whose method is missing does not compile; a hook method
	// the extension has but does not declare is refused by Serve, naming it.
	Hooks []Hook
	// Order places the extension among the others at the same hook (ascending,
	// across all plugins).
	Order int
	// HookOrder overrides Order at particular hooks, for an extension that
	// handles more than one. Each hook named must be one Hooks declares.
	HookOrder map[exocortexv1.Hook]int

	// Reads lists the keys the extension reads: the host hands it only these, and
	// Key.Get refuses any other.
	Reads []KeyRef
	// Writes lists the keys the extension sets or resets: Key.Set and Key.Reset
	// refuse any other.
	Writes []KeyRef
	// Resets lists the keys the extension clears, a subset of Writes, for the
	// wiring lint (a flag that is set must have a resetter).
	Resets []KeyRef

	// InjectsPrompt declares that the extension adds prompt blocks. It is what the
	// wiring lint reads, so it is declared rather than inferred. Only the
	// prompt-assembly hooks (message_loop_prompts_before, system_prompt,
	// message_loop_prompts_after) may add blocks: Serve refuses InjectsPrompt on an
	// extension that implements none of them, and a call fails when an extension
	// returns blocks without declaring it.
	InjectsPrompt bool
	// Timeout is the per-call deadline (rounded up to a millisecond); 0 means the
	// host's default.
	Timeout time.Duration
	// Required makes a failure of the extension stop the turn instead of being
	// skipped.
	Required bool
	// OncePerSession makes the host run the extension at most once per session at
	// each hook.
	OncePerSession bool
	// ConsumesSignals lists the signals (constants of package signals) the
	// extension reacts to, for the wiring diagram.
	ConsumesSignals []string
	Description     string
	// Disabled ships the extension disabled: it runs only when the operator's
	// config enables it.
	Disabled bool
	// ReadsHistory declares that the extension reads the whole conversation: the
	// History of message_loop_prompts_before, message_loop_prompts_after and
	// monologue_end requests, and the Prompt of before_main_llm_call. Without it
	// those fields are empty (the host does not ship a long session's history with
	// every call); the context's recent messages are always there.
	ReadsHistory bool
	// ReadsPrompt declares that the extension reads the prompt as the ones
	// before it at the same hook left it: the SystemPrompt of system_prompt
	// requests, the Extras and PromptTokens of message_loop_prompts_after. Without
	// it those fields are empty, and the host may call the extension while the
	// ones before it still run.
	ReadsPrompt bool
	// EffectsDeclared declares that the extension's only effects are the state
	// keys and data files it declares: it writes no other file, calls no service
	// (a model, the network, the host's RunSubordinate) and keeps no cache another
	// extension could observe. Only then does the host call it while extensions
	// of other plugins run; otherwise it runs in order, after the ones before it
	// have answered, and the ones after it wait for it.
	EffectsDeclared bool
	// FailOpen lets the action go ahead when the extension fails at a hook that
	// can stop it (tool_execute_before, text_editor_write_before,
	// text_editor_patch_before). Without it an error returned by the handler, a
	// panic, a crash or a missed deadline there stops the action: a guard that
	// cannot answer allows nothing. Declare it for an extension that only
	// watches (a logger, a metric); at other hooks the host refuses it.
	FailOpen bool
	// ForTools limits the hooks that fire for one tool call (tool_execute_before,
	// tool_execute_after, hist_add_tool_result, tool_output_update) to calls of these
	// tools (empty: every tool). The wiring lint reports a name no loaded plugin
	// provides.
	ForTools []string
}

// Tool is a tool the agent may call, served by the plugin.
type Tool struct {
	// Name is what the model writes as tool_name.
	Name        string
	Description string
	// Parameters is the JSON Schema of the arguments object; empty means none
	// declared.
	Parameters string
	// PromptFile is the prompt file documenting the tool, e.g.
	// "agent.system.tool.hello_time.md".
	PromptFile string
	// Category groups the tool in the tool registry (`exocortex serve`'s
	// GET /tools?category=): "retrieval", "data_processing", "analysis", ...
	Category string
	// Returns is the JSON Schema of the tool's result, for the registry;
	// empty means none declared (the result is the tool's text).
	Returns string
	// UsesSecrets names the operator's secrets the tool may receive: the host
	// puts their values in place of §§secret(NAME) in the arguments it sends
	// this tool only (the model, the history and every other plugin keep the
	// placeholder). "*" takes every configured secret (shell, code execution,
	// HTTP tools). A tool that declares none gets the placeholders as written;
	// a call naming a secret outside the list is refused.
	UsesSecrets []string
	// Run executes the tool with the arguments object as JSON ("{}" when the
	// model gave none). An error is the tool's failure as the model sees it: it
	// becomes ToolResult.error (with the returned result's other fields, if any).
	// Tools have no shared-state access in protocol v1: the Call carries the
	// context and the logger only.
	Run func(ctx context.Context, c *Call, args json.RawMessage) (*exocortexv1.ToolResult, error)
}

// Plugin is what one plugin process serves.
type Plugin struct {
	// Name is unique among loaded plugins.
	Name    string
	Version string
	// Extensions and Tools may be empty, not both.
	Extensions []Extension
	Tools      []Tool
	// Files declares the data files the plugin's extensions and tools read or
	// write; they pass through to the manifest.
	Files []*exocortexv1.FileSpec
	// UsesUtilityModel declares that the plugin's extensions or tools call the
	// host's utility model (Call.CallUtilityModel); the host refuses the call
	// from a plugin that does not declare it.
	UsesUtilityModel bool
	// UsesMemory declares that the plugin's extensions or tools use the home's
	// memory store through the host (Call.Memory); the host refuses every
	// memory call from a plugin that does not declare it.
	UsesMemory bool
	// MemoryWriteAreas are the memory areas the plugin may write ("main",
	// "fragments", ...; "*" for every area); the host refuses a write to any
	// other, naming the area. Reads reach every area. It needs UsesMemory.
	MemoryWriteAreas []string
	// SettingSecrets are the secret settings of config.yaml the plugin's tools
	// receive from the host (Call.SettingSecret), by key, e.g.
	// "tools.web_search.api_key": the plugin settings never carry a secret, and
	// the host refuses a key not listed here. The value is masked in everything
	// else that crosses the host.
	SettingSecrets []string
	// Logger receives the plugin's log, including every Call's Logger. Nil means
	// the plugin's stderr in the JSON form go-plugin forwards to the host's log,
	// at Info level.
	Logger *slog.Logger
	// Procs is how many threads may run the plugin's Go code at once
	// (GOMAXPROCS) when it is served; 0 means 1. The host sends a plugin one round
	// trip at a time, and with a second processor each one wakes a second
	// thread: on the 2-core machine of docs/PERFORMANCE.md a hook call takes
	// 112-123 µs p50 with one, 129-184 µs with two. Raise it for a plugin whose
	// tools compute in parallel. The GOMAXPROCS environment variable overrides it.
	Procs int
	// Start, if set, runs once when the process starts serving, in a goroutine
	// of its own, while go-plugin's handshake and the host's start-up go on: it
	// never delays the handshake, and hooks and tools are served while it runs.
	// Use it to begin slow preparation (opening a store, loading a model) that
	// the first hook would otherwise pay for; whatever needs the result must
	// wait for it itself (a lock, sync.Once). Its context ends when the plugin
	// stops, before Close runs. A panic in Start is logged, not fatal.
	Start func(ctx context.Context)
	// Close, if set, runs when the plugin stops: after the host asked it to shut
	// down, or when Serve notices the host is gone. Release what must be closed
	// cleanly here (an index, a lock, child processes).
	Close func() error
}
