// Package sdk is what an Exocortex extension author imports, together with the
// generated protocol (package exocortexv1, proto/exocortex/v1). It hides go-plugin
// and gRPC: an extension is a small Go type with a Spec method and one method per hook
// it handles, state is read and written through typed keys, and Serve turns a set of
// extensions and tools into a plugin process the host starts.
//
// # A complete plugin
//
// This plugin counts consecutive failures per tool in the built-in failure_tracker
// key, and offers one tool:
//
//	package main
//
//	import (
//		"context"
//		"encoding/json"
//
//		exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
//		"github.com/exocortex/exocortex/sdk"
//	)
//
//	// failureCounter runs after every tool.
//	type failureCounter struct{}
//
//	func tracker() sdk.Key[*exocortexv1.FailureTracker] {
//		return sdk.KeyOf[*exocortexv1.FailureTracker]()
//	}
//
//	func (e failureCounter) Spec() sdk.Spec {
//		return sdk.Spec{
//			Name:        "failure_counter",
//			Hooks:       []sdk.Hook{sdk.ToolExecuteAfter(e)},
//			Order:       20,
//			Reads:       []sdk.KeyRef{tracker()},
//			Writes:      []sdk.KeyRef{tracker()},
//			Description: "Counts consecutive failures per tool.",
//		}
//	}
//
//	func (failureCounter) ToolExecuteAfter(ctx context.Context, c *sdk.Call,
//		req *exocortexv1.ToolExecuteAfterRequest) (*exocortexv1.ToolExecuteAfterResponse, error) {
//		ft, ok := tracker().Get(c)
//		if !ok {
//			ft = &exocortexv1.FailureTracker{}
//		}
//		if ft.Failures == nil {
//			ft.Failures = map[string]int32{}
//		}
//		name := req.GetToolCall().GetName()
//		if req.GetResult().GetError() != "" {
//			ft.Failures[name]++
//		} else {
//			delete(ft.Failures, name)
//		}
//		tracker().Set(c, ft)
//		c.Logger().Info("counted", "tool", name, "failures", ft.Failures[name])
//		return nil, nil // nil: no change to the tool result
//	}
//
//	func main() {
//		sdk.Serve(sdk.Plugin{
//			Name:       "failures",
//			Version:    "1.0.0",
//			Extensions: []sdk.Extension{failureCounter{}},
//			Tools: []sdk.Tool{{
//				Name:        "shout",
//				Description: "Repeats its text argument.",
//				Parameters:  `{"type":"object","properties":{"text":{"type":"string"}}}`,
//				Run: func(ctx context.Context, c *sdk.Call, args json.RawMessage) (*exocortexv1.ToolResult, error) {
//					var a struct{ Text string }
//					if err := json.Unmarshal(args, &a); err != nil {
//						return nil, err // the model sees the error
//					}
//					return &exocortexv1.ToolResult{Content: a.Text + "!"}, nil
//				},
//			}},
//		})
//	}
//
// Build it with go build and put the binary where the host looks for plugins.
// examples/hello and examples/statepair are runnable plugins of this shape.
//
// # Extensions and hooks
//
// An Extension has a Spec that declares the hooks it handles (Spec.Hooks) and
// implements their interfaces, one per hook of the agent loop: AgentInitHook,
// MonologueStartHook, HistAddBeforeHook, MessageLoopStartHook,
// MessageLoopPromptsBeforeHook, SystemPromptHook, MessageLoopPromptsAfterHook,
// BeforeMainLLMCallHook, ResponseStreamChunkHook, ResponseStreamEndHook,
// ErrorFormatHook, ToolExecuteBeforeHook, ToolExecuteAfterHook,
// MessageLoopEndHook and MonologueEndHook, and Agent Zero v1.7's model-side
// points: ChatModelCallBeforeHook, ChatModelCallAfterHook,
// UtilModelCallBeforeHook, UtilModelCallAfterHook, ReasoningStreamChunkHook,
// ReasoningStreamHook, ReasoningStreamEndHook, ResponseStreamHook,
// MessageLoopExceptionHook and ProcessChainEndHook. Each hook is declared with its
// generated constructor, named like the method (sdk.ToolExecuteAfter(e),
// sdk.MessageLoopEnd(e), ...), which takes the hook's interface: a declared hook
// whose method is missing or misspelled is a compile error naming the method,
// not a hook that is silently never served, and NewServer refuses a hook method
// the Spec does not declare. (The Python SDK cannot check this before it runs:
// it finds an extension's hooks by its method names when the plugin loads, and
// refuses there what it cannot serve.) Each method takes
// the hook's request message and returns its response message; the types fix what an
// extension may see and change there. A nil response (with a nil error) means "no
// change". The SDK fills in the response's changes field itself, from the Call (a
// value the method put there is replaced).
//
// Only the three prompt-assembly hooks (message_loop_prompts_before, system_prompt,
// message_loop_prompts_after) have prompt_blocks in their response: text added at any
// other point cannot reach the model, so there is no field to put it in. An
// extension that adds blocks declares Spec.InjectsPrompt.
//
// Methods may be called concurrently and must not keep per-session data in fields:
// shared state lives in the host, behind keys.
//
// # The manifest
//
// The host first asks the plugin for its manifest. Each hook an extension declares
// becomes one ExtensionSpec with the extension's name, the hook, and the Spec's
// fields (Order, or HookOrder's entry for that hook). Plugin keys (NewKey) used in a
// Spec go into state_keys; tools into tools with implemented set; Plugin.Files and
// Plugin.UsesUtilityModel pass through (the host refuses Call.CallUtilityModel,
// a completion of its utility model with util_model_call_before/after around it,
// to a plugin that does not declare it), and so do Plugin.UsesMemory and
// Plugin.MemoryWriteAreas (see Memory below). The manifest is deterministic: extensions sorted by name then hook, keys
// and tools by name, files by id, user and path, key lists and signals sorted and
// without duplicates.
//
// NewServer (and Serve) check the plugin first and refuse, naming the culprit: an
// extension declaring no hook, a hook method not declared, a hook declared
// twice, InjectsPrompt without a prompt-assembly hook, a
// key in Resets but not in Writes, a zero key, a NewKey that reuses a built-in name
// or has no scope, one key name declared with two types, duplicate extension or tool
// names, a tool without Run, a tool schema that is not JSON, a HookOrder entry for a
// hook not declared, a consumed signal that is not a constant of package signals,
// a panic in Spec.
//
// # Memory
//
// Call.Memory is the home's long-term memory store: the host serves the
// exocortex.v1.MemoryService of proto/exocortex/v1/memory.proto (search with
// why, get, list, census, save, update, archive, restore, delete, record
// access, history, stats, watch, the agent's memory tools) on the same
// connection as the Host service, and forwards each call to the one memory
// service of the home, which every process on it shares (a second session, the
// CLI, sleep). A third-party plugin gets exactly the memory the built-in memory
// extensions get:
//
//	sdk.Plugin{Name: "notebook", UsesMemory: true, MemoryWriteAreas: []string{"notes"}, Tools: ...}
//
//	recs, err := c.Memory().As("tool:note_add").Save(ctx, &exocortexv1.MemoryInput{Area: "notes", Text: text})
//	res, err := c.Memory().Search(ctx, query, &exocortexv1.MemorySearchOptions{Limit: 5,
//		Filter: &exocortexv1.MemoryFilter{Areas: []string{"notes"}}})
//
// A plugin that does not declare UsesMemory is refused every call; a write
// (save, update, archive, restore, delete, an appended event) to an area not in
// MemoryWriteAreas is refused with an error naming the plugin, the area and the
// field; "*" declares every area (forget, whose query may reach any area, needs
// it). Reads reach every area; the library only when a search names it, as for
// everyone. Writes carry the call's session and message as their provenance,
// and the source Memory.As names ("plugin:NAME" when none). Memory.Client is
// the generated client, for the methods Memory does not wrap. examples/notebook
// is a complete plugin.
//
// # State keys
//
// A Key[T] binds a name to a protobuf message type T. The built-in keys are declared
// once, in state.proto, as an option on their message; KeyOf[T] reads it:
//
//	tracker := sdk.KeyOf[*exocortexv1.FailureTracker]() // "failure_tracker", session scope
//
// KeyOf panics when T's message carries no such option (NewServer turns that panic,
// raised in Spec, into an error naming the extension). A plugin's own key is
// declared with NewKey, any message type will do:
//
//	note := sdk.NewKey[*wrapperspb.StringValue]("my_note", exocortexv1.Scope_SCOPE_MONOLOGUE, "What my extension noted.")
//
// Keys are immutable values: build them in a function or a field, not a package
// variable. During a call, k.Get(c) returns the value the host sent (overlaid by the
// call's own changes: a Set is visible to a later Get, a Reset hides the value),
// k.Set(c, v) records a new value and k.Reset(c) clears the key. Values travel as
// google.protobuf.Any in HookCall.state and StateChanges. An extension may Get only
// keys in Spec.Reads and Set or Reset only keys in Spec.Writes; anything else is
// refused by the SDK as well as by the host: the access does nothing and the whole
// call fails with FailedPrecondition naming the extension and the key (Call.Err
// reports it early). Set with a nil value is refused the same way.
//
// # Tools
//
// A Tool's Run gets the arguments object as JSON ("{}" when empty) and returns a
// ToolResult. Its error is the tool's failure as the model sees it: it is put into
// ToolResult.error, not returned as an RPC error. Tools have no shared-state access
// in protocol v1 (ExecuteToolResponse carries no changes); an extension at
// tool_execute_before or tool_execute_after does that work.
//
// # Errors and panics
//
// What the host gets back, as gRPC status codes:
//
//   - the method's error: passed through if it is a gRPC status, else Unknown with
//     "extension NAME at HOOK: error";
//   - a panic in a method or a tool: Internal with "extension NAME panicked at HOOK:
//     value" and the first frames of the stack; the full stack is logged, and the
//     plugin keeps serving (a panic in a goroutine the extension starts itself still
//     kills the process);
//   - an undeclared state access, a nil Set, prompt blocks without InjectsPrompt:
//     FailedPrecondition;
//   - an unknown extension or tool: NotFound, listing what the plugin serves;
//   - a request without HookCall or a tool call with arguments that are not JSON:
//     InvalidArgument;
//   - a Manifest request for a protocol version other than ProtocolVersion (0 is
//     taken as ProtocolVersion): FailedPrecondition.
//
// # Serving and logging
//
// Serve validates the plugin, then hands it to go-plugin with the Exocortex handshake,
// gRPC only, and an hclog logger at Info level writing JSON to stderr, which
// go-plugin forwards into the host's log at each record's level. Call.Logger writes
// there too, through NewHostLogHandler, with the extension and hook attached. A
// plugin must never write to stdout (go-plugin's handshake line goes there).
//
// A serving plugin exits on its own within about ParentPollInterval once its host
// dies (go-plugin issue #136): see Serve.
//
// NewServer returns the same service for use in one process, e.g. to compare an
// in-process call with an out-of-process one. Package sdktest serves a plugin over a
// real gRPC connection inside a test, and builds plugin binaries for tests that start
// real processes.
package sdk
