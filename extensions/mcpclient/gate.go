package mcpclient

import (
	"context"
	"fmt"
	"sort"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

// Destructive are the MCP tools whose server marks them destructive
// (annotations destructiveHint: true, readOnlyHint not true), as SERVER.TOOL,
// sorted.
func (s *Set) Destructive() []string {
	var out []string
	for _, sv := range s.servers {
		sv.mu.Lock()
		for n, t := range sv.tools {
			if a := t.Annotations; a != nil && !a.ReadOnlyHint && a.DestructiveHint != nil && *a.DestructiveHint {
				out = append(out, sv.name+"."+n)
			}
		}
		sv.mu.Unlock()
	}
	sort.Strings(out)
	return out
}

// Gate holds the calls of MCP tools their server marks destructive for the
// operator, as the action boundary holds a tier-4 command: the approval mode
// decides (default asks, yolo lets them run), and a session that cannot ask
// (run -p, an MCP client) refuses them with the reason.
type Gate struct{ Set *Set }

// Spec declares it, for the destructive tools only.
func (g Gate) Spec() sdk.Spec {
	return sdk.Spec{
		Name: "mcp_destructive_gate", Hooks: []sdk.Hook{sdk.ToolExecuteBefore(g)}, Order: 16, ForTools: g.Set.Destructive(),
		EffectsDeclared: true,
		Description:     "Holds for the operator the calls of MCP tools their server marks destructive (destructiveHint), as the action boundary holds tier 4.",
	}
}

// ToolExecuteBefore holds the call.
func (g Gate) ToolExecuteBefore(_ context.Context, _ *sdk.Call, req *exocortexv1.ToolExecuteBeforeRequest) (*exocortexv1.ToolExecuteBeforeResponse, error) {
	tc := req.GetToolCall()
	return &exocortexv1.ToolExecuteBeforeResponse{Block: &exocortexv1.ToolBlock{NeedsApproval: true,
		Reason: fmt.Sprintf("the MCP server marks %s destructive (destructiveHint)", tc.GetName()),
		Action: tc.GetName() + " " + tc.GetArgsJson()}}, nil
}
