package tools

import (
	"context"
	"encoding/json"

	"github.com/exocortex/exocortex/core/host"
)

// FromHost lists the tools of h's loaded plugins as definitions: the agent is
// the plugin, the id plugin.tool, the version the plugin's, and the schemas
// and category those of its manifest ({"type": "object"} for arguments a
// tool did not declare, a string for a result it did not describe).
func FromHost(h *host.Host) Plugins {
	return func(context.Context) []Definition {
		var out []Definition
		for _, t := range h.Tools() {
			if t.Plugin == nil {
				continue // a registered tool (this registry's) or another provider's
			}
			s := t.Spec
			agent := t.Plugin.Name()
			version := ""
			if m := t.Plugin.Manifest(); m != nil {
				version = m.GetVersion()
			}
			out = append(out, Definition{
				ID: agent + "." + s.GetName(), Name: s.GetName(), Description: s.GetDescription(), Category: s.GetCategory(),
				Parameters: schema(s.GetParametersJsonSchema(), `{"type":"object"}`),
				Returns:    schema(s.GetReturnsJsonSchema(), `{"type":"string","description":"the tool's text"}`),
				Endpoint:   "plugin:" + agent, Version: version, Agent: agent,
			})
		}
		return out
	}
}

func schema(s, def string) json.RawMessage {
	if s == "" || !json.Valid([]byte(s)) {
		s = def
	}
	return json.RawMessage(s)
}
