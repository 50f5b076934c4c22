package memoryapi

import (
	"github.com/exocortex/exocortex/memory"
	"github.com/exocortex/exocortex/server/openapi"
)

// Ops describes New's routes for the OpenAPI document.
func Ops() []openapi.Op {
	rec := &memory.Record{}
	return []openapi.Op{
		{Method: "GET", Pattern: "/api/v1/memory/search", Reply: SearchReply{}, Query: []openapi.Param{
			{Name: "q", Required: true, Description: "the words to search for"},
			{Name: "k", Type: "integer", Description: "how many hits, 1 to 1000 (default 10)"},
			{Name: "area", Description: "memory areas to search, comma-separated (default: all)"},
			{Name: "tags", Description: "tags every hit must carry, comma-separated"},
		}, Description: "Hybrid recall (BM25 and vectors, as the agent's); each hit says why it matched."},
		{Method: "POST", Pattern: "/api/v1/memory/compile", Body: CompileRequest{}, Reply: CompileReply{},
			Description: "The memory block the agent would receive for the query, within token_budget."},
		{Method: "GET", Pattern: "/api/v1/memory/{id}", Reply: rec},
		{Method: "POST", Pattern: "/api/v1/memory", Body: SaveRequest{}, Reply: SaveReply{}, Status: 201,
			Description: "201 for a new record; 200 when id names an existing one. A key the area already holds updates that record."},
		{Method: "POST", Pattern: "/api/v1/memory/{id}/archive", Body: ArchiveRequest{}, OptionalBody: true, Reply: rec},
		{Method: "POST", Pattern: "/api/v1/memory/{id}/restore", Body: RestoreRequest{}, OptionalBody: true, Reply: rec},
		{Method: "GET", Pattern: "/api/v1/memory/why/{id}", Reply: WhyReply{}},
		{Method: "GET", Pattern: "/api/v1/state", Reply: StateReply{}, Query: []openapi.Param{
			{Name: "ns", Description: "a memory area: its record count and its own state hash"},
		}, Description: "Constant cost: the hash is kept by the writes, never recomputed by a read."},
	}
}
