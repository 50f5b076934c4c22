// Package display decides what the operator's view shows of the model's reply
// while it streams and once it is complete, instead of raw JSON.
//
// Plain-text response (response_stream_chunk, order 21, as in the seed), for
// every streamed piece:
//   - a reply that does not start (after an optional ``` fence) with "{" is
//     prose: it is shown as it is, so a model answering without the JSON format
//     is visible at once rather than after the correction;
//   - a JSON reply in progress is shown as its headline, or its first thought,
//     as far as they have arrived ("…" while neither has).
//
// Clear generating content (response_stream_end, order 20, as in the seed): the
// complete reply is shown as its headline, its thoughts as a list and the tool it
// calls with its arguments shortened; prose is shown as it is. A reply that is
// not valid JSON keeps its raw text (the correction will explain it).
package display

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"

	"github.com/exocortex/exocortex/extensions/internal/textfacts"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

var (
	fenceRE = regexp.MustCompile("^```[a-zA-Z]*\\s*")
	fieldRE = map[string]*regexp.Regexp{
		"headline": regexp.MustCompile(`"headline"\s*:\s*"`),
		"thoughts": regexp.MustCompile(`"thoughts"\s*:\s*\[\s*"`),
	}
)

// isJSON reports whether a reply (so far) is a JSON object, and returns it
// without a leading code fence.
func isJSON(text string) (string, bool) {
	t := fenceRE.ReplaceAllString(strings.TrimSpace(text), "")
	return t, strings.HasPrefix(t, "{")
}

// partialString reads the string value of field in partial JSON, up to its
// closing quote or the end of what has arrived.
func partialString(text, field string) (string, bool) {
	loc := fieldRE[field].FindStringIndex(text)
	if loc == nil {
		return "", false
	}
	var b strings.Builder
	esc := false
	for _, r := range text[loc[1]:] {
		switch {
		case esc:
			switch r {
			case 'n':
				b.WriteRune(' ')
			default:
				b.WriteRune(r)
			}
			esc = false
		case r == '\\':
			esc = true
		case r == '"':
			return b.String(), true
		default:
			b.WriteRune(r)
		}
	}
	return b.String(), true
}

// Streaming is the display of a reply in progress.
func Streaming(text string) string {
	t, ok := isJSON(text)
	if !ok {
		return text
	}
	if h, ok := partialString(t, "headline"); ok && h != "" {
		return "▸ " + h
	}
	if th, ok := partialString(t, "thoughts"); ok && th != "" {
		return "… " + th
	}
	return "…"
}

// Final is the display of a complete reply.
func Final(text string) string {
	t, ok := isJSON(text)
	if !ok {
		return strings.TrimSpace(text)
	}
	end := strings.LastIndexByte(t, '}')
	var r struct {
		Thoughts []string       `json:"thoughts"`
		Headline string         `json:"headline"`
		ToolName string         `json:"tool_name"`
		Tool     string         `json:"tool"`
		ToolArgs map[string]any `json:"tool_args"`
	}
	if end < 0 || json.Unmarshal([]byte(t[:end+1]), &r) != nil {
		return text
	}
	var b strings.Builder
	if r.Headline != "" {
		b.WriteString(r.Headline + "\n")
	}
	for _, th := range r.Thoughts {
		b.WriteString("• " + th + "\n")
	}
	name := r.ToolName
	if name == "" {
		name = r.Tool
	}
	if name != "" {
		keys := make([]string, 0, len(r.ToolArgs))
		for k := range r.ToolArgs {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		var args []string
		for _, k := range keys {
			v, _ := json.Marshal(r.ToolArgs[k])
			args = append(args, k+"="+textfacts.Shorten(string(v), 60))
		}
		fmt.Fprintf(&b, "→ %s(%s)", name, strings.Join(args, ", "))
	}
	return strings.TrimSpace(b.String())
}

// PlainText is the plain-text response extension.
type PlainText struct{}

// Spec declares it.
func (e PlainText) Spec() sdk.Spec {
	return sdk.Spec{Name: "plain_text_response", Hooks: []sdk.Hook{sdk.ResponseStreamChunk(e)}, Order: 21,
		EffectsDeclared: true,
		Description:     "Shows a prose reply as it streams, and a JSON reply as its headline so far."}
}

// ResponseStreamChunk sets the display.
func (PlainText) ResponseStreamChunk(_ context.Context, _ *sdk.Call, req *exocortexv1.ResponseStreamChunkRequest) (*exocortexv1.ResponseStreamChunkResponse, error) {
	d := Streaming(req.GetText())
	return &exocortexv1.ResponseStreamChunkResponse{Display: &d}, nil
}

// ClearGenerating is the clear-generating-content extension.
type ClearGenerating struct{}

// Spec declares it.
func (e ClearGenerating) Spec() sdk.Spec {
	return sdk.Spec{Name: "clear_generating_content", Hooks: []sdk.Hook{sdk.ResponseStreamEnd(e)}, Order: 20,
		EffectsDeclared: true,
		Description:     "Replaces the raw JSON of a complete reply in the operator's view by its headline, thoughts and tool call."}
}

// ResponseStreamEnd sets the display.
func (ClearGenerating) ResponseStreamEnd(_ context.Context, _ *sdk.Call, req *exocortexv1.ResponseStreamEndRequest) (*exocortexv1.ResponseStreamEndResponse, error) {
	d := Final(req.GetText())
	return &exocortexv1.ResponseStreamEndResponse{Display: &d}, nil
}
