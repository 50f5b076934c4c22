package host

import (
	"sort"

	"github.com/exocortex/exocortex/core/hooks"
)

// PluginStatus is a plugin's health, for `exocortex plugins status` and /plugins.
type PluginStatus struct {
	Name string `json:"name"`
	// Path is the plugin's program, or InProcessPath for a built-in served
	// in the host's process (InProcess set).
	Path      string `json:"path"`
	InProcess bool   `json:"in_process,omitempty"`
	Source    string `json:"source"`
	Version   string `json:"version,omitempty"`
	State     State  `json:"state"`
	Crashes   int    `json:"crashes"`
	// StartMS is how long the plugin's last start took (process start to
	// manifest), in milliseconds; every run waits for it. 0 when it never
	// started.
	StartMS    int64           `json:"start_ms"`
	Restarts   int             `json:"restarts"`
	LastError  string          `json:"last_error,omitempty"`
	Stderr     string          `json:"stderr_tail,omitempty"`
	Extensions []ExtensionInfo `json:"extensions"`
	Tools      []string        `json:"tools,omitempty"`
	Shadows    []Shadow        `json:"shadows,omitempty"`

	// Calls is how the host reaches the plugin's extensions, from its manifest:
	// "dispatch" (batches over one stream, the fastest), "batch" (RunBatch), or
	// "unary" (the hook's own RPC for each extension).
	Calls string `json:"calls,omitempty"`

	// Reloads counts the new versions swapped in while running; Pending says a
	// staged version waits for the next iteration; LastRejection says why the
	// last new version was refused (cleared when one is swapped in).
	Reloads       int    `json:"reloads,omitempty"`
	Pending       string `json:"pending,omitempty"`
	LastRejection string `json:"last_rejection,omitempty"`

	// OverBudget lists the extensions that exceeded their hook's time budget
	// (budget.go), by extension and hook.
	OverBudget []Overrun `json:"over_budget,omitempty"`
}

// InProcessPath is the path a status gives a built-in plugin served inside
// the host's process: it has no program of its own.
const InProcessPath = "in-process (served inside the host's own process)"

// ExtensionInfo is one extension in a status report.
type ExtensionInfo struct {
	Name     string `json:"name"`
	Hook     string `json:"hook"`
	Order    int32  `json:"order"`
	Disabled bool   `json:"disabled,omitempty"`
}

// Status reports every plugin, in priority order.
func (h *Host) Status() []PluginStatus {
	h.mu.RLock()
	plugins := append([]*Plugin(nil), h.plugins...)
	shadows := append([]Shadow(nil), h.shadows...)
	active := map[*Plugin]map[string]bool{}
	for _, exts := range h.byHook {
		for _, e := range exts {
			if active[e.Plugin] == nil {
				active[e.Plugin] = map[string]bool{}
			}
			active[e.Plugin][e.Name()+"@"+e.Hook.Name] = true
		}
	}
	h.mu.RUnlock()

	out := make([]PluginStatus, 0, len(plugins))
	for _, p := range plugins {
		p.mu.Lock()
		st := PluginStatus{
			Name: p.Name(), Path: p.cand.Path, Source: p.cand.Dir.Source.String(),
			Crashes: p.totalCrash, Restarts: p.restarts, StartMS: p.startTook.Milliseconds(),
		}
		if p.inProcessServer() != nil {
			st.Path, st.InProcess = InProcessPath, true
		}
		switch {
		case p.quarantined:
			st.State = StateQuarantined
		case p.client != nil && !p.client.Exited():
			st.State = StateRunning
		case keptOut(p.lastErr):
			st.State = StateRejected
		case p.manifest == nil:
			st.State = StateFailed
		default:
			st.State = StateStopped
		}
		if p.lastErr != nil {
			st.LastError = p.lastErr.Error()
		}
		if len(p.overruns) > 0 {
			st.OverBudget = p.overrunsLocked()
		}
		switch m := p.manifest; {
		case m.GetServesDispatch():
			st.Calls = "dispatch"
		case m.GetServesBatches():
			st.Calls = "batch"
		case m != nil:
			st.Calls = "unary"
		}
		m := p.manifest
		p.mu.Unlock()
		st.Stderr = p.StderrTail()
		st.Version = m.GetVersion()
		for _, e := range m.GetExtensions() {
			hn := hooks.Name(e.GetHook())
			st.Extensions = append(st.Extensions, ExtensionInfo{
				Name: e.GetName(), Hook: hn, Order: e.GetOrder(),
				Disabled: !active[p][e.GetName()+"@"+hn],
			})
		}
		for _, t := range m.GetTools() {
			st.Tools = append(st.Tools, t.GetName())
		}
		for _, s := range shadows {
			if s.By == p.Name() || s.Hidden == p.Name() {
				st.Shadows = append(st.Shadows, s)
			}
		}
		sort.Strings(st.Tools)
		out = append(out, st)
	}
	return h.reloadStatus(out)
}
