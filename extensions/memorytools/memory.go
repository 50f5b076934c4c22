package memorytools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/exocortex/exocortex/extensions/internal/toolargs"
	"github.com/exocortex/exocortex/memory"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

// Tools returns every tool of the package, sorted by name.
func (st *Stores) Tools() []sdk.Tool {
	return []sdk.Tool{
		st.LibraryAdd(), st.LibraryList(), st.LibrarySearch(),
		st.MemoryDelete(), st.MemoryForget(), st.MemoryLoad(), st.MemoryRetrieve(), st.MemorySave(),
	}
}

// source is the provenance of a change made by a tool call.
func source(c *sdk.Call) memory.Source {
	ctx := c.Context()
	return memory.Source{Session: ctx.GetSessionId(), Message: ctx.GetMessageId()}
}

// run is the common shape of the tools: decode the arguments into a fresh T, use
// the store, answer text.
func run[T any](st *Stores, name string, fn func(ctx context.Context, c *sdk.Call, s *memory.Store, a *T) (string, error)) func(context.Context, *sdk.Call, json.RawMessage) (*exocortexv1.ToolResult, error) {
	return func(ctx context.Context, c *sdk.Call, raw json.RawMessage) (*exocortexv1.ToolResult, error) {
		a := new(T)
		if err := toolargs.Decode(name, raw, a); err != nil {
			return nil, err
		}
		var out string
		err := st.Use(ctx, func(s *memory.Store) error {
			var err error
			out, err = fn(ctx, c, s, a)
			return err
		})
		st.ReportEmbeddingChange(ctx, c)
		if err != nil {
			if strings.HasPrefix(err.Error(), name+":") {
				return nil, err
			}
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return &exocortexv1.ToolResult{Content: out}, nil
	}
}

type saveArgs struct {
	Key   toolargs.Text    `json:"key"`
	Value toolargs.Text    `json:"value"`
	Text  toolargs.Text    `json:"text"`
	Tags  toolargs.Strings `json:"tags"`
	Area  toolargs.Text    `json:"area"`
}

// inArea is the memory area a keyed tool call names: "" for main, the default
// (ECHOMEN's tools know main only; Agent Zero's memory also keeps fragments and
// solutions, which a ported extension writes through the host's UseMemory).
func inArea(a toolargs.Text) (string, error) {
	area := strings.TrimSpace(string(a))
	if area == "" || area == memory.AreaMain {
		return "", nil
	}
	if err := memory.ValidArea(area); err != nil {
		return "", err
	}
	return area, nil
}

// toolSrc is the provenance of a record a tool writes outside the main area.
func toolSrc(c *sdk.Call, tool string) memory.Source {
	src := source(c)
	src.Source = "tool:" + tool
	return src
}

// MemorySave is ECHOMEN's memory_save.
func (st *Stores) MemorySave() sdk.Tool {
	return sdk.Tool{
		Name:        "memory_save",
		Description: "Store a value under a unique key, with tags, in long-term memory (saving an existing key replaces its value).",
		Parameters: `{"type":"object","properties":{` +
			`"key":{"type":"string","description":"Unique identifier, e.g. \"user_project_goals\"."},` +
			`"value":{"type":"string","description":"The content to store (text or a JSON string)."},` +
			`"tags":{"type":"array","items":{"type":"string"},"description":"Categories, e.g. [\"project\", \"user_pref\"]."},` +
			`"area":{"type":"string","description":"Optional memory area: main (the default), fragments or solutions."}},` +
			`"required":["key","value"]}`,
		PromptFile: "agent.system.tool.memory_save.md",
		Run: run(st, "memory_save", func(ctx context.Context, c *sdk.Call, s *memory.Store, a *saveArgs) (string, error) {
			value := a.Value
			if value == "" {
				value = a.Text
			}
			area, err := inArea(a.Area)
			if err != nil {
				return "", fmt.Errorf("memory_save: %w", err)
			}
			if area == "" {
				return s.MemorySave(ctx, string(a.Key), string(value), a.Tags, source(c))
			}
			key := strings.TrimSpace(string(a.Key))
			if key == "" || strings.TrimSpace(string(value)) == "" {
				return "", fmt.Errorf("memory_save: key and value are required (area %s)", area)
			}
			if _, err := s.Put(ctx, memory.Input{Area: area, Key: key, Text: string(value), Tags: a.Tags}, toolSrc(c, "memory_save")); err != nil {
				return "", fmt.Errorf("memory_save: %w", err)
			}
			return fmt.Sprintf("Memory item '%s' saved successfully in area %s.", key, area), nil
		}),
	}
}

type retrieveArgs struct {
	Key  toolargs.Text    `json:"key"`
	Tags toolargs.Strings `json:"tags"`
}

// MemoryRetrieve is ECHOMEN's memory_retrieve.
func (st *Stores) MemoryRetrieve() sdk.Tool {
	return sdk.Tool{
		Name:        "memory_retrieve",
		Description: "Get a stored value by its key, or the values carrying any of the given tags (a JSON array when several match).",
		Parameters: `{"type":"object","properties":{` +
			`"key":{"type":"string","description":"The key the value was saved under."},` +
			`"tags":{"type":"array","items":{"type":"string"},"description":"Return the items carrying any of these tags."}},` +
			`"anyOf":[{"required":["key"]},{"required":["tags"]}]}`,
		PromptFile: "agent.system.tool.memory_retrieve.md",
		Run: run(st, "memory_retrieve", func(ctx context.Context, _ *sdk.Call, s *memory.Store, a *retrieveArgs) (string, error) {
			return s.MemoryRetrieve(ctx, string(a.Key), a.Tags)
		}),
	}
}

type deleteArgs struct {
	Key  toolargs.Text `json:"key"`
	Area toolargs.Text `json:"area"`
}

// MemoryDelete is ECHOMEN's memory_delete.
func (st *Stores) MemoryDelete() sdk.Tool {
	return sdk.Tool{
		Name:        "memory_delete",
		Description: "Delete the stored value with the given key.",
		Parameters: `{"type":"object","properties":{"key":{"type":"string","description":"The key of the item to delete."},` +
			`"area":{"type":"string","description":"Optional memory area the key is in: main (the default), fragments or solutions."}},"required":["key"]}`,
		PromptFile: "agent.system.tool.memory_delete.md",
		Run: run(st, "memory_delete", func(ctx context.Context, c *sdk.Call, s *memory.Store, a *deleteArgs) (string, error) {
			area, err := inArea(a.Area)
			if err != nil {
				return "", fmt.Errorf("memory_delete: %w", err)
			}
			if area == "" {
				return s.MemoryDelete(ctx, string(a.Key), source(c))
			}
			key := strings.TrimSpace(string(a.Key))
			r, ok := s.GetByKey(ctx, area, key)
			if !ok {
				return "", fmt.Errorf("memory_delete: no memory item with key '%s' in area %s", key, area)
			}
			if err := s.Delete(ctx, r.ID, "memory_delete", toolSrc(c, "memory_delete")); err != nil {
				return "", fmt.Errorf("memory_delete: %w", err)
			}
			return fmt.Sprintf("Memory item '%s' deleted successfully from area %s.", key, area), nil
		}),
	}
}

type loadArgs struct {
	Query     toolargs.Text  `json:"query"`
	Threshold toolargs.Float `json:"threshold"`
	Limit     toolargs.Int   `json:"limit"`
	Filter    toolargs.Text  `json:"filter"`
}

// MemoryLoad is Agent Zero's memory_load.
func (st *Stores) MemoryLoad() sdk.Tool {
	return sdk.Tool{
		Name:        "memory_load",
		Description: "Search long-term memory for what is similar to a query; returns the matching memories with their ids.",
		Parameters: `{"type":"object","properties":{` +
			`"query":{"type":"string","description":"What to look for, in words."},` +
			`"threshold":{"type":"number","minimum":0,"maximum":1,"description":"Minimum similarity, 0 to 1 (default 0.7)."},` +
			`"limit":{"type":"integer","minimum":1,"description":"Most memories to return (default 10)."},` +
			`"filter":{"type":"string","description":"Optional filter expression, e.g. \"area == 'main' and 'project' in tags\"."}},` +
			`"required":["query"]}`,
		PromptFile: "agent.system.tool.memory_load.md",
		Run: run(st, "memory_load", func(ctx context.Context, c *sdk.Call, s *memory.Store, a *loadArgs) (string, error) {
			if strings.TrimSpace(string(a.Query)) == "" {
				return "", fmt.Errorf(`memory_load: "query" is empty: say what to look for`)
			}
			return s.MemoryLoad(ctx, string(a.Query), a.Threshold.V, a.Limit.V, string(a.Filter), source(c))
		}),
	}
}

type forgetArgs struct {
	Query     toolargs.Text  `json:"query"`
	Threshold toolargs.Float `json:"threshold"`
	Filter    toolargs.Text  `json:"filter"`
}

// MemoryForget is Agent Zero's memory_forget.
func (st *Stores) MemoryForget() sdk.Tool {
	return sdk.Tool{
		Name:        "memory_forget",
		Description: "Delete every memory similar to a query (above a threshold); says how many were deleted.",
		Parameters: `{"type":"object","properties":{` +
			`"query":{"type":"string","description":"What to forget, in words."},` +
			`"threshold":{"type":"number","minimum":0,"maximum":1,"description":"Minimum similarity, 0 to 1 (default 0.75)."},` +
			`"filter":{"type":"string","description":"Optional filter expression limiting what may be deleted."}},` +
			`"required":["query"]}`,
		PromptFile: "agent.system.tool.memory_forget.md",
		Run: run(st, "memory_forget", func(ctx context.Context, c *sdk.Call, s *memory.Store, a *forgetArgs) (string, error) {
			if strings.TrimSpace(string(a.Query)) == "" {
				return "", fmt.Errorf(`memory_forget: "query" is empty: say what to forget`)
			}
			before := len(s.List(ctx, memory.Filter{Areas: []string{memory.AreaLibrary}}))
			out, err := s.MemoryForget(ctx, string(a.Query), a.Threshold.V, string(a.Filter), source(c))
			if err != nil {
				return "", err
			}
			// A filter naming the library may have deleted documents: keep the
			// catalog in step.
			if len(s.List(ctx, memory.Filter{Areas: []string{memory.AreaLibrary}})) != before {
				if err := st.writeCatalog(ctx, s); err != nil {
					return "", err
				}
			}
			return out, nil
		}),
	}
}
