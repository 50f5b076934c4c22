package host

import (
	"fmt"
	"sort"
	"time"
)

// Host event kinds for time budgets (the loop measures, the host keeps the
// record that `plugins status` shows and the event log keeps).
const (
	// EventOverBudget: an extension took longer than its hook's budget.
	EventOverBudget = "over_budget"
	// EventBudgetStopped: a stream extension kept exceeding its budget and is
	// not called for the rest of the monologue.
	EventBudgetStopped = "budget_stopped"
)

// Overrun is an extension's record of exceeded time budgets, for a status
// report.
type Overrun struct {
	Extension string `json:"extension"`
	Hook      string `json:"hook"`
	// Count is how many times it exceeded the budget (per call at the stream
	// hooks, per iteration at the others).
	Count int `json:"count"`
	// LastMS is the time of its last overrun, BudgetMS the budget it exceeded.
	LastMS   int64 `json:"last_ms"`
	BudgetMS int64 `json:"budget_ms"`
	// Stopped counts the monologues it was stopped in for exceeding it.
	Stopped int       `json:"stopped,omitempty"`
	At      time.Time `json:"at"`
}

// ReportOverBudget records that ext took took against budget at its hook
// (per says "call" or "iteration"), and emits EventOverBudget; stopped says the
// loop will not call it again in this monologue, and emits EventBudgetStopped
// too.
func (h *Host) ReportOverBudget(ext *Extension, took, budget time.Duration, per string, stopped bool) {
	p := ext.Plugin
	p.mu.Lock()
	if p.overruns == nil {
		p.overruns = map[string]*Overrun{}
	}
	k := ext.Name() + "@" + ext.Hook.Name
	o := p.overruns[k]
	if o == nil {
		o = &Overrun{Extension: ext.Name(), Hook: ext.Hook.Name}
		p.overruns[k] = o
	}
	o.Count++
	o.LastMS, o.BudgetMS, o.At = took.Milliseconds(), budget.Milliseconds(), time.Now().UTC()
	if stopped {
		o.Stopped++
	}
	p.mu.Unlock()
	h.emit(Event{Kind: EventOverBudget, Plugin: p.Name(), Extension: ext.Name(), Hook: ext.Hook.Name,
		TookMS: took.Milliseconds(), BudgetMS: budget.Milliseconds(),
		Detail: fmt.Sprintf("%s took %s at %s, over its budget of %s per %s", ext.Name(), took.Round(time.Millisecond), ext.Hook.Name, budget, per)})
	if stopped {
		h.emit(Event{Kind: EventBudgetStopped, Plugin: p.Name(), Extension: ext.Name(), Hook: ext.Hook.Name,
			TookMS: took.Milliseconds(), BudgetMS: budget.Milliseconds(),
			Detail: fmt.Sprintf("%s kept exceeding its budget of %s per call at %s, so it is not called for the rest of the monologue", ext.Name(), budget, ext.Hook.Name)})
	}
}

// overrunsLocked lists the plugin's overruns by extension and hook. p.mu is held.
func (p *Plugin) overrunsLocked() []Overrun {
	out := make([]Overrun, 0, len(p.overruns))
	for _, o := range p.overruns {
		out = append(out, *o)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Extension != out[j].Extension {
			return out[i].Extension < out[j].Extension
		}
		return out[i].Hook < out[j].Hook
	})
	return out
}
