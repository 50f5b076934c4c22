// Package toolsettings is the contract between the host's configuration and
// the built-in tools: the settings of config.yaml's tools: section that a tool
// plugin needs, as plain data, and how the host hands them over. The host
// (package config) reads config.yaml, resolves the section (relative paths
// made absolute against the project, defaults filled in) and sends it to every
// plugin it starts in the plugin settings (config.PluginSettings, the
// EXOCORTEX_SETTINGS variable); a tool plugin reads it from there (FromEnv)
// and never reads config.yaml itself. Like package protocol, it imports
// nothing of either side, so the extensions may import it where they may not
// import config.
//
// Every built-in tool's settings are here (config's Editor, CodeExecution,
// Data, WebSearch, Recall, Sandbox and Duration are aliases of these types),
// so no extension reads config.yaml. The one secret among them, web_search's
// API key, is never sent: the plugin asks the host for it (docs/secrets.md).
package toolsettings

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
)

// EnvSettings holds, in a plugin's environment, the session's settings the
// host shows its plugins (config.PluginSettings, as JSON), Tools among them.
const EnvSettings = "EXOCORTEX_SETTINGS"

// Tools are the built-in tools' settings as the host sends them, resolved:
// each nil when the host sent none. Secrets are never among them (WebSearch's
// APIKey is not encoded); a plugin asks the host for the one it declares.
type Tools struct {
	// Home is the Exocortex home directory: the memory store, staging.jsonl
	// and the library catalog live in it.
	Home string `json:"home,omitempty"`
	// Editor is text_editor's.
	Editor *Editor `json:"editor,omitempty"`
	// MCPServers are the MCP servers whose tools the agent uses, by name
	// (config.yaml's mcp_servers and the mcp_servers_file's, merged).
	MCPServers map[string]MCPServer `json:"mcp_servers,omitempty"`
	// MCPProblems say why configured MCP servers were left out (an unreadable
	// mcp_servers_file, an entry without command or url), by server name or
	// file.
	MCPProblems []string `json:"mcp_problems,omitempty"`
	// CommandHooks is the command-hook bridge's (commandhooks.go).
	CommandHooks *CommandHooks `json:"command_hooks,omitempty"`
	// CodeExecution is code_execution's, with the sandbox its shells run in.
	CodeExecution *CodeExecution `json:"code_execution,omitempty"`
	// Data is data_analyze's and data_visualize's, with their sandbox.
	Data *Data `json:"data,omitempty"`
	// WebSearch is web_search's, without the API key.
	WebSearch *WebSearch `json:"web_search,omitempty"`
	// Recall is the recall extensions' (tools.memory.recall).
	Recall *Recall `json:"recall,omitempty"`
}

// Setting returns the value a setting of s points to, or an error naming the
// section (key, e.g. "tools.code_execution") when the host sent none.
func Setting[T any](s Tools, key string, v *T) (T, error) {
	if v == nil {
		var zero T
		return zero, fmt.Errorf("the host sent no %s settings (%s has no %s): start the plugin through an exocortex that sends them", key, EnvSettings, key)
	}
	return *v, nil
}

// Editor configures text_editor.
type Editor struct {
	// Roots are the directories text_editor may read and write in; a relative
	// root is taken from the project directory. Default: the project directory.
	// A relative path given to the tool starts at the first root.
	Roots []string `yaml:"roots" json:"roots"`
	// MaxReadLines bounds the lines one read returns (default 400).
	MaxReadLines int `yaml:"max_read_lines" json:"max_read_lines" check:"nonnegative"`
	// MaxFileBytes bounds the files text_editor reads whole, writes or patches
	// (default 10 MiB).
	MaxFileBytes int64 `yaml:"max_file_bytes" json:"max_file_bytes" check:"nonnegative"`
}

// WithDefaults fills in the editor's defaults; relative roots start at project.
func (e Editor) WithDefaults(project string) Editor {
	if len(e.Roots) == 0 && project != "" {
		e.Roots = []string{project}
	} else {
		roots := make([]string, len(e.Roots))
		for i, r := range e.Roots {
			roots[i] = Under(project, r)
		}
		e.Roots = roots
	}
	if e.MaxReadLines <= 0 {
		e.MaxReadLines = 400
	}
	if e.MaxFileBytes <= 0 {
		e.MaxFileBytes = 10 << 20
	}
	return e
}

// Under resolves p against base unless it is absolute (or either is empty).
func Under(base, p string) string {
	if p == "" || filepath.IsAbs(p) || base == "" {
		return p
	}
	return filepath.Join(base, p)
}

// ErrNotSent is FromEnv's error when the process was not started by an
// Exocortex host, which sends the settings.
var ErrNotSent = errors.New("the tools' settings did not come from the host (" + EnvSettings +
	" is not set): start the plugin through exocortex, which sends config.yaml's tools: section")

// FromEnv reads the tools' settings from the plugin settings in the
// environment (getenv is os.Getenv outside tests).
func FromEnv(getenv func(string) string) (Tools, error) {
	raw := getenv(EnvSettings)
	if raw == "" {
		return Tools{}, ErrNotSent
	}
	var s struct {
		Tools Tools `json:"tools"`
	}
	if err := json.Unmarshal([]byte(raw), &s); err != nil {
		return Tools{}, fmt.Errorf("%s is not the JSON the host sends: %w", EnvSettings, err)
	}
	return s.Tools, nil
}
