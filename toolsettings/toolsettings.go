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
// The tools' settings move here one tool at a time; text_editor's is the
// first (config.Editor is an alias of Editor).
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

// Tools are the built-in tools' settings as the host sends them, resolved.
type Tools struct {
	// Editor is text_editor's.
	Editor *Editor `json:"editor,omitempty"`
	// CommandHooks is the command-hook bridge's (commandhooks.go).
	CommandHooks *CommandHooks `json:"command_hooks,omitempty"`
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
