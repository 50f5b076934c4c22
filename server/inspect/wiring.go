package inspect

import (
	"slices"
	"strings"
	"time"

	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/core/loop"
	"github.com/exocortex/exocortex/replay"
)

// WiringReply is the answer of GET /api/v1/wiring/{session}: the hooks of
// one turn as a timeline, and what they touched.
type WiringReply struct {
	Session string    `json:"session"`
	Turns   []TurnRef `json:"turns"`
	Turn    TurnRef   `json:"turn"`
	// Hooks are the hook firings of the turn, in the order they fired.
	Hooks []HookRow `json:"hooks"`
	// Keys are the state keys the turn's extensions read or wrote, in the
	// order first touched.
	Keys []KeyUse `json:"keys"`
	// Signals are the messages the core injected (signals) in the turn.
	Signals []Signal `json:"signals"`
	// Failures are the extension calls that failed.
	Failures []Call `json:"failures"`
	// Plugins are the health now of every plugin whose extensions ran in
	// the turn; Quarantined names those quarantined.
	Plugins     []PluginHealth `json:"plugins"`
	Quarantined []string       `json:"quarantined"`
	// Budgets split each request's context budget, by iteration.
	Budgets []Split `json:"budgets"`
	// Notices are the loop's notices of the turn (a repeated block, an
	// extension over its time budget, a plugin reloaded).
	Notices []string `json:"notices,omitempty"`
}

// HookRow is one firing of a hook: its span and its extensions' calls.
type HookRow struct {
	Iteration int    `json:"iteration"`
	Hook      string `json:"hook"`
	// StartUS and EndUS are offsets from the turn's start, in microseconds.
	StartUS int64 `json:"start_us"`
	EndUS   int64 `json:"end_us"`
	// RoundTrips counts the calls to plugins the firing took (0 when the
	// recording has no hook_done for it).
	RoundTrips int `json:"round_trips,omitempty"`
	// Calls are the extensions' calls, in the order their answers were taken.
	Calls []Call `json:"calls"`
	// Failed says a call of the firing failed.
	Failed bool `json:"failed,omitempty"`
}

// Call is one extension's call at a hook.
type Call struct {
	Iteration  int      `json:"iteration"`
	Hook       string   `json:"hook"`
	Extension  string   `json:"extension"`
	Plugin     string   `json:"plugin"`
	Agent      string   `json:"agent,omitempty"`
	Order      *int32   `json:"order,omitempty"`
	StartUS    int64    `json:"start_us"`
	EndUS      int64    `json:"end_us"`
	DurationUS int64    `json:"duration_us"`
	Reads      []string `json:"reads,omitempty"`
	Writes     []string `json:"writes,omitempty"`
	Batch      int      `json:"batch,omitempty"`
	BatchIndex int      `json:"batch_index,omitempty"`
	Error      string   `json:"error,omitempty"`
	// ErrorKind is loop.Event's: error, refused, crashed, timed_out,
	// unavailable (a quarantined or restarting plugin) or canceled.
	ErrorKind string `json:"error_kind,omitempty"`
}

// KeyUse is a state key and the extensions ("plugin/extension") that read
// and wrote it in the turn.
type KeyUse struct {
	Key       string   `json:"key"`
	ReadBy    []string `json:"read_by"`
	WrittenBy []string `json:"written_by"`
}

// Signal is a signal the core fired.
type Signal struct {
	Iteration int    `json:"iteration"`
	Signal    string `json:"signal"`
	Text      string `json:"text,omitempty"`
}

// PluginHealth is a plugin's state, crashes and last error.
type PluginHealth struct {
	Name      string     `json:"name"`
	State     host.State `json:"state"`
	Crashes   int        `json:"crashes"`
	Restarts  int        `json:"restarts"`
	LastError string     `json:"last_error,omitempty"`
}

// Wiring builds the wiring of turn t; status is the host's plugin status
// now (nil: no plugin health in the answer).
func Wiring(session string, rec *replay.Recording, t *replay.Turn, status []host.PluginStatus) WiringReply {
	out := WiringReply{Session: session, Turns: turnRefs(rec), Turn: turnRefs(&replay.Recording{Turns: []*replay.Turn{t}})[0],
		Hooks: []HookRow{}, Keys: []KeyUse{}, Signals: []Signal{}, Failures: []Call{}, Plugins: []PluginHealth{}, Quarantined: []string{}, Budgets: []Split{}}
	start := t.Start
	off := func(at time.Time) int64 {
		if start.IsZero() || at.IsZero() {
			return 0
		}
		return at.Sub(start).Microseconds()
	}
	keys := map[string]*KeyUse{}
	var keyOrder []string
	touch := func(key, who string, write bool) {
		k := keys[key]
		if k == nil {
			k = &KeyUse{Key: key, ReadBy: []string{}, WrittenBy: []string{}}
			keys[key] = k
			keyOrder = append(keyOrder, key)
		}
		list := &k.ReadBy
		if write {
			list = &k.WrittenBy
		}
		for _, w := range *list {
			if w == who {
				return
			}
		}
		*list = append(*list, who)
	}
	ran := map[string]bool{}
	var pluginOrder []string
	its := append([]*replay.Iteration{t.Opening}, t.Iterations...)
	for _, it := range its {
		if it == nil {
			continue
		}
		var open *HookRow
		for _, e := range it.Timeline {
			if e.Type == loop.EventHookDone {
				if open == nil || open.Hook != e.Hook {
					// A firing whose calls were not recorded (all skipped).
					open = &HookRow{Iteration: e.Iteration, Hook: e.Hook, Calls: []Call{}}
					open.StartUS = off(e.Time) - e.DurationUS
				}
				open.EndUS, open.RoundTrips = off(e.Time), e.RoundTrips
				open.StartUS = min(open.StartUS, open.EndUS-e.DurationUS)
				out.Hooks = append(out.Hooks, *open)
				open = nil
				continue
			}
			c := Call{Iteration: e.Iteration, Hook: e.Hook, Extension: e.Extension, Plugin: e.Plugin, Agent: e.Agent, Order: e.Order,
				EndUS: off(e.Time), DurationUS: e.DurationUS, Reads: e.Reads, Writes: e.Writes, Batch: e.Batch, BatchIndex: e.BatchIndex,
				Error: e.Error, ErrorKind: e.ErrorKind}
			c.StartUS = c.EndUS - c.DurationUS
			if open != nil && open.Hook != e.Hook {
				// The previous firing's hook_done is missing: close it here.
				out.Hooks = append(out.Hooks, *open)
				open = nil
			}
			if open == nil {
				open = &HookRow{Iteration: e.Iteration, Hook: e.Hook, StartUS: c.StartUS, Calls: []Call{}}
			}
			open.StartUS, open.EndUS = min(open.StartUS, c.StartUS), max(open.EndUS, c.EndUS)
			open.Calls = append(open.Calls, c)
			who := e.Plugin + "/" + e.Extension
			for _, k := range e.Reads {
				touch(k, who, false)
			}
			for _, k := range e.Writes {
				touch(k, who, true)
			}
			if e.Error != "" {
				open.Failed = true
				out.Failures = append(out.Failures, c)
			}
			if !ran[e.Plugin] {
				ran[e.Plugin] = true
				pluginOrder = append(pluginOrder, e.Plugin)
			}
		}
		if open != nil {
			out.Hooks = append(out.Hooks, *open)
		}
		for _, s := range it.Signals {
			out.Signals = append(out.Signals, Signal{Iteration: s.Iteration, Signal: s.Signal, Text: s.Text})
		}
		for _, n := range it.Notices {
			if n.Text != "" {
				out.Notices = append(out.Notices, n.Text)
			}
		}
		if it.Budget != nil {
			out.Budgets = append(out.Budgets, SplitOf(it.N, *it.Budget, requestBlocks(it.Request)))
		}
	}
	for _, k := range keyOrder {
		out.Keys = append(out.Keys, *keys[k])
	}
	byName := map[string]host.PluginStatus{}
	for _, st := range status {
		byName[st.Name] = st
	}
	for _, name := range pluginOrder {
		st, ok := byName[name]
		if !ok {
			continue
		}
		out.Plugins = append(out.Plugins, PluginHealth{Name: name, State: st.State, Crashes: st.Crashes, Restarts: st.Restarts, LastError: st.LastError})
		if st.State == host.StateQuarantined {
			out.Quarantined = append(out.Quarantined, name)
		}
	}
	for _, c := range out.Failures {
		if quarantinedCall(c) && !slices.Contains(out.Quarantined, c.Plugin) {
			out.Quarantined = append(out.Quarantined, c.Plugin)
		}
	}
	return out
}

// quarantinedCall reports whether a failed call was refused because its
// plugin is quarantined.
func quarantinedCall(c Call) bool {
	return c.ErrorKind == "unavailable" && strings.Contains(c.Error, "quarantined")
}
