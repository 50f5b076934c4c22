package tasks

import "github.com/exocortex/exocortex/server/openapi"

// CreateRequest is POST /api/v1/tasks's body.
type CreateRequest struct {
	Message string `json:"message"`
	// Session names the session (a new one, task-…, when empty).
	Session string `json:"session,omitempty"`
}

// Created is POST /api/v1/tasks's reply (202, with a Location header).
type Created struct {
	ID      string `json:"task_id"`
	Session string `json:"session"`
	Status  string `json:"status"`
}

// List is GET /api/v1/tasks's reply.
type List struct {
	Tasks []Task `json:"tasks"`
}

// Ops describes the tasks' routes for the OpenAPI document.
func Ops() []openapi.Op {
	return []openapi.Op{
		{Method: "POST", Pattern: "/api/v1/tasks", Body: CreateRequest{}, Reply: Created{}, Status: 202,
			Description: "Answers at once; the monologue runs in the session after its earlier turns. The result is kept with the session and survives a restart."},
		{Method: "GET", Pattern: "/api/v1/tasks", Reply: List{}, Query: []openapi.Param{
			{Name: "session", Description: "only this session's tasks"},
		}},
		{Method: "GET", Pattern: "/api/v1/tasks/{id}", Reply: Task{}},
		{Method: "DELETE", Pattern: "/api/v1/tasks/{id}", Reply: Task{}, Description: "Cancels a queued or running task; answers the task as it now is."},
	}
}
