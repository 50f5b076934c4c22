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
