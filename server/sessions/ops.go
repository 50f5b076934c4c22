package sessions

import "github.com/exocortex/exocortex/server/openapi"

// ApprovalList is GET /api/v1/approvals's reply.
type ApprovalList struct {
	Approvals []Pending `json:"approvals"`
	// Timeout is how long a held call waits before it is refused.
	Timeout string `json:"timeout"`
}

// AnswerRequest is POST /api/v1/approvals/{id}'s body.
type AnswerRequest struct {
	Decision string `json:"decision" jsonschema:"enum=allow_once,enum=allow_session,enum=deny"`
	Reason   string `json:"reason,omitempty"`
}

// AnswerReply is POST /api/v1/approvals/{id}'s reply.
type AnswerReply struct {
	Approval Pending `json:"approval"`
	Decision string  `json:"decision"`
}

// ApprovalOps describes the approval routes for the OpenAPI document.
func ApprovalOps() []openapi.Op {
	return []openapi.Op{
		{Method: "GET", Pattern: "/api/v1/approvals", Reply: ApprovalList{}, Query: []openapi.Param{
			{Name: "session", Description: "only this session's held calls"},
		}},
		{Method: "POST", Pattern: "/api/v1/approvals/{id}", Body: AnswerRequest{}, Reply: AnswerReply{},
			Description: "A deny's reason is given to the model. 404 for a call answered, timed out or never held."},
	}
}

// ChatOps describes ChatRoutes for the OpenAPI document.
func ChatOps() []openapi.Op {
	limit := []openapi.Param{{Name: "limit", Type: "integer", Description: "the last this many messages (default 500)"}}
	return []openapi.Op{
		{Method: "GET", Pattern: "/api/v1/sessions", Reply: SessionList{}, Description: "Most recently used first; the same files the terminal lists and resumes."},
		{Method: "POST", Pattern: "/api/v1/sessions", Body: NewSession{}, OptionalBody: true, Reply: Named{}, Status: 201, Description: "409 for a name that exists."},
		{Method: "POST", Pattern: "/api/v1/sessions/{name}/rename", Body: RenameRequest{}, Reply: Named{}, Description: "409 while its turn runs, or when the new name exists."},
		{Method: "DELETE", Pattern: "/api/v1/sessions/{name}", Reply: Named{}, Description: "Its running turn stops; its files go to the sessions' .trash."},
		{Method: "GET", Pattern: "/api/v1/sessions/{name}/messages", Query: limit, Reply: MessageList{}},
		{Method: "POST", Pattern: "/api/v1/sessions/{name}/turn", Body: TurnRequest{}, Reply: TurnEvent{}, Stream: true,
			Description: "Server-sent events, each named by its type: session first, then reply (the answer so far), reasoning, tool_call, tool_output, tool_result, approval_waiting, approval, notice, signal, and done or error last. The turn goes on if the connection drops; POST .../stop ends it. A session that does not exist is created."},
		{Method: "POST", Pattern: "/api/v1/sessions/{name}/stop", Reply: StopReply{}},
	}
}
