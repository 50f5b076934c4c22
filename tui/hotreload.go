package tui

// Hot reload in the terminal session.
//
// The host the session starts watches the plugin directories (Config.StartHost
// is given the engine's event sink; the command opens the host as `run` does,
// with its watcher). A new version, a new plugin or a removal that passes the
// host's checks is staged; the engine swaps it in at once when no turn runs
// (so the footer and /plugins tell the truth before the next message), and the
// loop swaps in what is staged during a turn between two iterations. Each
// change applied, and each one refused, is a line in the transcript.

import (
	"fmt"
	"strings"

	"github.com/exocortex/exocortex/core/host"
)

// hostEventMsg carries one host event through the inbox.
type hostEventMsg struct{ e host.Event }

// hostEvent is the host's event sink (Config.StartHost's onEvent). It runs on
// whichever goroutine the host emits from, never under the engine's lock.
func (e *Engine) hostEvent(ev host.Event) {
	if fn := e.hostEvents.Load(); fn != nil {
		(*fn)(ev)
	}
	if ev.Kind == host.EventStaged {
		// Not on the host's goroutine: the watcher is still vetting.
		go e.applyIdle()
	}
}

// setHostEvents sets where host events go (the screen, or line mode's
// stderr).
func (e *Engine) setHostEvents(fn func(host.Event)) { e.hostEvents.Store(&fn) }

// applyIdle swaps in what the host has staged when no turn runs, and reports
// whether it did. While a turn runs the loop does it between iterations.
func (e *Engine) applyIdle() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.applyIdleLocked()
}

// applyIdleLocked is applyIdle with e.mu held. The agent's state store takes
// the new declarations at its next iteration (Host.BeginIteration).
func (e *Engine) applyIdleLocked() bool {
	if e.busy || e.host == nil {
		return false
	}
	return e.host.ApplyPending()
}

// reloadLine is the transcript's line for a host event of hot reload (and
// whether the event is one): what was swapped in, added, taken out or
// refused.
func reloadLine(ev host.Event) (line string, isErr, ok bool) {
	detail := strings.TrimSpace(ev.Detail)
	with := func(s string) string {
		if detail == "" {
			return s
		}
		return s + ": " + detail
	}
	switch ev.Kind {
	case host.EventReload:
		return with(fmt.Sprintf("plugin %s reloaded", ev.Plugin)), false, true
	case host.EventAdded:
		return with(fmt.Sprintf("plugin %s added", ev.Plugin)), false, true
	case host.EventRemoved:
		return with(fmt.Sprintf("plugin %s removed", ev.Plugin)), false, true
	case host.EventReloadRejected:
		if detail == "" { // the detail is the whole ReloadError
			detail = fmt.Sprintf("plugin %s: the change was not swapped in", ev.Plugin)
		}
		return detail, true, true
	}
	return "", false, false
}

// hostEventShown prints a hot-reload event and brings the plugin count up to
// date.
func (m *Model) hostEventShown(ev host.Event) {
	line, isErr, ok := reloadLine(ev)
	if !ok {
		return
	}
	m.refreshPlugins()
	st, mark := m.st.dim, "↻"
	if isErr {
		st, mark = m.st.warn, "!"
	}
	m.note(st, mark, line)
}
