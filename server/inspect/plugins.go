package inspect

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/exocortex/exocortex/core/host"
)

// Plugins is what the plugin routes need of the host: [host.Host] has it.
type Plugins interface {
	Status() []host.PluginStatus
	FailedPlugins() []*host.StartError
	Reload(ctx context.Context, name string) error
	ApplyPending() bool
	Pending() []string
}

// PluginsReply is the answer of GET /api/v1/plugins.
type PluginsReply struct {
	// Plugins are the host's status reports, in priority order: state,
	// crashes, restarts, last error, stderr tail, and every extension with
	// its hook and order.
	Plugins []host.PluginStatus `json:"plugins"`
	// Failed are the plugins that did not start, and why.
	Failed []FailedPlugin `json:"failed"`
	// Pending names the plugins whose new version waits for the next step.
	Pending []string `json:"pending"`
}

// FailedPlugin is a plugin that failed to start.
type FailedPlugin struct {
	Name   string `json:"name"`
	Path   string `json:"path"`
	Reason string `json:"reason"`
	Stderr string `json:"stderr_tail,omitempty"`
}

// ReloadReply is the answer of POST /api/v1/plugins/{name}/reload.
type ReloadReply struct {
	Plugin string `json:"plugin"`
	// Applied says the new version is in use now; else it is swapped in at
	// the next step of a session (Pending names it until then).
	Applied bool   `json:"applied"`
	Message string `json:"message"`
	// Status is the plugin's status after the reload.
	Status *host.PluginStatus `json:"status,omitempty"`
}

func pluginsReply(p Plugins) PluginsReply {
	out := PluginsReply{Plugins: p.Status(), Failed: []FailedPlugin{}, Pending: p.Pending()}
	if out.Plugins == nil {
		out.Plugins = []host.PluginStatus{}
	}
	if out.Pending == nil {
		out.Pending = []string{}
	}
	for _, f := range p.FailedPlugins() {
		out.Failed = append(out.Failed, FailedPlugin{Name: f.Plugin, Path: f.Path, Reason: f.Reason, Stderr: f.Stderr})
	}
	return out
}

func statusOf(p Plugins, name string) (host.PluginStatus, bool) {
	for _, st := range p.Status() {
		if st.Name == name {
			return st, true
		}
	}
	return host.PluginStatus{}, false
}

// reload reloads the plugin name, applying it at once when busy reports no
// session mid-step.
func reload(ctx context.Context, p Plugins, busy func() bool, name string) (ReloadReply, error) {
	if name == "" {
		return ReloadReply{}, &InputError{Field: "name", Message: "a plugin name is needed (GET /api/v1/plugins lists them)", Err: ErrBadInput}
	}
	if err := p.Reload(ctx, name); err != nil {
		var re *host.ReloadError
		if errors.As(err, &re) && re.Stage == "unknown" {
			return ReloadReply{}, fmt.Errorf("%w: %w", ErrNotFound, err)
		}
		return ReloadReply{}, err
	}
	if busy == nil || !busy() {
		p.ApplyPending()
	}
	out := ReloadReply{Plugin: name, Applied: !slices.Contains(p.Pending(), name)}
	out.Message = "reloaded plugin " + name + " (the new version passed the checks and is in use)"
	if !out.Applied {
		out.Message = "reloaded plugin " + name + ": the new version passed the checks and is swapped in at a session's next step"
	}
	if st, ok := statusOf(p, name); ok {
		out.Status = &st
	}
	return out, nil
}
