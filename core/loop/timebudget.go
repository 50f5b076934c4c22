package loop

import (
	"fmt"
	"time"

	"github.com/exocortex/exocortex/core/host"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// TimeBudgets are the time an extension may take at a hook before it is reported.
// A slow extension at a per-chunk hook multiplies its time by the number of
// chunks: a 3 s call at response_stream_chunk turns a 2 s answer into a minute.
// So the stream hooks (response_stream_chunk, response_stream,
// response_stream_end and the three reasoning_stream hooks) have a
// budget per call, and a stream extension that exceeds it StopAfter times in a
// row is not called for the rest of the monologue; at every other hook an
// extension's calls within one iteration share one budget, and exceeding it is
// reported, once an iteration.
type TimeBudgets struct {
	// Stream is the budget of one call at a stream hook (DefaultStreamBudget
	// when 0).
	Stream time.Duration
	// Iteration is an extension's budget at any other hook, for all its calls
	// in one iteration (DefaultIterationBudget when 0).
	Iteration time.Duration
	// Hooks overrides either per hook name.
	Hooks map[string]time.Duration
	// StopAfter is how many over-budget calls in a row stop a stream extension
	// for the rest of the monologue (DefaultStopAfter when 0; negative: never).
	StopAfter int
}

// The default budgets.
const (
	DefaultStreamBudget    = 100 * time.Millisecond
	DefaultIterationBudget = 2 * time.Second
	DefaultStopAfter       = 3
)

// EventOverBudget reports an extension over its time budget (BudgetUS holds
// it, Per says "call" or "iteration"); with Skipped set, a stream extension
// that is not called for the rest of the monologue.
const EventOverBudget = "over_budget"

// isStreamHook reports whether hook fires while the reply streams, where the
// budget is per call.
func isStreamHook(hook exocortexv1.Hook) bool {
	switch hook {
	case exocortexv1.Hook_HOOK_RESPONSE_STREAM_CHUNK, exocortexv1.Hook_HOOK_RESPONSE_STREAM_END,
		exocortexv1.Hook_HOOK_RESPONSE_STREAM,
		exocortexv1.Hook_HOOK_REASONING_STREAM_CHUNK, exocortexv1.Hook_HOOK_REASONING_STREAM,
		exocortexv1.Hook_HOOK_REASONING_STREAM_END:
		return true
	}
	return false
}

// budgetOf is the budget of an extension at hook.
func (b TimeBudgets) budgetOf(hook exocortexv1.Hook, name string) time.Duration {
	if d, ok := b.Hooks[name]; ok && d > 0 {
		return d
	}
	if isStreamHook(hook) {
		return cmpOr(b.Stream, DefaultStreamBudget)
	}
	return cmpOr(b.Iteration, DefaultIterationBudget)
}

func cmpOr(d, def time.Duration) time.Duration {
	if d > 0 {
		return d
	}
	return def
}

// usage is one extension's time at one hook in the current monologue.
type usage struct {
	iteration int
	spent     time.Duration // in iteration, at a non-stream hook
	reported  bool          // in iteration
	overs     int           // over-budget stream calls in a row
	stopped   bool
}

// charge adds one call of ext that took took, and reports it when it goes
// over budget. It runs in the hook's order, on the monologue's goroutine.
func (a *Agent) charge(t *turn, ext *host.Extension, took time.Duration) {
	if t.usage == nil {
		t.usage = map[string]*usage{}
	}
	k := onceKey(ext)
	u := t.usage[k]
	if u == nil {
		u = &usage{}
		t.usage[k] = u
	}
	hook := ext.Hook.Hook
	budget := a.opts.TimeBudgets.budgetOf(hook, ext.Hook.Name)
	if isStreamHook(hook) {
		if took <= budget {
			u.overs = 0
			return
		}
		u.overs++
		stopAfter := a.opts.TimeBudgets.StopAfter
		if stopAfter == 0 {
			stopAfter = DefaultStopAfter
		}
		u.stopped = stopAfter > 0 && u.overs >= stopAfter
		a.overBudget(t, ext, took, budget, "call", u.stopped)
		return
	}
	if u.iteration != t.iteration {
		*u = usage{iteration: t.iteration}
	}
	u.spent += took
	if u.spent > budget && !u.reported {
		u.reported = true
		a.overBudget(t, ext, u.spent, budget, "iteration", false)
	}
}

// stoppedForBudget reports whether ext was stopped in this monologue for
// exceeding its budget.
func (t *turn) stoppedForBudget(ext *host.Extension) bool {
	u := t.usage[onceKey(ext)]
	return u != nil && u.stopped
}

func (a *Agent) overBudget(t *turn, ext *host.Extension, took, budget time.Duration, per string, stopped bool) {
	text := fmt.Sprintf("%s (plugin %s) took %s at %s, over its budget of %s per %s",
		ext.Name(), ext.Plugin.Name(), took.Round(time.Millisecond), ext.Hook.Name, budget, per)
	if stopped {
		text += fmt.Sprintf("; it kept exceeding it, so it is not called at %s for the rest of this monologue", ext.Hook.Name)
	}
	a.log.Warn("extension over its time budget", "extension", ext.Name(), "plugin", ext.Plugin.Name(), "hook", ext.Hook.Name,
		"took", took, "budget", budget, "per", per, "stopped", stopped)
	a.emit(Event{Type: EventOverBudget, Iteration: t.iteration, Hook: ext.Hook.Name, Extension: ext.Name(), Plugin: ext.Plugin.Name(),
		DurationUS: took.Microseconds(), BudgetUS: budget.Microseconds(), Per: per, Skipped: stopped, Text: text})
	a.opts.Host.ReportOverBudget(ext, took, budget, per, stopped)
}
