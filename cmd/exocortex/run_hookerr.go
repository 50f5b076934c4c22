package main

import (
	"fmt"
	"strings"
	"sync"

	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/core/loop"
)

// hookFailures turns the hook events of a plain `run -p` into one stderr line
// for each failed call the host skipped: a changed request, an undeclared
// read, a write or a block the declaration does not allow, an error the
// extension returned. Crashes, hangs and quarantines have lines of their own
// (failureLine, from the host's events), so they are not repeated here; a
// failure that repeats word for word (the same extension failing at every
// iteration) is told once. A notice with a Code (a finding about an
// extension's behaviour, such as loop.NoticeRepeatedBlock) is a line too.
type hookFailures struct {
	mu   sync.Mutex
	seen map[string]bool
}

// line is the stderr line for e, or "" when e is not a failure to tell (or was
// told already).
func (h *hookFailures) line(e loop.Event) string {
	if e.Type == loop.EventNotice && e.Code != "" {
		if e.Agent != "" {
			return "warning: " + e.Agent + ": " + e.Text
		}
		return "warning: " + e.Text
	}
	if e.Type != loop.EventHook || e.Error == "" {
		return ""
	}
	switch e.ErrorKind {
	case string(host.Returned), loop.ErrorRefused:
	default:
		return ""
	}
	who := ""
	if e.Agent != "" {
		who = e.Agent + ": "
	}
	// The error names the plugin and the extension (host.CallError,
	// loop.HookError, state.AccessError), and what to change where the SDK or
	// the host knows it.
	l := fmt.Sprintf("warning: %s%s [hook %s: the call was skipped and the turn went on without it; fix the extension and rebuild the plugin; exocortex run --json shows every hook call]",
		who, oneLineText(e.Error), e.Hook)
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.seen == nil {
		h.seen = map[string]bool{}
	}
	key := e.Plugin + "\x00" + e.Extension + "\x00" + e.Hook + "\x00" + e.Error
	if h.seen[key] {
		return ""
	}
	h.seen[key] = true
	return l
}

// oneLineText folds an error's line breaks, so that it stays one line.
func oneLineText(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
