package tools

import "github.com/exocortex/exocortex/server/openapi"

// Ops describes the registry's routes for the OpenAPI document.
func Ops() []openapi.Op {
	return []openapi.Op{
		{Method: "GET", Pattern: "/tools", Reply: ListReply{}, Query: []openapi.Param{
			{Name: "agent", Description: "only the tools of this agent (or plugin)"},
			{Name: "category", Description: "only the tools of this category"},
		}},
		{Method: "GET", Pattern: "/tools/{id}", Reply: Definition{}},
		{Method: "POST", Pattern: "/tools", Body: Definition{}, Reply: Definition{}, Status: 201,
			Description: "201 for a new id, 200 when it replaces a registered one; 409 for a plugin tool's id."},
		{Method: "DELETE", Pattern: "/tools/{id}", Status: 204, Description: "A plugin's tool cannot be removed here (409)."},
		{Method: "GET", Pattern: "/health", Reply: Health{}},
	}
}
