package cmdhooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/exocortex/exocortex/protocol"
	"github.com/exocortex/exocortex/sdk"
	"github.com/exocortex/exocortex/toolsettings"
)

// PluginName is the built-in plugin that serves the bridge.
const PluginName = protocol.PluginCommandHooks

// Order places the command hooks at their Exocortex hook: after Exocortex's
// own extensions (the action boundary at 15, the argument gate at 20, ...),
// so that a hook sees the arguments the tool will get; the hooks of one
// event in the order of the files and their entries (Index).
const Order = 900

// Bridge is the command hooks of one session, read from the files the host
// named (toolsettings.CommandHooks.Files).
type Bridge struct {
	Settings toolsettings.CommandHooks
	Hooks    []Hook
	Problems []Problem
	// Env is the session as the host gave it (the session id is filled in per call).
	Project, Home, Approval string
	// Environ is the environment the hooks start from (KEY=VALUE lines; nil:
	// this process's). A plugin served inside the host sets the environment
	// its process would have had: the host's less the secrets' variables.
	Environ []string

	mu      sync.Mutex
	session string
	groups  groups
}

// FromEnv builds the bridge from a plugin's environment: the settings the
// host sends (toolsettings.EnvSettings), EXOCORTEX_PROJECT and
// EXOCORTEX_HOME. Without the host's settings (the binary listing its
// built-ins) it has no hooks.
func FromEnv(getenv func(string) string) *Bridge {
	b := &Bridge{Project: getenv("EXOCORTEX_PROJECT"), Home: getenv("EXOCORTEX_HOME")}
	if b.Project == "" {
		b.Project, _ = os.Getwd()
	}
	t, err := toolsettings.FromEnv(getenv)
	if err != nil {
		if !errors.Is(err, toolsettings.ErrNotSent) {
			b.Problems = append(b.Problems, Problem{File: toolsettings.EnvSettings, Detail: err.Error()})
		}
		return b
	}
	var s struct {
		Approval string `json:"approval"`
	}
	_ = json.Unmarshal([]byte(getenv(toolsettings.EnvSettings)), &s)
	b.Approval = s.Approval
	if t.Home != "" {
		b.Home = t.Home
	}
	if t.CommandHooks != nil {
		b.Settings = *t.CommandHooks
	}
	b.Settings = b.Settings.WithDefaults()
	b.Hooks, b.Problems = Load(b.Settings.Files)
	return b
}

// Plugin is the built-in plugin: one extension per command hook, at the
// Exocortex hook of its event, plus the bridge's own (its problems, the
// transcript, SessionStart's context in the prompt).
func (b *Bridge) Plugin(version string) sdk.Plugin {
	exts := []sdk.Extension{status{b}}
	hasStart := false
	for _, h := range b.Hooks {
		switch h.Event {
		case PreToolUse:
			exts = append(exts, preTool{b, h})
		case PostToolUse, PostToolUseFailure:
			exts = append(exts, postTool{b, h})
		case UserPromptSubmit:
			exts = append(exts, prompt{b, h})
		case Stop, SubagentStop:
			exts = append(exts, stop{b, h})
		case SessionStart:
			exts = append(exts, sessionStart{b, h})
			hasStart = true
		case PreCompact:
			exts = append(exts, preCompact{b, h})
		case PermissionRequest:
			exts = append(exts, permission{b, h})
		case Notification:
			exts = append(exts, notification{b, h})
		}
	}
	if len(b.Hooks) > 0 {
		exts = append(exts, transcript{b})
	}
	if hasStart {
		exts = append(exts, startContext{})
	}
	return sdk.Plugin{Name: PluginName, Version: version, Extensions: exts, Close: b.sessionEnd}
}

// env is the session the call belongs to.
func (b *Bridge) env(c *sdk.Call) Env {
	id := c.Context().GetSessionId()
	b.mu.Lock()
	if id != "" {
		b.session = id
	}
	b.mu.Unlock()
	return Env{SessionID: id, TranscriptPath: b.transcriptPath(id), Project: b.Project, Approval: b.Approval}
}

func (b *Bridge) transcriptPath(session string) string {
	dir := b.Home
	if dir == "" {
		dir = os.TempDir()
	}
	if session == "" {
		session = "session"
	}
	return filepath.Join(dir, "command-hooks", "transcripts", session+".jsonl")
}

// run runs one hook on the event's fields and reads its decision. A hook
// that cannot run, or whose answer cannot be read, is an error (the host
// reports it, and fails a blocking event closed unless the hook is
// fail_open); its warnings are logged for the host to report.
func (b *Bridge) run(ctx context.Context, c *sdk.Call, h Hook, fields map[string]any) (Decision, error) {
	e := b.env(c)
	d, err := b.Test(ctx, h, e, fields)
	for _, w := range d.Warnings {
		warn(c, w)
	}
	return d, err
}

// Test runs h on fields in session e, as the session would.
func (b *Bridge) Test(ctx context.Context, h Hook, e Env, fields map[string]any) (Decision, error) {
	in, err := Payload(h, e, fields)
	if err != nil {
		return Decision{}, err
	}
	r := Runner{MaxOutput: b.Settings.WithDefaults().MaxOutputBytes, Base: b.Environ, Env: HookEnv(e), Dir: e.Project}
	res, err := r.Exec(ctx, h, in)
	if err != nil {
		return Decision{}, err
	}
	return Decide(h, res)
}

// getenv reads the hooks' environment (Environ, or this process's).
func (b *Bridge) getenv(k string) string {
	if b.Environ == nil {
		return os.Getenv(k)
	}
	v := ""
	for _, kv := range b.Environ {
		if key, val, ok := strings.Cut(kv, "="); ok && key == k {
			v = val
		}
	}
	return v
}

// warn tells the host of a hook's warning (protocol.LogEventCommandHook):
// run prints it on stderr, the terminal and events.jsonl show it.
func warn(c *sdk.Call, detail string) {
	c.Logger().Warn("command hook warning", sdk.EventAttr, protocol.LogEventCommandHook, "detail", detail)
}

// sessionEnd runs the SessionEnd hooks when the host stops the plugin (the
// session is over), each within its own timeout; their output is advisory.
func (b *Bridge) sessionEnd() error {
	b.mu.Lock()
	id := b.session
	b.mu.Unlock()
	var errs []error
	for _, h := range b.Hooks {
		if h.Event != SessionEnd {
			continue
		}
		e := Env{SessionID: id, TranscriptPath: b.transcriptPath(id), Project: b.Project, Approval: b.Approval}
		ctx, cancel := context.WithTimeout(context.Background(), h.Timeout+time.Second)
		_, err := b.Test(ctx, h, e, map[string]any{"reason": "other", "trigger": "exit"})
		cancel()
		if err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// describe is an extension's description: where the hook comes from.
func describe(h Hook) string {
	fo := ""
	if h.FailOpen {
		fo = " (fail_open)"
	}
	return fmt.Sprintf("Command hook (%s, %s): %s%s", h.Dialect, h.Scope, h.Where(), fo)
}

// problemsError is the bridge's configuration problems as one error.
func problemsError(ps []Problem) error {
	if len(ps) == 0 {
		return nil
	}
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.String()
	}
	return fmt.Errorf("command hooks: %d configuration problem(s), those hooks do not run: %s (exocortex hooks list shows them)", len(ps), strings.Join(lines, "; "))
}
