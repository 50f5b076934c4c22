package deltas

import "github.com/exocortex/exocortex/server/openapi"

// Ops describes the delta routes for the OpenAPI document.
func Ops() []openapi.Op {
	return []openapi.Op{
		{Method: "GET", Pattern: "/api/v1/deltas", Reply: SinceReply{}, Query: []openapi.Param{
			{Name: "since", Type: "integer", Required: true, Description: "the last sequence number the client has (0: everything)"},
			{Name: "limit", Type: "integer", Description: "at most this many deltas, 1 to 10000 (default 1000); more says to ask again since next"},
		}},
		{Method: "GET", Pattern: "/api/v1/deltas/stream", Reply: Delta{}, Stream: true, Query: []openapi.Param{
			{Name: "since", Type: "integer", Description: "where to resume when the client cannot send Last-Event-ID"},
		}, Description: "Events `delta` (id: the seq), comments `: keep-alive`, and `catchup` ({since, reason}) for a client that fell behind, " +
			"which then fetches GET /api/v1/deltas?since= and reconnects. Send Last-Event-ID to resume after the last event received."},
	}
}
