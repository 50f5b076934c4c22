// Package tools is the tool registry of the ECE seed: one place where a
// client discovers every tool the agent can call, by id, by the agent that
// provides it, or by category, and where an admin registers tools that live
// outside Exocortex (an HTTP endpoint).
//
// A definition has the seed's fields:
//
//	{"id": "web_search.query", "name": "query", "description": "…",
//	 "category": "retrieval", "parameters": {JSON Schema}, "returns": {JSON Schema},
//	 "endpoint": "https://…", "version": "1.0.0", "agent": "web_search"}
//
// The id is agent.function_name. Two kinds live side by side, told apart by
// "source": the tools of the loaded plugins (source "plugin": the agent is
// the plugin, the endpoint "plugin:<name>", the schemas and the category from
// the plugin's manifest), which follow the host as plugins load and reload and
// cannot be deleted here; and registered ones (source "registered"), kept in a
// JSON file under the home so that they survive a restart. A registered id
// may not take a plugin tool's id.
//
//	GET    /tools?agent=&category=   list (agent role)
//	GET    /tools/{id}               one definition
//	POST   /tools                    register or replace (admin)
//	DELETE /tools/{id}               remove a registered tool (admin)
//	GET    /health                   the registry's health (no key)
package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"sync"
)

// Definition is one tool, as the ECE seed's Tool Definition Schema has it.
type Definition struct {
	// ID is agent.function_name.
	ID          string `json:"id"`
	Name        string `json:"name"`
	Description string `json:"description"`
	// Category groups tools (retrieval, data_processing, analysis, ...).
	Category string `json:"category,omitempty"`
	// Parameters and Returns are JSON Schemas of the arguments and the result.
	Parameters json.RawMessage `json:"parameters"`
	Returns    json.RawMessage `json:"returns"`
	// Endpoint is where the tool is served: an http(s) URL for a registered
	// tool, plugin:<plugin> for a plugin's.
	Endpoint string `json:"endpoint"`
	Version  string `json:"version"`
	// Agent is the agent (or plugin) that provides the tool.
	Agent string `json:"agent"`
	// Source is "plugin" or "registered"; set by the registry.
	Source string `json:"source,omitempty"`
}

// Sources of definitions.
const (
	SourcePlugin     = "plugin"
	SourceRegistered = "registered"
)

// Plugins lists the tools of the loaded plugins, as definitions.
type Plugins func(context.Context) []Definition

// Registry holds the registered definitions and reads the plugins' on demand.
// It is safe for concurrent use.
type Registry struct {
	path    string
	plugins Plugins
	// client calls the registered tools (call.go; nil: http.DefaultClient).
	client *http.Client

	mu         sync.Mutex
	registered map[string]Definition
}

// File is the registry's file under the home.
const File = "tools/registry.json"

// Open reads the registered definitions kept at path (none yet when it does
// not exist); plugins may be nil (no plugin tools).
func Open(path string, plugins Plugins) (*Registry, error) {
	r := &Registry{path: path, plugins: plugins, registered: map[string]Definition{}}
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return r, nil
	}
	if err != nil {
		return nil, fmt.Errorf("tool registry %s: %w", path, err)
	}
	var defs []Definition
	if err := json.Unmarshal(b, &defs); err != nil {
		return nil, fmt.Errorf("tool registry %s: not a JSON list of tool definitions (fix or remove it): %w", path, err)
	}
	for i, d := range defs {
		if err := d.Validate(); err != nil {
			return nil, fmt.Errorf("tool registry %s: definition %d: %w", path, i, err)
		}
		d.Source = SourceRegistered
		r.registered[d.ID] = d
	}
	return r, nil
}

// FieldError is a definition refused for one field.
type FieldError struct {
	Field, Msg string
}

func (e *FieldError) Error() string { return e.Field + ": " + e.Msg }

var (
	idPattern    = regexp.MustCompile(`^([A-Za-z0-9_-]+)\.([A-Za-z0-9_.-]+)$`)
	agentPattern = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)
)

// Validate checks a definition to register: every field the seed requires,
// an id of the form agent.function_name matching agent and name, JSON
// Schemas that are objects (or true/false), and an http(s) endpoint.
func (d Definition) Validate() error {
	m := idPattern.FindStringSubmatch(d.ID)
	switch {
	case d.ID == "":
		return &FieldError{"id", "missing: give agent.function_name, e.g. web_search.query"}
	case m == nil:
		return &FieldError{"id", fmt.Sprintf("%q is not agent.function_name (letters, digits, _ and -, one dot after the agent)", d.ID)}
	case d.Agent == "":
		return &FieldError{"agent", "missing: the agent that provides the tool (the id's first part, " + m[1] + ")"}
	case !agentPattern.MatchString(d.Agent) || d.Agent != m[1]:
		return &FieldError{"agent", fmt.Sprintf("%q must be the id's first part, %q", d.Agent, m[1])}
	case d.Name == "":
		return &FieldError{"name", "missing: the tool's human-readable name"}
	case d.Description == "":
		return &FieldError{"description", "missing: say what the tool does (the model reads it)"}
	case d.Version == "":
		return &FieldError{"version", "missing: the definition's version, e.g. 1.0.0"}
	}
	for _, s := range []struct {
		field string
		v     json.RawMessage
	}{{"parameters", d.Parameters}, {"returns", d.Returns}} {
		if err := checkSchema(s.v); err != nil {
			return &FieldError{s.field, err.Error()}
		}
	}
	return checkEndpoint(d.Endpoint)
}

func checkSchema(v json.RawMessage) error {
	if len(v) == 0 {
		return errors.New("missing: a JSON Schema ({\"type\": \"object\", ...})")
	}
	var x any
	if err := json.Unmarshal(v, &x); err != nil {
		return fmt.Errorf("not JSON: %v", err)
	}
	switch x.(type) {
	case map[string]any, bool:
		return nil
	}
	return errors.New("a JSON Schema is an object (or true or false)")
}

// ErrNotFound is a tool id the registry does not hold.
var ErrNotFound = errors.New("no such tool")

// ErrPluginTool is a write refused because the id is a loaded plugin's tool.
var ErrPluginTool = errors.New("the tool is a plugin's")

func (r *Registry) pluginDefs(ctx context.Context) []Definition {
	if r.plugins == nil {
		return nil
	}
	defs := r.plugins(ctx)
	for i := range defs {
		defs[i].Source = SourcePlugin
	}
	return defs
}

// List returns the tools whose agent and category match (empty: any), sorted by id.
func (r *Registry) List(ctx context.Context, agent, category string) []Definition {
	all := r.pluginDefs(ctx)
	r.mu.Lock()
	for _, d := range r.registered {
		all = append(all, d)
	}
	r.mu.Unlock()
	out := all[:0]
	for _, d := range all {
		if (agent == "" || d.Agent == agent) && (category == "" || d.Category == category) {
			out = append(out, d)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// Get returns the tool id.
func (r *Registry) Get(ctx context.Context, id string) (Definition, error) {
	for _, d := range r.pluginDefs(ctx) {
		if d.ID == id {
			return d, nil
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if d, ok := r.registered[id]; ok {
		return d, nil
	}
	return Definition{}, fmt.Errorf("tool %q: %w", id, ErrNotFound)
}

// Register adds or replaces a registered definition and keeps it in the
// registry's file; it reports whether the id is new.
func (r *Registry) Register(ctx context.Context, d Definition) (bool, error) {
	if err := d.Validate(); err != nil {
		return false, err
	}
	for _, p := range r.pluginDefs(ctx) {
		if p.ID == d.ID {
			return false, fmt.Errorf("tool %q: %w (plugin %s): register it under another id", d.ID, ErrPluginTool, p.Agent)
		}
		// The agent calls a registered tool by its id: a plugin's tool of
		// that name would hide it.
		if p.Name == d.ID {
			return false, fmt.Errorf("tool %q: %w: plugin %s gives the agent a tool of that name, which would hide this one: register it under another id", d.ID, ErrPluginTool, p.Agent)
		}
	}
	d.Source = SourceRegistered
	r.mu.Lock()
	defer r.mu.Unlock()
	old, existed := r.registered[d.ID]
	r.registered[d.ID] = d
	if err := r.save(); err != nil {
		if existed {
			r.registered[d.ID] = old
		} else {
			delete(r.registered, d.ID)
		}
		return false, err
	}
	return !existed, nil
}

// Remove deletes a registered definition.
func (r *Registry) Remove(ctx context.Context, id string) error {
	for _, p := range r.pluginDefs(ctx) {
		if p.ID == id {
			return fmt.Errorf("tool %q: %w (plugin %s): remove or disable the plugin instead", id, ErrPluginTool, p.Agent)
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	old, ok := r.registered[id]
	if !ok {
		return fmt.Errorf("tool %q: %w", id, ErrNotFound)
	}
	delete(r.registered, id)
	if err := r.save(); err != nil {
		r.registered[id] = old
		return err
	}
	return nil
}

// save writes the registered definitions (sorted by id) through a temporary
// file, so a crash leaves the old file or the new one. Callers hold r.mu.
func (r *Registry) save() error {
	defs := make([]Definition, 0, len(r.registered))
	for _, d := range r.registered {
		d.Source = ""
		defs = append(defs, d)
	}
	sort.Slice(defs, func(i, j int) bool { return defs[i].ID < defs[j].ID })
	b, err := json.MarshalIndent(defs, "", "  ")
	if err != nil {
		return fmt.Errorf("tool registry: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(r.path), 0o700); err != nil {
		return fmt.Errorf("tool registry: %w", err)
	}
	tmp := r.path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("tool registry %s: %w", tmp, err)
	}
	if err := os.Rename(tmp, r.path); err != nil {
		return fmt.Errorf("tool registry %s: %w", r.path, err)
	}
	return nil
}
