// Package retry is the structured retry: when the model's reply is unusable, it
// writes the correction message the core sends back (error_format, order 20, as
// in the seed), fitted to what went wrong instead of one generic text. The core
// attaches the misformat signal to it whatever it says, so the supervisor keeps
// counting it.
//
// The fault is the core parser's (ErrorFormatRequest.fault); when a host does not
// send one, it is read from the reply itself, never from the parser's wording:
//
//	empty            nothing but whitespace
//	no_json_object   no "{" at all
//	truncated        a "{" whose braces never close
//	invalid_json     an object that does not parse
//	missing_tool     an object without tool_name (or tool)
//	bad_tool_args    tool_args that is not an object
//
// Each fault has its own correction (Correction). A reply in prose without any
// object gets the response tool's shape with its own first words filled in, so
// a model that answered in prose can resend its answer correctly. From the second
// failure in a row (failure_tracker, which the failure tracker increments after
// this extension, at order 30) the message adds that nothing may surround the
// object, and says which attempt it is. The parser's own error is quoted last.
package retry

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/exocortex/exocortex/extensions/internal/textfacts"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
	"github.com/exocortex/exocortex/signals"
)

// FormatKey is the failure_tracker entry of replies that named no tool (the
// failure tracker's).
const FormatKey = "reply_format"

// Faults.
const (
	FaultEmpty       = "empty"
	FaultNoObject    = "no_json_object"
	FaultTruncated   = "truncated"
	FaultInvalidJSON = "invalid_json"
	FaultMissingTool = "missing_tool"
	FaultBadArgs     = "bad_tool_args"
)

func tracker() sdk.Key[*exocortexv1.FailureTracker] { return sdk.KeyOf[*exocortexv1.FailureTracker]() }

// Fault classifies an unusable reply.
func Fault(reply string) string {
	t := strings.TrimSpace(reply)
	if t == "" {
		return FaultEmpty
	}
	start := strings.IndexByte(t, '{')
	if start < 0 {
		return FaultNoObject
	}
	depth, inStr, esc := 0, false, false
	end := -1
	for i := start; i < len(t); i++ {
		ch := t[i]
		switch {
		case esc:
			esc = false
		case inStr && ch == '\\':
			esc = true
		case ch == '"':
			inStr = !inStr
		case inStr:
		case ch == '{':
			depth++
		case ch == '}':
			depth--
			if depth == 0 {
				end = i
			}
		}
		if end >= 0 {
			break
		}
	}
	if end < 0 {
		return FaultTruncated
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal([]byte(t[start:end+1]), &obj); err != nil {
		return FaultInvalidJSON
	}
	if _, ok := obj["tool_name"]; !ok {
		if _, ok := obj["tool"]; !ok {
			return FaultMissingTool
		}
	}
	if a, ok := obj["tool_args"]; ok && !strings.HasPrefix(strings.TrimSpace(string(a)), "{") {
		return FaultBadArgs
	}
	return FaultInvalidJSON
}

// Correction is the message for a reply with the given fault; attempt counts the
// unusable replies in a row (1 for the first).
func Correction(reply, fault, tool, parserError string, attempt int) string {
	if tool == "" {
		tool = "TOOL_NAME"
	}
	shape := fmt.Sprintf(`{"thoughts": ["..."], "headline": "...", "tool_name": %q, "tool_args": {...}}`, tool)
	var b strings.Builder
	if attempt >= 2 {
		fmt.Fprintf(&b, "Attempt %d: your last %d replies could not be used. ", attempt, attempt)
	}
	switch fault {
	case FaultEmpty:
		b.WriteString("Your reply was empty. Reply with one JSON object: " + shape)
	case FaultNoObject:
		prose := textfacts.Shorten(strings.TrimSpace(reply), 200)
		answer, _ := json.Marshal(map[string]any{
			"thoughts": []string{"I have the answer."}, "headline": "Answering", "tool_name": "response",
			"tool_args": map[string]string{"text": prose},
		})
		b.WriteString("You wrote prose instead of a JSON tool request. If that was your final answer, send it with the response tool, like this:\n")
		b.Write(answer)
		b.WriteString("\nIf you meant to use a tool, send: " + shape)
	case FaultTruncated:
		b.WriteString("Your reply was cut off before its JSON object ended (it was probably too long). Send a shorter reply: one or two sentences of thoughts; write long file content in parts (text_editor write, then patch).")
	case FaultMissingTool:
		b.WriteString(`Your JSON object had no "tool_name". Every reply names one tool: ` + shape)
	case FaultBadArgs:
		b.WriteString(`"tool_args" must be a JSON object of named arguments, such as {"path": "notes.md"}. Send: ` + shape)
	default:
		b.WriteString("Your JSON was not valid. Usual causes: a quote or a newline inside a string that is not escaped (write \\\" and \\n), a trailing comma, a comment. Send it again as valid JSON: " + shape)
	}
	if attempt >= 2 {
		b.WriteString("\nSend the JSON object only: no text and no code fence before or after it.")
	}
	if parserError != "" {
		b.WriteString("\n(Parser: " + parserError + ")")
	}
	return b.String()
}

// Structured is the structured-retry extension.
type Structured struct{}

// Spec declares it.
func (e Structured) Spec() sdk.Spec {
	return sdk.Spec{
		Name:            "structured_retry",
		Hooks:           []sdk.Hook{sdk.ErrorFormat(e)},
		Order:           20,
		Reads:           []sdk.KeyRef{tracker()},
		ConsumesSignals: []string{signals.Misformat},
		Description:     "Writes the correction for an unusable reply from its fault (empty, prose, cut off, invalid JSON, no tool, bad arguments), stricter from the second failure.",
		EffectsDeclared: true,
	}
}

// ErrorFormat returns the correction.
func (Structured) ErrorFormat(_ context.Context, c *sdk.Call, req *exocortexv1.ErrorFormatRequest) (*exocortexv1.ErrorFormatResponse, error) {
	ft, _ := tracker().Get(c)
	name := req.GetToolName()
	if name == "" {
		name = FormatKey
	}
	attempt := int(ft.GetFailures()[name]) + 1
	fault := req.GetFault()
	switch fault {
	case "":
		fault = Fault(req.GetReply())
	case "missing_tool_name":
		fault = FaultMissingTool
	}
	msg := Correction(req.GetReply(), fault, req.GetToolName(), req.GetError(), attempt)
	return &exocortexv1.ErrorFormatResponse{Correction: &msg}, nil
}
