// Command seamplugin is a fixture for the mistakes a plugin author porting
// Agent Zero extensions makes naturally (issue 12); prompttextplugin and
// pyprompttext are the others. Like lintplugin, it takes
// its personality from its file name, so one build copied under several names
// is several plugins, each making one mistake:
//
//   - countergate: extension retry_once counts in an Int32Value it reads and
//     sets at two hooks, a hand-rolled gate of another type (EXO091), and
//     nothing resets the counter (EXO051).
//   - structgate: extension catalog_once keeps its gate as a field of a Struct
//     it reads and sets at two hooks (EXO091).
//   - sharedgate: extensions memory_catalog_early and memory_catalog_late share
//     one BoolValue gate at two hooks, the seed's layout (EXO091).
//   - clearer: approval_gate sets a flag and approval_clear clears it (it
//     lists the flag in resets): no finding, and the clearer is not a setter.
//   - nearmiss: fail_counter writes fail_tracker, fail_advisor reads
//     fail_trackers (EXO035).
//   - clean: one extension that does nothing wrong.
package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/wrapperspb"
)

var session = exocortexv1.Scope_SCOPE_SESSION

// --- countergate ---

var retryCount = sdk.NewKey[*wrapperspb.Int32Value]("retry_count", session, "How often the retry ran this session.")

type retryOnce struct{}

func (e retryOnce) Spec() sdk.Spec {
	return sdk.Spec{Name: "retry_once", Hooks: []sdk.Hook{sdk.BeforeMainLLMCall(e), sdk.MessageLoopEnd(e)}, Order: 40, Reads: []sdk.KeyRef{retryCount}, Writes: []sdk.KeyRef{retryCount}}
}

func (retryOnce) bump(c *sdk.Call) bool {
	n, _ := retryCount.Get(c)
	if n.GetValue() > 0 {
		return false
	}
	retryCount.Set(c, wrapperspb.Int32(n.GetValue()+1))
	return true
}

func (r retryOnce) BeforeMainLLMCall(_ context.Context, c *sdk.Call, _ *exocortexv1.BeforeMainLLMCallRequest) (*exocortexv1.BeforeMainLLMCallResponse, error) {
	r.bump(c)
	return nil, nil
}

func (r retryOnce) MessageLoopEnd(_ context.Context, c *sdk.Call, _ *exocortexv1.MessageLoopEndRequest) (*exocortexv1.MessageLoopEndResponse, error) {
	r.bump(c)
	return nil, nil
}

// --- structgate ---

var catalogFlags = sdk.NewKey[*structpb.Struct]("catalog_flags", session, "What the catalog extension did this session.")

type catalogOnce struct{}

func (e catalogOnce) Spec() sdk.Spec {
	return sdk.Spec{Name: "catalog_once", Hooks: []sdk.Hook{sdk.BeforeMainLLMCall(e), sdk.MonologueEnd(e)}, Order: 18, Reads: []sdk.KeyRef{catalogFlags}, Writes: []sdk.KeyRef{catalogFlags}}
}

func (catalogOnce) mark(c *sdk.Call) {
	s, _ := catalogFlags.Get(c)
	if s.GetFields()["built"].GetBoolValue() {
		return
	}
	v, _ := structpb.NewStruct(map[string]any{"built": true})
	catalogFlags.Set(c, v)
}

func (o catalogOnce) BeforeMainLLMCall(_ context.Context, c *sdk.Call, _ *exocortexv1.BeforeMainLLMCallRequest) (*exocortexv1.BeforeMainLLMCallResponse, error) {
	o.mark(c)
	return nil, nil
}

func (o catalogOnce) MonologueEnd(_ context.Context, c *sdk.Call, _ *exocortexv1.MonologueEndRequest) (*exocortexv1.MonologueEndResponse, error) {
	o.mark(c)
	return nil, nil
}

// --- sharedgate ---

var catalogDone = sdk.NewKey[*wrapperspb.BoolValue]("memory_catalog_done", session, "The memory catalog was injected.")

type catalogEarly struct{}

func (e catalogEarly) Spec() sdk.Spec {
	return sdk.Spec{Name: "memory_catalog_early", Hooks: []sdk.Hook{sdk.BeforeMainLLMCall(e)}, Order: 18, Reads: []sdk.KeyRef{catalogDone}, Writes: []sdk.KeyRef{catalogDone}}
}

func (catalogEarly) BeforeMainLLMCall(_ context.Context, c *sdk.Call, _ *exocortexv1.BeforeMainLLMCallRequest) (*exocortexv1.BeforeMainLLMCallResponse, error) {
	if v, _ := catalogDone.Get(c); !v.GetValue() {
		catalogDone.Set(c, wrapperspb.Bool(true))
	}
	return nil, nil
}

type catalogLate struct{}

func (e catalogLate) Spec() sdk.Spec {
	return sdk.Spec{Name: "memory_catalog_late", Hooks: []sdk.Hook{sdk.MessageLoopEnd(e)}, Order: 18, Reads: []sdk.KeyRef{catalogDone}, Writes: []sdk.KeyRef{catalogDone}}
}

func (catalogLate) MessageLoopEnd(_ context.Context, c *sdk.Call, _ *exocortexv1.MessageLoopEndRequest) (*exocortexv1.MessageLoopEndResponse, error) {
	if v, _ := catalogDone.Get(c); !v.GetValue() {
		catalogDone.Set(c, wrapperspb.Bool(true))
	}
	return nil, nil
}

// --- clearer ---

var approvalPending = sdk.NewKey[*wrapperspb.BoolValue]("approval_pending", session, "A tool call waits for the operator.")

type approvalGate struct{}

func (e approvalGate) Spec() sdk.Spec {
	return sdk.Spec{Name: "approval_gate", Hooks: []sdk.Hook{sdk.ToolExecuteBefore(e)}, Order: 15, Writes: []sdk.KeyRef{approvalPending}}
}

func (approvalGate) ToolExecuteBefore(_ context.Context, c *sdk.Call, _ *exocortexv1.ToolExecuteBeforeRequest) (*exocortexv1.ToolExecuteBeforeResponse, error) {
	approvalPending.Set(c, wrapperspb.Bool(true))
	return nil, nil
}

type approvalClear struct{}

func (e approvalClear) Spec() sdk.Spec {
	return sdk.Spec{Name: "approval_clear", Hooks: []sdk.Hook{sdk.ToolExecuteAfter(e)}, Order: 20, Reads: []sdk.KeyRef{approvalPending},
		Writes: []sdk.KeyRef{approvalPending}, Resets: []sdk.KeyRef{approvalPending}}
}

func (approvalClear) ToolExecuteAfter(_ context.Context, c *sdk.Call, _ *exocortexv1.ToolExecuteAfterRequest) (*exocortexv1.ToolExecuteAfterResponse, error) {
	approvalPending.Set(c, wrapperspb.Bool(false)) // a clear, not a set
	return nil, nil
}

// --- nearmiss ---

var (
	failTracker  = sdk.NewKey[*wrapperspb.Int32Value]("fail_tracker", exocortexv1.Scope_SCOPE_MONOLOGUE, "Failures in a row.")
	failTrackers = sdk.NewKey[*wrapperspb.Int32Value]("fail_trackers", exocortexv1.Scope_SCOPE_MONOLOGUE, "Failures in a row (misspelt).")
)

type failCounter struct{}

func (e failCounter) Spec() sdk.Spec {
	return sdk.Spec{Name: "fail_counter", Hooks: []sdk.Hook{sdk.ErrorFormat(e)}, Order: 731, Writes: []sdk.KeyRef{failTracker}}
}

func (failCounter) ErrorFormat(_ context.Context, c *sdk.Call, _ *exocortexv1.ErrorFormatRequest) (*exocortexv1.ErrorFormatResponse, error) {
	failTracker.Set(c, wrapperspb.Int32(1))
	return nil, nil
}

type failAdvisor struct{}

func (e failAdvisor) Spec() sdk.Spec {
	return sdk.Spec{Name: "fail_advisor", Hooks: []sdk.Hook{sdk.ToolExecuteBefore(e)}, Order: 732, Reads: []sdk.KeyRef{failTrackers}}
}

func (failAdvisor) ToolExecuteBefore(_ context.Context, c *sdk.Call, _ *exocortexv1.ToolExecuteBeforeRequest) (*exocortexv1.ToolExecuteBeforeResponse, error) {
	failTrackers.Get(c)
	return nil, nil
}

// --- clean ---

type quiet struct{}

func (e quiet) Spec() sdk.Spec {
	return sdk.Spec{Name: "quiet", Hooks: []sdk.Hook{sdk.MonologueEnd(e)}, Order: 77}
}

func (quiet) MonologueEnd(context.Context, *sdk.Call, *exocortexv1.MonologueEndRequest) (*exocortexv1.MonologueEndResponse, error) {
	return nil, nil
}

func main() {
	name := strings.TrimSuffix(filepath.Base(os.Args[0]), filepath.Ext(os.Args[0]))
	exts := map[string][]sdk.Extension{
		"countergate": {retryOnce{}},
		"structgate":  {catalogOnce{}},
		"sharedgate":  {catalogEarly{}, catalogLate{}},
		"clearer":     {approvalGate{}, approvalClear{}},
		"nearmiss":    {failCounter{}, failAdvisor{}},
		"clean":       {quiet{}},
	}[name]
	sdk.Serve(sdk.Plugin{Name: name, Version: "test", Extensions: exts})
}
