package host

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"time"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/secrets"
)

// A tool runs where its provider says: in a plugin process (the plugins'
// tools, the MCP servers' tools, which the mcp-servers plugin serves), or
// somewhere the host reaches without a plugin, such as an HTTP endpoint a
// client registered with `exocortex serve` (server/tools). Every tool goes
// through the same path: the agent loop finds it with Host.Tool, fires
// tool_execute_before (blocks and approvals), runs it with Host.ExecuteTool
// (the declared secrets' values put in, the tool's deadline, the answer
// masked), and fires tool_execute_after; only the last step, the provider's
// RunTool, differs.

// ToolProvider is where a set of tools runs. A *Plugin is one; AddToolProvider
// adds others.
type ToolProvider interface {
	// Name names the provider in listings and errors ("plugin NAME" is a
	// plugin's; another names what it is, e.g. "tool registry").
	Name() string
	// RunTool runs the tool req names within timeout. The host has put the
	// declared secrets' values in req and masks what comes back. A deadline
	// missed or a failure to reach the tool is an error; a tool that ran and
	// failed answers with the result's error, as the model should read it.
	RunTool(ctx context.Context, req *exocortexv1.ExecuteToolRequest, timeout time.Duration) (*exocortexv1.ExecuteToolResponse, error)
}

// ToolLister is a provider whose tools change while the host runs (a
// plugin's are in its manifest instead): Tools lists them now, and is called
// on every listing, so it must be cheap.
type ToolLister interface {
	ToolProvider
	Tools(ctx context.Context) []*exocortexv1.ToolSpec
}

// ProviderName is the name of the tool's provider ("plugin memory-tools").
func (t *Tool) ProviderName() string {
	if t.Plugin != nil {
		return t.Plugin.Name()
	}
	if t.Provider != nil {
		return t.Provider.Name()
	}
	return ""
}

// RunTool runs a tool of the plugin (ToolProvider).
func (p *Plugin) RunTool(ctx context.Context, req *exocortexv1.ExecuteToolRequest, timeout time.Duration) (*exocortexv1.ExecuteToolResponse, error) {
	return callAsIs(ctx, p, "", "tool "+req.GetToolCall().GetName(), timeout, req, exocortexv1.PluginClient.ExecuteTool)
}

// AddToolProvider adds the tools of p beside the plugins'. A plugin's tool of
// the same name wins; the provider's copy is listed as shadowed.
func (h *Host) AddToolProvider(p ToolLister) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.providers = append(h.providers, p)
}

// toolSets are the plugins' tools (a map wiring replaces whole, never
// changes) and the other providers, as they are now.
func (h *Host) toolSets() (map[string]*Tool, []ToolLister) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	return h.tools, append([]ToolLister(nil), h.providers...)
}

// providerTools lists the tools of providers that no plugin tool (in
// plugin) hides. It runs without h.mu: a provider may list the host's tools.
func providerTools(plugin map[string]*Tool, providers []ToolLister) (tools []*Tool, hidden []Shadow) {
	seen := map[string]bool{}
	for _, p := range providers {
		for _, spec := range p.Tools(context.Background()) {
			name := spec.GetName()
			if t, ok := plugin[name]; ok {
				hidden = append(hidden, Shadow{Kind: "tool", Name: name, Hidden: p.Name(), By: t.ProviderName()})
				continue
			}
			if seen[name] {
				continue
			}
			seen[name] = true
			tools = append(tools, &Tool{Spec: spec, Provider: p})
		}
	}
	return tools, hidden
}

// ExecuteTool runs a tool where its provider runs it, with the same secrets
// and deadline rules for every provider: the values of the secrets the tool
// declares go in (substituteTool), the request and the answer are masked,
// and a provider that misses timeout fails the call as TimedOut.
func (h *Host) ExecuteTool(ctx context.Context, t *Tool, req *exocortexv1.ExecuteToolRequest, timeout time.Duration) (*exocortexv1.ExecuteToolResponse, error) {
	if timeout <= 0 {
		timeout = h.opts.DefaultTimeout
	}
	m := h.opts.Secrets.Masker()
	req, err := h.substituteTool(t, secrets.MaskProto(m, req))
	if err != nil {
		return nil, err
	}
	if t.Plugin != nil {
		resp, err := t.Plugin.RunTool(ctx, req, timeout)
		return secrets.MaskProto(m, resp), err
	}
	if t.Provider == nil {
		return nil, fmt.Errorf("tool %s has no provider", t.Spec.GetName())
	}
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	resp, err := t.Provider.RunTool(cctx, req, timeout)
	if err == nil {
		return secrets.MaskProto(m, resp), nil
	}
	ce := &CallError{Provider: t.Provider.Name(), Hook: "tool " + t.Spec.GetName(), Kind: Returned, Err: err}
	switch {
	case ctx.Err() != nil:
		ce.Kind, ce.Err = Canceled, ctx.Err()
	case errors.Is(cctx.Err(), context.DeadlineExceeded):
		ce.Kind, ce.Err = TimedOut, fmt.Errorf("no answer within %s (timeouts.tools.%s in config.yaml sets the tool's deadline)", timeout, t.Spec.GetName())
	}
	if ce.Kind == Returned {
		// The provider's error may quote what it was sent: no value goes out.
		ce.Err = errors.New(m.Mask(err.Error()))
	}
	return nil, ce
}

// sortTools orders tools by name.
func sortTools(ts []*Tool) {
	sort.Slice(ts, func(i, j int) bool { return ts[i].Spec.GetName() < ts[j].Spec.GetName() })
}
