// Package turn finds, in what a hook call carries, the messages a built-in
// extension reasons about: the operator's message of the current monologue, and
// the messages of a history that come from the operator rather than from the
// core (signals) or from tools.
package turn

import (
	"encoding/json"
	"strings"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

// IsOperator reports whether m is a message the operator wrote: role user,
// without a signal (the core's own messages carry one), and not from the core.
func IsOperator(m *exocortexv1.Message) bool {
	return m.GetRole() == "user" && m.GetSignal() == "" && m.GetSenderId() != "exocortex"
}

// UserMessage returns the operator's message the call relates to: the message
// named by the context's message_id among its recent messages, or else the last
// operator message there. It is nil when neither is present (a long monologue
// whose user message scrolled out of the recent messages).
func UserMessage(c *sdk.Call) *exocortexv1.Message {
	ctx := c.Context()
	recent := ctx.GetInteractionHistory().GetRecentMessages()
	id := ctx.GetMessageId()
	for i := len(recent) - 1; i >= 0; i-- {
		if m := recent[i]; m.GetId() == id && IsOperator(m) {
			return m
		}
	}
	return LastOperator(recent)
}

// LastOperator returns the last operator message of msgs, or nil.
func LastOperator(msgs []*exocortexv1.Message) *exocortexv1.Message {
	for i := len(msgs) - 1; i >= 0; i-- {
		if IsOperator(msgs[i]) {
			return msgs[i]
		}
	}
	return nil
}

// ArgsMap decodes a tool call's arguments object; nil when it is not an object.
func ArgsMap(tc *exocortexv1.ToolCall) map[string]any {
	var m map[string]any
	if err := json.Unmarshal([]byte(tc.GetArgsJson()), &m); err != nil {
		return nil
	}
	return m
}

// StringArg returns the first of names present in args as a string (numbers and
// booleans in their JSON form), and which name it was.
func StringArg(args map[string]any, names ...string) (string, string) {
	for _, n := range names {
		v, ok := args[n]
		if !ok {
			continue
		}
		switch x := v.(type) {
		case string:
			return x, n
		case nil:
			continue
		default:
			b, _ := json.Marshal(x)
			return string(b), n
		}
	}
	return "", ""
}

// Canonical renders a JSON arguments object with sorted keys and no spaces, so
// two calls with the same arguments compare equal however the model spaced them.
func Canonical(argsJSON string) string {
	var v any
	if err := json.Unmarshal([]byte(argsJSON), &v); err != nil {
		return strings.TrimSpace(argsJSON)
	}
	b, _ := json.Marshal(v) // encoding/json sorts map keys
	return string(b)
}
