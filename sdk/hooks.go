package sdk

import (
	"strings"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// The hook interfaces (AgentInitHook, ...), the constructors that declare them
// (AgentInit, ...), hookDefs, the server's hook RPCs and the hook sets
// (IsToolHook, IsPromptHook) are generated from the protocol into hooks_gen.go
// by `make generate` (sdk/internal/genhooks); see docs/hooks.md for adding a
// hook.

//go:generate go run ./internal/genhooks -grpc ../proto/exocortex/v1/plugin_grpc.pb.go -out hooks_gen.go -py python/exocortex/_hooks_gen.py

// Hook is one hook an extension handles, as its Spec.Hooks declares it: made by
// the hook's generated constructor from the value whose method handles it,
//
//	Hooks: []sdk.Hook{sdk.ToolExecuteBefore(g), sdk.MessageLoopEnd(g)},
//
// Each constructor takes the hook's interface (ToolExecuteBeforeHook, ...), so
// a declaration whose value lacks the method, or spells it otherwise, is a
// compile error naming the method, not a hook silently never served. The zero
// Hook declares nothing (Serve refuses it).
type Hook struct {
	id      exocortexv1.Hook
	handler any // implements the interface of id
}

// ID is the protocol hook h declares.
func (h Hook) ID() exocortexv1.Hook { return h.id }

// hookDef ties a protocol hook to the Go interface that handles it.
type hookDef struct {
	hook exocortexv1.Hook
	// method is the Go method's name, also the constructor's.
	method     string
	implements func(any) bool
}

func is[I any](v any) bool { _, ok := v.(I); return ok }

// Hooks returns every hook this SDK serves, in the Hook enum's order: all the
// protocol's, since the interfaces are generated from it.
func Hooks() []exocortexv1.Hook {
	defs := hookDefs()
	out := make([]exocortexv1.Hook, len(defs))
	for i, d := range defs {
		out[i] = d.hook
	}
	return out
}

// HookName is the snake_case name of a hook as the documentation and the logs use
// it: HOOK_MESSAGE_LOOP_END is "message_loop_end".
func HookName(h exocortexv1.Hook) string {
	return strings.ToLower(strings.TrimPrefix(h.String(), "HOOK_"))
}
