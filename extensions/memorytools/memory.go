package memorytools

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/exocortex/exocortex/extensions/internal/toolargs"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

// Tools returns every tool of the package, sorted by name.
func (st *Set) Tools() []sdk.Tool {
	return []sdk.Tool{
		st.LibraryAdd(), st.LibraryList(), st.LibrarySearch(),
		st.MemoryDelete(), st.MemoryForget(), st.MemoryLoad(), st.MemoryRetrieve(), st.MemorySave(),
	}
}

// tool is the memory as the call of a tool reaches it: its writes are
// attributed to "tool:NAME" and the call's session and message.
type tool struct {
	mem *sdk.Memory
	cl  exocortexv1.MemoryServiceClient
}

// run is the common shape of the tools: decode the arguments into a fresh T, reach
// the memory service, answer text. An error is prefixed with the tool's name
// once.
func run[T any](name string, fn func(ctx context.Context, m tool, a *T) (string, error)) func(context.Context, *sdk.Call, json.RawMessage) (*exocortexv1.ToolResult, error) {
	return func(ctx context.Context, c *sdk.Call, raw json.RawMessage) (*exocortexv1.ToolResult, error) {
		a := new(T)
		if err := toolargs.Decode(name, raw, a); err != nil {
			return nil, err
		}
		mem := c.Memory().As("tool:" + name)
		cl, err := mem.Client()
		var out string
		if err == nil {
			out, err = fn(ctx, tool{mem: mem, cl: cl}, a)
		}
		if err != nil {
			err = plain(err)
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

// areaRE is the form of an area name (memory.ValidArea's).
var areaRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// inArea is the memory area a keyed tool call names: "" for main, the default
// (ECHOMEN's tools know main only; Agent Zero's memory also keeps fragments and
// solutions, which a ported extension writes through the host's UseMemory).
func inArea(a toolargs.Text) (string, error) {
	area := strings.TrimSpace(string(a))
	if area == "" || area == AreaMain {
		return "", nil
	}
	if !areaRE.MatchString(area) {
		return "", fmt.Errorf("area %q is not valid: use lower-case letters, digits, '-' or '_' (at most 64), e.g. %s", area, AreaMain)
	}
	return area, nil
}

// MemorySave is ECHOMEN's memory_save.
func (st *Set) MemorySave() sdk.Tool {
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
		Run: run("memory_save", func(ctx context.Context, m tool, a *saveArgs) (string, error) {
			value := a.Value
			if value == "" {
				value = a.Text
			}
			area, err := inArea(a.Area)
			if err != nil {
				return "", fmt.Errorf("memory_save: %w", err)
			}
			if area == "" {
				r, err := m.cl.ToolSave(ctx, &exocortexv1.MemoryToolSaveRequest{Key: string(a.Key), Value: string(value), Tags: a.Tags, Source: m.mem.Source()})
				return r.GetText(), err
			}
			key := strings.TrimSpace(string(a.Key))
			if key == "" || strings.TrimSpace(string(value)) == "" {
				return "", fmt.Errorf("memory_save: key and value are required (area %s)", area)
			}
			if _, err := m.cl.Save(ctx, &exocortexv1.MemorySaveRequest{Records: []*exocortexv1.MemoryInput{{Area: area, Key: key, Text: string(value), Tags: a.Tags}},
				Source: m.mem.Source()}); err != nil {
				return "", fmt.Errorf("memory_save: %w", plain(err))
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
func (st *Set) MemoryRetrieve() sdk.Tool {
	return sdk.Tool{
		Name:        "memory_retrieve",
		Description: "Get a stored value by its key, or the values carrying any of the given tags (a JSON array when several match).",
		Parameters: `{"type":"object","properties":{` +
			`"key":{"type":"string","description":"The key the value was saved under."},` +
			`"tags":{"type":"array","items":{"type":"string"},"description":"Return the items carrying any of these tags."}},` +
			`"anyOf":[{"required":["key"]},{"required":["tags"]}]}`,
		PromptFile: "agent.system.tool.memory_retrieve.md",
		Run: run("memory_retrieve", func(ctx context.Context, m tool, a *retrieveArgs) (string, error) {
			r, err := m.cl.ToolRetrieve(ctx, &exocortexv1.MemoryToolRetrieveRequest{Key: string(a.Key), Tags: a.Tags})
			return r.GetText(), err
		}),
	}
}

type deleteArgs struct {
	Key  toolargs.Text `json:"key"`
	Area toolargs.Text `json:"area"`
}

// MemoryDelete is ECHOMEN's memory_delete.
func (st *Set) MemoryDelete() sdk.Tool {
	return sdk.Tool{
		Name:        "memory_delete",
		Description: "Delete the stored value with the given key.",
		Parameters: `{"type":"object","properties":{"key":{"type":"string","description":"The key of the item to delete."},` +
			`"area":{"type":"string","description":"Optional memory area the key is in: main (the default), fragments or solutions."}},"required":["key"]}`,
		PromptFile: "agent.system.tool.memory_delete.md",
		Run: run("memory_delete", func(ctx context.Context, m tool, a *deleteArgs) (string, error) {
			area, err := inArea(a.Area)
			if err != nil {
				return "", fmt.Errorf("memory_delete: %w", err)
			}
			if area == "" {
				r, err := m.cl.ToolDelete(ctx, &exocortexv1.MemoryToolDeleteRequest{Key: string(a.Key), Source: m.mem.Source()})
				return r.GetText(), err
			}
			key := strings.TrimSpace(string(a.Key))
			g, err := m.cl.Get(ctx, &exocortexv1.MemoryGetRequest{Area: area, Key: key})
			if err != nil {
				return "", fmt.Errorf("memory_delete: %w", plain(err))
			}
			if !g.GetFound() {
				return "", fmt.Errorf("memory_delete: no memory item with key '%s' in area %s", key, area)
			}
			if _, err := m.cl.Delete(ctx, &exocortexv1.MemoryDeleteRequest{Id: g.GetRecord().GetId(), Reason: "memory_delete", Source: m.mem.Source()}); err != nil {
				return "", fmt.Errorf("memory_delete: %w", plain(err))
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
func (st *Set) MemoryLoad() sdk.Tool {
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
		Run: run("memory_load", func(ctx context.Context, m tool, a *loadArgs) (string, error) {
			if strings.TrimSpace(string(a.Query)) == "" {
				return "", fmt.Errorf(`memory_load: "query" is empty: say what to look for`)
			}
			r, err := m.cl.ToolLoad(ctx, &exocortexv1.MemoryToolLoadRequest{Query: string(a.Query), Threshold: a.Threshold.V, Limit: int32(a.Limit.V),
				Filter: string(a.Filter), Source: m.mem.Source()})
			return r.GetText(), err
		}),
	}
}

type forgetArgs struct {
	Query     toolargs.Text  `json:"query"`
	Threshold toolargs.Float `json:"threshold"`
	Filter    toolargs.Text  `json:"filter"`
}

// MemoryForget is Agent Zero's memory_forget.
func (st *Set) MemoryForget() sdk.Tool {
	return sdk.Tool{
		Name:        "memory_forget",
		Description: "Delete every memory similar to a query (above a threshold); says how many were deleted.",
		Parameters: `{"type":"object","properties":{` +
			`"query":{"type":"string","description":"What to forget, in words."},` +
			`"threshold":{"type":"number","minimum":0,"maximum":1,"description":"Minimum similarity, 0 to 1 (default 0.75)."},` +
			`"filter":{"type":"string","description":"Optional filter expression limiting what may be deleted."}},` +
			`"required":["query"]}`,
		PromptFile: "agent.system.tool.memory_forget.md",
		Run: run("memory_forget", func(ctx context.Context, m tool, a *forgetArgs) (string, error) {
			if strings.TrimSpace(string(a.Query)) == "" {
				return "", fmt.Errorf(`memory_forget: "query" is empty: say what to forget`)
			}
			before, err := libraryCount(ctx, m.cl)
			if err != nil {
				return "", err
			}
			r, err := m.cl.ToolForget(ctx, &exocortexv1.MemoryToolForgetRequest{Query: string(a.Query), Threshold: a.Threshold.V,
				Filter: string(a.Filter), Source: m.mem.Source()})
			if err != nil {
				return "", err
			}
			// A filter naming the library may have deleted documents: keep the
			// catalog in step.
			after, err := libraryCount(ctx, m.cl)
			if err != nil {
				return "", err
			}
			if after != before {
				if err := st.writeCatalog(ctx, m.cl); err != nil {
					return "", err
				}
			}
			return r.GetText(), nil
		}),
	}
}

// libraryCount is how many documents the library holds.
func libraryCount(ctx context.Context, cl exocortexv1.MemoryServiceClient) (int32, error) {
	r, err := cl.Census(ctx, &exocortexv1.MemoryCensusRequest{Filter: &exocortexv1.MemoryFilter{Areas: []string{AreaLibrary}}})
	if err != nil {
		return 0, err
	}
	return r.GetAreas()[AreaLibrary].GetRecords(), nil
}
