// Package toolregistry tells the model which tools and programs it has, in two
// tiers: a compact index of everything, and the full specification only of the
// tools it has actually used.
//
// Tool registry (system_prompt, order 16). The seed scanned plugin folders at
// message_loop_prompts_after and injected a [CUSTOM TOOLS] block. Here the host
// knows the tools: the system_prompt request carries them, which is why the
// registry runs there (the only hook that sees the tool specs, and tools belong
// in the system prompt). It
//   - records the tools offered this iteration in tool_catalog, for the tiered
//     injection, the orchestration mode and the fallback logger;
//   - adds CUSTOM TOOLS, a one-line index (name, required arguments, first
//     sentence of the description) of the plugin tools that have no prompt file
//     (the core documents the others from their prompt files);
//   - adds INSTALLED PROGRAMS from the operator's $EXOCORTEX_HOME/tool_manifest.json,
//     listing only the programs found on PATH. The file is either
//     {"programs": [{"name": "ffmpeg", "use": "convert audio and video"}]} or
//     {"ffmpeg": "convert audio and video"}; a file that parses as neither is
//     logged and skipped. When the file does not exist, the registry writes an
//     empty one (Template) for the operator to fill in, and never touches it
//     again.
//
// Tiered tool injection (message_loop_prompts_after, order 95, as in the seed):
// it counts in seen_tools the tools the model has called this session (tool
// results in the history), and adds TOOL SPECS with the full argument schema of
// the MaxSpecs most recently called (the response tool excepted), each with the
// arguments of its last successful call in the evidence ledger as an example.
package toolregistry

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/exocortex/exocortex/extensions/internal/textfacts"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

// ManifestFile is the operator's list of installed programs, in the home.
const ManifestFile = "tool_manifest.json"

// MaxSpecs is how many seen tools get their full specification.
const MaxSpecs = 4

func catalogKey() sdk.Key[*exocortexv1.ToolCatalog] { return sdk.KeyOf[*exocortexv1.ToolCatalog]() }
func seenKey() sdk.Key[*exocortexv1.SeenTools]      { return sdk.KeyOf[*exocortexv1.SeenTools]() }
func ledgerKey() sdk.Key[*exocortexv1.EvidenceLedger] {
	return sdk.KeyOf[*exocortexv1.EvidenceLedger]()
}

// Program is one entry of the tool manifest.
type Program struct {
	Name string `json:"name"`
	Use  string `json:"use"`
}

// ParseManifest reads either form of tool_manifest.json. In the flat form, keys
// starting with "_" are comments.
func ParseManifest(b []byte) ([]Program, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		return nil, fmt.Errorf(`want {"programs": [{"name": ..., "use": ...}]} or {"NAME": "use"}: %w`, err)
	}
	if raw, ok := top["programs"]; ok {
		var ps []Program
		if err := json.Unmarshal(raw, &ps); err != nil {
			return nil, fmt.Errorf(`"programs" must be a list of {"name": ..., "use": ...}: %w`, err)
		}
		return ps, nil
	}
	var out []Program
	for n, raw := range top {
		if strings.HasPrefix(n, "_") {
			continue
		}
		var use string
		if err := json.Unmarshal(raw, &use); err != nil {
			return nil, fmt.Errorf("program %q: want a string saying what it is for: %w", n, err)
		}
		out = append(out, Program{Name: n, Use: use})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, nil
}

// Template is what the registry writes when the home has no tool_manifest.json,
// so the operator finds the file to fill in.
const Template = `{
  "_doc": "Programs installed on this machine that the agent may use with code_execution. Add {\"name\": \"ffmpeg\", \"use\": \"convert audio and video\"}; only programs found on PATH are shown to the model.",
  "programs": []
}
`

// Registry is the tool-registry extension. Home gives the Exocortex home;
// LookPath finds a program (exec.LookPath when nil).
type Registry struct {
	Home     func() (string, error)
	LookPath func(string) (string, error)
	cache    *programCache
}

// programCache keeps the rendered INSTALLED PROGRAMS text per manifest version
// (path, size, modification time): looking programs up on PATH every iteration
// would be wasted work. It holds no session data.
type programCache struct {
	mu   sync.Mutex
	key  string
	text string
}

// NewRegistry returns the registry.
func NewRegistry(home func() (string, error)) Registry {
	return Registry{Home: home, cache: &programCache{}}
}

// File declares the manifest as read.
func File() *exocortexv1.FileSpec {
	return &exocortexv1.FileSpec{Id: "tool_manifest", Path: "$EXOCORTEX_HOME/" + ManifestFile, Access: exocortexv1.Access_ACCESS_READ_WRITE,
		User: "tool_registry", Doc: "The operator's list of installed programs the agent may use, written by hand; created empty (a template) when missing."}
}

// Spec declares it.
func (e Registry) Spec() sdk.Spec {
	return sdk.Spec{
		Name:          "tool_registry",
		Hooks:         []sdk.Hook{sdk.SystemPrompt(e)},
		Order:         16,
		Writes:        []sdk.KeyRef{catalogKey()},
		InjectsPrompt: true,
		Description:   "Records the offered tools in tool_catalog; adds CUSTOM TOOLS (tools without a prompt file) and INSTALLED PROGRAMS (tool_manifest.json, found on PATH).",
	}
}

// Index is the one-line entry of a tool.
func Index(t *exocortexv1.ToolSpec) string {
	var schema struct {
		Required []string `json:"required"`
	}
	_ = json.Unmarshal([]byte(t.GetParametersJsonSchema()), &schema)
	desc := t.GetDescription()
	if s := textfacts.Sentences(desc); len(s) > 0 {
		desc = s[0]
	}
	return fmt.Sprintf("- %s(%s): %s", t.GetName(), strings.Join(schema.Required, ", "), textfacts.Shorten(desc, 120))
}

// SystemPrompt records the catalog and adds the index.
func (r Registry) SystemPrompt(_ context.Context, c *sdk.Call, req *exocortexv1.SystemPromptRequest) (*exocortexv1.SystemPromptResponse, error) {
	catalogKey().Set(c, &exocortexv1.ToolCatalog{Tools: req.GetTools()})
	resp := &exocortexv1.SystemPromptResponse{}
	var idx []string
	for _, t := range req.GetTools() {
		if t.GetPromptFile() == "" {
			idx = append(idx, Index(t))
		}
	}
	if len(idx) > 0 {
		resp.PromptBlocks = append(resp.PromptBlocks, &exocortexv1.PromptBlock{Title: "CUSTOM TOOLS", Content: strings.Join(idx, "\n")})
	}
	if text := r.programs(c); text != "" {
		resp.PromptBlocks = append(resp.PromptBlocks, &exocortexv1.PromptBlock{Title: "INSTALLED PROGRAMS", Content: text})
	}
	return resp, nil
}

func (r Registry) programs(c *sdk.Call) string {
	if r.Home == nil {
		return ""
	}
	home, err := r.Home()
	if err != nil {
		return ""
	}
	path := filepath.Join(home, ManifestFile)
	fi, err := os.Stat(path)
	if errors.Is(err, os.ErrNotExist) {
		// O_EXCL: never overwrite what the operator wrote meanwhile.
		if f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644); err == nil {
			_, _ = f.WriteString(Template)
			_ = f.Close()
		}
		return ""
	}
	if err != nil {
		return ""
	}
	version := fmt.Sprintf("%s %d %s", path, fi.Size(), fi.ModTime().Format(time.RFC3339Nano))
	if r.cache != nil {
		r.cache.mu.Lock()
		defer r.cache.mu.Unlock()
		if r.cache.key == version {
			return r.cache.text
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	progs, err := ParseManifest(b)
	if err != nil {
		c.Logger().Warn("tool_manifest.json skipped", "file", path, "err", err)
		return ""
	}
	look := r.LookPath
	if look == nil {
		look = exec.LookPath
	}
	var lines []string
	for _, p := range progs {
		if _, err := look(p.Name); err == nil {
			lines = append(lines, fmt.Sprintf("- %s: %s", p.Name, textfacts.Shorten(p.Use, 120)))
		}
	}
	text := ""
	if len(lines) > 0 {
		text = "Programs installed on this machine, for code_execution:\n" + strings.Join(lines, "\n")
	}
	if r.cache != nil {
		r.cache.key, r.cache.text = version, text
	}
	return text
}

// Tiered is the tiered tool injection.
type Tiered struct{}

// Spec declares it.
func (e Tiered) Spec() sdk.Spec {
	return sdk.Spec{
		Name:          "tiered_tool_injection",
		Hooks:         []sdk.Hook{sdk.MessageLoopPromptsAfter(e)},
		Order:         95,
		Reads:         []sdk.KeyRef{catalogKey(), seenKey(), ledgerKey()},
		Writes:        []sdk.KeyRef{seenKey()},
		InjectsPrompt: true,
		Description:   fmt.Sprintf("Counts the tools called this session in seen_tools and adds TOOL SPECS (full schema and a working example) for the %d most recent.", MaxSpecs),
		// It counts the tool results of the whole history since its last call.
		ReadsHistory:    true,
		EffectsDeclared: true,
	}
}

// MessageLoopPromptsAfter updates seen_tools and adds the specs.
func (Tiered) MessageLoopPromptsAfter(_ context.Context, c *sdk.Call, req *exocortexv1.MessageLoopPromptsAfterRequest) (*exocortexv1.MessageLoopPromptsAfterResponse, error) {
	seen, _ := seenKey().Get(c)
	if seen == nil {
		seen = &exocortexv1.SeenTools{}
	}
	hist := req.GetHistory()
	from := int(seen.GetHistorySeen())
	if from > len(hist) {
		from = 0 // another history (a new session with restored state)
	}
	changed := false
	for _, m := range hist[from:] {
		name := m.GetToolName()
		if m.GetRole() != "tool" || name == "" {
			continue
		}
		if seen.Calls == nil {
			seen.Calls = map[string]int32{}
		}
		seen.Calls[name]++
		recent := seen.Recent[:0]
		for _, r := range seen.Recent {
			if r != name {
				recent = append(recent, r)
			}
		}
		seen.Recent = append(recent, name)
		changed = true
	}
	if int(seen.GetHistorySeen()) != len(hist) {
		seen.HistorySeen = int32(len(hist))
		changed = true
	}
	if changed {
		seenKey().Set(c, seen)
	}
	cat, ok := catalogKey().Get(c)
	if !ok {
		return nil, nil
	}
	specs := map[string]*exocortexv1.ToolSpec{}
	for _, t := range cat.GetTools() {
		specs[t.GetName()] = t
	}
	l, _ := ledgerKey().Get(c)
	var b strings.Builder
	n := 0
	for i := len(seen.GetRecent()) - 1; i >= 0 && n < MaxSpecs; i-- {
		t := specs[seen.GetRecent()[i]]
		if t == nil || t.GetName() == "response" {
			continue
		}
		n++
		fmt.Fprintf(&b, "### %s\n%s\nArguments (JSON Schema): %s\n", t.GetName(), strings.TrimSpace(t.GetDescription()), t.GetParametersJsonSchema())
		for j := len(l.GetEntries()) - 1; j >= 0; j-- {
			if e := l.GetEntries()[j]; e.GetToolName() == t.GetName() && e.GetOk() {
				fmt.Fprintf(&b, "Last call that worked: %s\n", e.GetArgsJson())
				break
			}
		}
		b.WriteString("\n")
	}
	if n == 0 {
		return nil, nil
	}
	return &exocortexv1.MessageLoopPromptsAfterResponse{PromptBlocks: []*exocortexv1.PromptBlock{{
		Title: "TOOL SPECS", Content: "The tools you have used, in full:\n\n" + strings.TrimSpace(b.String()),
	}}}, nil
}
