// Command statenote is a test plugin of `exocortex serve`'s session
// isolation: a tool "note" and an extension at tool_execute_after that keeps
// a session-scope state key. {"set": TEXT} writes TEXT into the key and
// answers "noted: TEXT"; {} reads it and answers "note: TEXT", or
// "note: unset" when this session never wrote it.
package main

import (
	"context"
	"encoding/json"

	"google.golang.org/protobuf/types/known/wrapperspb"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

func note() sdk.Key[*wrapperspb.StringValue] {
	return sdk.NewKey[*wrapperspb.StringValue]("statenote_note", exocortexv1.Scope_SCOPE_SESSION, "The session's note.")
}

type keeper struct{}

func (e keeper) Spec() sdk.Spec {
	return sdk.Spec{Name: "note_keeper", Hooks: []sdk.Hook{sdk.ToolExecuteAfter(e)}, Order: 500,
		Reads: []sdk.KeyRef{note()}, Writes: []sdk.KeyRef{note()}, Description: "Writes and reads the session's note."}
}

func (keeper) ToolExecuteAfter(_ context.Context, c *sdk.Call, req *exocortexv1.ToolExecuteAfterRequest) (*exocortexv1.ToolExecuteAfterResponse, error) {
	if req.GetToolCall().GetName() != "note" {
		return nil, nil
	}
	var args struct {
		Set *string `json:"set"`
	}
	_ = json.Unmarshal([]byte(req.GetToolCall().GetArgsJson()), &args)
	if args.Set != nil {
		note().Set(c, wrapperspb.String(*args.Set))
		content := "noted: " + *args.Set
		return &exocortexv1.ToolExecuteAfterResponse{Content: &content}, nil
	}
	content := "note: unset"
	if v, ok := note().Get(c); ok {
		content = "note: " + v.GetValue()
	}
	return &exocortexv1.ToolExecuteAfterResponse{Content: &content}, nil
}

func main() {
	sdk.Serve(sdk.Plugin{
		Name: "statenote", Version: "test",
		Extensions: []sdk.Extension{keeper{}},
		Tools: []sdk.Tool{{
			Name: "note", Description: "Writes ({\"set\": TEXT}) or reads ({}) the session's note.",
			Parameters: `{"type":"object","properties":{"set":{"type":"string"}}}`,
			Run: func(context.Context, *sdk.Call, json.RawMessage) (*exocortexv1.ToolResult, error) {
				return &exocortexv1.ToolResult{Content: "note"}, nil
			},
		}},
	})
}
