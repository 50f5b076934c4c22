// Command notebook is an example plugin that keeps notes in Exocortex's
// long-term memory through the host: the memory any plugin gets, the same the
// built-in memory extensions use.
//
// README: build with `go build -o ~/.exocortex/plugins/notebook ./examples/notebook`;
// the host starts it. Its manifest declares uses_memory and the one area it
// writes, "notes" (sdk.Plugin.UsesMemory, MemoryWriteAreas); the host refuses a
// write to any other area, and every memory call of a plugin that does not
// declare uses_memory, with an error naming the plugin, the area and the field.
// Reads reach every area (the library only when named).
//
//   - note_add {text, tags?, area?} saves a note (in "notes" unless area names
//     another: to show the refusal) and answers "Noted as ID in area AREA.";
//   - note_find {query, limit?} searches the notes and answers one line per hit,
//     best first: "ID: TEXT (why: ...)", or "No note matches QUERY.".
//
// NOTEBOOK_UNDECLARED=1 in its environment leaves uses_memory out of the
// manifest, to see the host refuse it.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

// Area is the memory area the notes are kept in.
const Area = "notes"

type addArgs struct {
	Text string   `json:"text"`
	Tags []string `json:"tags"`
	Area string   `json:"area"`
}

// noteAdd saves one note. Its writes carry the call's session and message,
// and the source "tool:note_add".
func noteAdd(ctx context.Context, c *sdk.Call, raw json.RawMessage) (*exocortexv1.ToolResult, error) {
	var a addArgs
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, fmt.Errorf("note_add: the arguments are not {text, tags, area}: %w", err)
	}
	if strings.TrimSpace(a.Text) == "" {
		return nil, fmt.Errorf(`note_add: "text" is empty: write the note`)
	}
	area := a.Area
	if area == "" {
		area = Area
	}
	recs, err := c.Memory().As("tool:note_add").Save(ctx, &exocortexv1.MemoryInput{Area: area, Text: a.Text, Tags: a.Tags})
	if err != nil {
		return nil, fmt.Errorf("note_add: %w", err)
	}
	return &exocortexv1.ToolResult{Content: fmt.Sprintf("Noted as %s in area %s.", recs[0].GetId(), recs[0].GetArea())}, nil
}

type findArgs struct {
	Query string `json:"query"`
	Limit int32  `json:"limit"`
}

// noteFind searches the notes area.
func noteFind(ctx context.Context, c *sdk.Call, raw json.RawMessage) (*exocortexv1.ToolResult, error) {
	var a findArgs
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, fmt.Errorf("note_find: the arguments are not {query, limit}: %w", err)
	}
	if a.Limit <= 0 {
		a.Limit = 5
	}
	res, err := c.Memory().Search(ctx, a.Query, &exocortexv1.MemorySearchOptions{Limit: a.Limit,
		Filter: &exocortexv1.MemoryFilter{Areas: []string{Area}}})
	if err != nil {
		return nil, fmt.Errorf("note_find: %w", err)
	}
	if len(res.GetHits()) == 0 {
		return &exocortexv1.ToolResult{Content: fmt.Sprintf("No note matches %q.", a.Query)}, nil
	}
	var b strings.Builder
	for i, h := range res.GetHits() {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%s: %s (why: %s)", h.GetRecord().GetId(), h.GetRecord().GetText(), h.GetWhy())
	}
	return &exocortexv1.ToolResult{Content: b.String()}, nil
}

func plugin() sdk.Plugin {
	declared := os.Getenv("NOTEBOOK_UNDECLARED") != "1"
	p := sdk.Plugin{
		Name:    "notebook",
		Version: "1.0.0",
		Tools: []sdk.Tool{{
			Name:        "note_add",
			Description: "Keep a note in long-term memory (area notes).",
			Parameters:  `{"type":"object","properties":{"text":{"type":"string"},"tags":{"type":"array","items":{"type":"string"}},"area":{"type":"string"}},"required":["text"]}`,
			Run:         noteAdd,
		}, {
			Name:        "note_find",
			Description: "Search the notes kept with note_add; says why each matched.",
			Parameters:  `{"type":"object","properties":{"query":{"type":"string"},"limit":{"type":"integer","minimum":1}},"required":["query"]}`,
			Run:         noteFind,
		}},
	}
	if declared {
		p.UsesMemory, p.MemoryWriteAreas = true, []string{Area}
	}
	return p
}

func main() { sdk.Serve(plugin()) }
