// Package hooktest builds the hook calls the built-in extensions' tests send
// through sdktest's real gRPC connection: a HookCall with recent messages, a
// message id and state, as core/loop would send it.
package hooktest

import (
	"fmt"
	"testing"

	"google.golang.org/protobuf/proto"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// Call is sdktest.Call with the given recent messages; the context's message_id
// is the last operator message's, and iteration is set.
func Call(ext string, iteration int32, recent []*exocortexv1.Message, state ...*exocortexv1.StateEntry) *exocortexv1.HookCall {
	c := sdktest.Call(ext, state...)
	c.Context.Iteration = iteration
	c.Context.InteractionHistory = &exocortexv1.InteractionHistory{RecentMessages: recent}
	for i := len(recent) - 1; i >= 0; i-- {
		if recent[i].GetRole() == "user" && recent[i].GetSignal() == "" {
			c.Context.MessageId = recent[i].GetId()
			break
		}
	}
	return c
}

// RecentCount is how many messages the host puts in the context (core/loop's
// default).
const RecentCount = 10

// Recent is the tail of hist the host puts in the context's recent messages.
func Recent(hist []*exocortexv1.Message) []*exocortexv1.Message {
	if n := len(hist) - RecentCount; n > 0 {
		return hist[n:]
	}
	return hist
}

// History is what the host puts in the history (or prompt) field of a request
// to ext: hist when ext's Spec declares ReadsHistory, nothing otherwise.
func History(ext sdk.Extension, hist []*exocortexv1.Message) []*exocortexv1.Message {
	if ext.Spec().ReadsHistory {
		return hist
	}
	return nil
}

// Msgs builds messages from role/content pairs: "user", "text", "tool:NAME",
// "output", "assistant", "reply", "signal:NAME", "text"... Ids are m1, m2, ...
func Msgs(pairs ...string) []*exocortexv1.Message {
	var out []*exocortexv1.Message
	for i := 0; i+1 < len(pairs); i += 2 {
		m := &exocortexv1.Message{Id: fmt.Sprintf("m%d", i/2+1), Content: pairs[i+1]}
		role := pairs[i]
		switch {
		case len(role) > 5 && role[:5] == "tool:":
			m.Role, m.ToolName, m.SenderId = "tool", role[5:], role[5:]
		case len(role) > 7 && role[:7] == "signal:":
			m.Role, m.Signal, m.SenderId = "user", role[7:], "exocortex"
		case role == "user":
			m.Role, m.SenderId = "user", "operator"
		default:
			m.Role, m.SenderId = role, "agent0"
		}
		out = append(out, m)
	}
	return out
}

// Entry is sdktest.State for any key.
func Entry[T proto.Message](k sdk.Key[T], v T) *exocortexv1.StateEntry { return sdktest.State(k, v) }

// Must fails the test on err.
func Must[T any](t testing.TB, v T, err error) T {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
	return v
}
