package cmdhooks

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/exocortex/exocortex/toolsettings"
)

// Events: Claude Code's names, which Codex shares; Gemini CLI's are mapped to
// them (geminiEvents).
const (
	PreToolUse         = "PreToolUse"
	PostToolUse        = "PostToolUse"
	PostToolUseFailure = "PostToolUseFailure"
	UserPromptSubmit   = "UserPromptSubmit"
	Stop               = "Stop"
	SubagentStop       = "SubagentStop"
	SessionStart       = "SessionStart"
	SessionEnd         = "SessionEnd"
	PreCompact         = "PreCompact"
	Notification       = "Notification"
	PermissionRequest  = "PermissionRequest"
)

// geminiEvents maps Gemini CLI's event names to the Claude Code ones whose
// Exocortex hook they run at.
var geminiEvents = map[string]string{
	"BeforeTool": PreToolUse, "AfterTool": PostToolUse, "BeforeAgent": UserPromptSubmit,
	"AfterAgent": Stop, "SessionStart": SessionStart, "SessionEnd": SessionEnd,
	"PreCompress": PreCompact, "Notification": Notification,
}

// supported are the events the bridge runs, with the Exocortex hook each runs
// at (docs/command-hooks.md). Any other event is reported, never silently
// dropped.
var supported = map[string]string{
	PreToolUse: "tool_execute_before", PostToolUse: "tool_execute_after", PostToolUseFailure: "tool_execute_after",
	UserPromptSubmit: "hist_add_before", Stop: "message_loop_end", SubagentStop: "message_loop_end",
	SessionStart: "agent_init", SessionEnd: "(plugin close)",
	PreCompact: "history_compress_before", PermissionRequest: "tool_approval_request", Notification: "operator_notification",
}

// blocking are the events whose hooks guard what they precede: a hook there
// that cannot run stops it (fails closed) unless it is fail_open: the tool
// call (PreToolUse), the operator's message (UserPromptSubmit), the held
// call, which is denied (PermissionRequest). A Stop hook that cannot run is
// reported and the monologue ends: going on would not make it run. A
// PreCompact hook that cannot run is reported and the compression goes
// ahead: the prompt must fit the model's window.
var blocking = map[string]bool{PreToolUse: true, UserPromptSubmit: true, PermissionRequest: true}

// Hook is one command hook read from a configuration file.
type Hook struct {
	// Event is the Claude Code name of the event (Gemini's mapped);
	// NativeEvent is the name the file used.
	Event, NativeEvent string
	Dialect            string
	File               string
	Scope              string
	Matcher            string
	Command            string
	// Timeout is the hook's deadline (seconds in Claude Code's and Codex's
	// files, milliseconds in Gemini CLI's; 60 s by default).
	Timeout time.Duration
	// Name is Gemini's name field, or "".
	Name string
	// FailOpen lets a blocking event go ahead when this hook cannot run
	// (an Exocortex field of the hook entry, "fail_open": true).
	FailOpen bool
	// Index numbers the hooks of one event across all files, from 1: the
	// order they run and combine in.
	Index int
}

// Ext is the Exocortex extension name of the hook: unique and stable while
// the configuration does not change.
func (h Hook) Ext() string {
	return fmt.Sprintf("hook_%s_%s_%d", h.Dialect, snake(h.Event), h.Index)
}

// At is the Exocortex hook the event runs at.
func (h Hook) At() string { return supported[h.Event] }

// Blocking reports whether the event can stop what it precedes.
func (h Hook) Blocking() bool { return blocking[h.Event] }

// Where names the hook for the operator: file, event and command.
func (h Hook) Where() string {
	m := ""
	if h.Matcher != "" {
		m = " matcher " + h.Matcher
	}
	return fmt.Sprintf("%s %s%s: %s", h.File, h.NativeEvent, m, h.Command)
}

// Problem is something wrong with a configuration: a file that is not the
// JSON it should be, an unknown event, a hook entry the bridge cannot run.
type Problem struct {
	File   string `json:"file"`
	Event  string `json:"event,omitempty"`
	Detail string `json:"detail"`
}

func (p Problem) String() string {
	if p.Event != "" {
		return fmt.Sprintf("%s: %s: %s", p.File, p.Event, p.Detail)
	}
	return fmt.Sprintf("%s: %s", p.File, p.Detail)
}

type entry struct {
	Type        string          `json:"type"`
	Command     string          `json:"command"`
	Timeout     json.Number     `json:"timeout"`
	Name        string          `json:"name"`
	FailOpen    bool            `json:"fail_open"`
	Description string          `json:"description"`
	Extra       json.RawMessage `json:"-"`
}

type group struct {
	Matcher string  `json:"matcher"`
	Hooks   []entry `json:"hooks"`
}

// Load reads the files in order and returns their hooks, numbered per
// event, and every problem found. A file that does not exist is no problem.
func Load(files []toolsettings.HookFile) ([]Hook, []Problem) {
	var hooks []Hook
	var probs []Problem
	for _, f := range files {
		hs, ps := loadFile(f)
		hooks = append(hooks, hs...)
		probs = append(probs, ps...)
	}
	n := map[string]int{}
	for i := range hooks {
		n[hooks[i].Event]++
		hooks[i].Index = n[hooks[i].Event]
	}
	return hooks, probs
}

func loadFile(f toolsettings.HookFile) ([]Hook, []Problem) {
	b, err := os.ReadFile(f.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, []Problem{{File: f.Path, Detail: fmt.Sprintf("cannot be read: %v", err)}}
	}
	var doc struct {
		Hooks map[string]json.RawMessage `json:"hooks"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, []Problem{{File: f.Path, Detail: fmt.Sprintf("is not valid JSON (%v): none of its hooks run; fix the file", err)}}
	}
	events := make([]string, 0, len(doc.Hooks))
	for ev := range doc.Hooks {
		events = append(events, ev)
	}
	sort.Strings(events) // JSON objects have no order; the event's own list does
	var hooks []Hook
	var probs []Problem
	for _, native := range events {
		raw := doc.Hooks[native]
		if f.Dialect == toolsettings.DialectGemini && (native == "enabled" || native == "disabled" || native == "notifications") {
			continue // Gemini's switches beside the events
		}
		event := native
		if f.Dialect == toolsettings.DialectGemini {
			ev, ok := geminiEvents[native]
			if !ok {
				probs = append(probs, Problem{File: f.Path, Event: native, Detail: "is a Gemini CLI event Exocortex has no hook for (BeforeModel, AfterModel and BeforeToolSelection work on the model's request): its hooks do not run"})
				continue
			}
			event = ev
		}
		var groups []group
		if err := json.Unmarshal(raw, &groups); err != nil {
			probs = append(probs, Problem{File: f.Path, Event: native, Detail: fmt.Sprintf("is not a list of {matcher, hooks: [...]} (%v)", err)})
			continue
		}
		if _, ok := supported[event]; !ok {
			d := "is not an event of Claude Code, Gemini CLI or Codex that Exocortex runs (docs/command-hooks.md): its hooks do not run"
			probs = append(probs, Problem{File: f.Path, Event: native, Detail: d})
			continue
		}
		for _, g := range groups {
			for _, e := range g.Hooks {
				h := Hook{Event: event, NativeEvent: native, Dialect: f.Dialect, File: f.Path, Scope: f.Scope,
					Matcher: g.Matcher, Command: strings.TrimSpace(e.Command), Name: e.Name, FailOpen: e.FailOpen}
				if e.Type != "command" && e.Type != "" {
					probs = append(probs, Problem{File: f.Path, Event: native, Detail: fmt.Sprintf("hook of type %q is not run (only \"command\" hooks are)", e.Type)})
					continue
				}
				if h.Command == "" {
					probs = append(probs, Problem{File: f.Path, Event: native, Detail: "a hook has no command"})
					continue
				}
				t, err := timeout(f.Dialect, e.Timeout)
				if err != nil {
					probs = append(probs, Problem{File: f.Path, Event: native, Detail: fmt.Sprintf("hook %q: %v", h.Command, err)})
					continue
				}
				if _, err := compileMatcher(g.Matcher); err != nil {
					probs = append(probs, Problem{File: f.Path, Event: native, Detail: fmt.Sprintf("hook %q: %v", h.Command, err)})
					continue
				}
				h.Timeout = t
				hooks = append(hooks, h)
			}
		}
	}
	return hooks, probs
}

// DefaultTimeout is a hook's deadline when its entry gives none.
const DefaultTimeout = 60 * time.Second

// timeout reads an entry's timeout: milliseconds for Gemini CLI, seconds
// for the others.
func timeout(dialect string, n json.Number) (time.Duration, error) {
	if n == "" {
		return DefaultTimeout, nil
	}
	v, err := n.Float64()
	if err != nil || v <= 0 {
		return 0, fmt.Errorf("timeout %q is not a positive number", n)
	}
	if dialect == toolsettings.DialectGemini {
		return time.Duration(v * float64(time.Millisecond)), nil
	}
	return time.Duration(v * float64(time.Second)), nil
}

// snake turns PreToolUse into pre_tool_use.
func snake(s string) string {
	var b strings.Builder
	for i, r := range s {
		if r >= 'A' && r <= 'Z' {
			if i > 0 {
				b.WriteByte('_')
			}
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}
