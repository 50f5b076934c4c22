package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/exocortex/exocortex/wiring"
)

// WiringIn is the wiring tool's input (none).
type WiringIn struct{}

// WiringPlugin is a plugin in the wiring.
type WiringPlugin struct {
	Name      string `json:"name"`
	Path      string `json:"path,omitempty"`
	Priority  int    `json:"priority"`
	LoadError string `json:"load_error,omitempty"`
}

// WiringExtension is an extension at a hook.
type WiringExtension struct {
	Hook       string   `json:"hook"`
	Order      int32    `json:"order"`
	Name       string   `json:"name"`
	Plugin     string   `json:"plugin"`
	Runs       bool     `json:"runs"`
	ShadowedBy string   `json:"shadowed_by,omitempty"`
	Reads      []string `json:"reads,omitempty"`
	Writes     []string `json:"writes,omitempty"`
}

// WiringKey is a shared-state key and who touches it.
type WiringKey struct {
	Name     string   `json:"name"`
	Declared bool     `json:"declared"`
	Readers  []string `json:"readers,omitempty"`
	Writers  []string `json:"writers,omitempty"`
}

// WiringTool is a tool a plugin declares.
type WiringTool struct {
	Name       string `json:"name"`
	Plugin     string `json:"plugin"`
	ShadowedBy string `json:"shadowed_by,omitempty"`
}

// WiringOut is the wiring as JSON.
type WiringOut struct {
	Plugins    []WiringPlugin    `json:"plugins"`
	Extensions []WiringExtension `json:"extensions" jsonschema:"every extension in firing order: hook, order, name"`
	Keys       []WiringKey       `json:"keys"`
	Tools      []WiringTool      `json:"tools"`
}

// Wiring derives the JSON wiring of m.
func Wiring(m *wiring.Model) WiringOut {
	g := wiring.Build(m)
	out := WiringOut{Plugins: []WiringPlugin{}, Extensions: []WiringExtension{}, Keys: []WiringKey{}, Tools: []WiringTool{}}
	for _, p := range g.Plugins {
		wp := WiringPlugin{Name: p.Name, Path: p.Path, Priority: p.Priority}
		if p.LoadError != nil {
			wp.LoadError = p.LoadError.Error()
		}
		out.Plugins = append(out.Plugins, wp)
	}
	for _, e := range g.Extensions {
		out.Extensions = append(out.Extensions, WiringExtension{Hook: e.Hook.Name, Order: e.Order(), Name: e.Name, Plugin: e.Plugin.Name,
			Runs: e.Runs(), ShadowedBy: e.ShadowedBy, Reads: e.Spec.GetReads(), Writes: e.Spec.GetWrites()})
	}
	names := func(es []*wiring.Extension) []string {
		var out []string
		for _, e := range es {
			out = append(out, e.Plugin.Name+"/"+e.Name)
		}
		return out
	}
	for _, k := range g.Keys {
		out.Keys = append(out.Keys, WiringKey{Name: k.Name, Declared: k.Declared(), Readers: names(k.Readers), Writers: names(k.Writers)})
	}
	for _, t := range g.Tools {
		out.Tools = append(out.Tools, WiringTool{Name: t.Name, Plugin: t.Plugin.Name, ShadowedBy: t.ShadowedBy})
	}
	return out
}

// ErrNoWiring is the wiring tool's answer when the server was built without
// a wiring loader.
var ErrNoWiring = errors.New("wiring: this server was started without the plugins' wiring; `exocortex lint` shows it")

func (s *Server) wiringTool(ctx context.Context, _ *mcp.CallToolRequest, _ WiringIn) (*mcp.CallToolResult, WiringOut, error) {
	if s.opts.Wiring == nil {
		return nil, WiringOut{}, ErrNoWiring
	}
	m, err := s.opts.Wiring(ctx)
	if err != nil {
		return nil, WiringOut{}, fmt.Errorf("wiring: loading the plugins: %w", err)
	}
	out := Wiring(m)
	var b strings.Builder
	running := 0
	for _, e := range out.Extensions {
		if e.Runs {
			running++
		}
	}
	fmt.Fprintf(&b, "%d plugin(s), %d extension(s) (%d running), %d key(s), %d tool(s).", len(out.Plugins), len(out.Extensions), running, len(out.Keys), len(out.Tools))
	hook := ""
	for _, e := range out.Extensions {
		if !e.Runs {
			continue
		}
		if e.Hook != hook {
			hook = e.Hook
			fmt.Fprintf(&b, "\n%s:", hook)
		}
		fmt.Fprintf(&b, " %s/%s(%d)", e.Plugin, e.Name, e.Order)
	}
	r, err := s.result("wiring", b.String(), out)
	return r, out, err
}
