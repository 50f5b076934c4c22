package inspect

import (
	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/server/openapi"
)

// Ops describes the inspection routes for the OpenAPI document.
func Ops() []openapi.Op {
	turn := []openapi.Param{{Name: "turn", Type: "integer", Description: "the turn, from 1 (default: the last ended turn)"}}
	return []openapi.Op{
		{Method: "GET", Pattern: "/api/v1/saw/{session}", Query: turn, Reply: SawReply{},
			Description: "From the session's recording (sessions/NAME.replay): each iteration's request as sent, every block labelled with its extension, plugin and hook, and the memories of the recall block with why each was chosen. 404 for a session with no recorded turn."},
		{Method: "GET", Pattern: "/api/v1/wiring/{session}", Query: turn, Reply: WiringReply{},
			Description: "What /wiring shows, as timeline data: hook firings in order with start and end offsets from the turn's start (µs) and each extension's call; state keys read and written; signals; failures; the health of the turn's plugins; each request's budget split into fixed, blocks, recall, history, free and reserve."},
		{Method: "GET", Pattern: "/api/v1/plugins", Reply: PluginsReply{}},
		{Method: "GET", Pattern: "/api/v1/plugins/{name}", Reply: host.PluginStatus{}},
		{Method: "POST", Pattern: "/api/v1/plugins/{name}/reload", Reply: ReloadReply{},
			Description: "As /plugins reload NAME: the new version is started and vetted (start, wiring, state types, lint); 409 when it is refused (the running version keeps serving), 404 for an unknown plugin."},
	}
}
