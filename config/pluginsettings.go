package config

import (
	"encoding/json"
	"fmt"
	"os"

	"github.com/exocortex/exocortex/toolsettings"
)

// EnvSettings holds, in a plugin's environment, the session's settings the
// host shows its plugins (PluginSettings, as JSON): the Python SDK's Agent Zero
// settings and model-config stand-ins read them, and the built-in tools their
// settings (toolsettings.FromEnv). Read-only for the plugin: the operator
// changes them in config.yaml (or the environment) and restarts.
const EnvSettings = toolsettings.EnvSettings

// PluginSettings are the settings a plugin may see: the models, the context
// window and the loop's limits, with the environment's overrides applied.
// Secrets (API keys, their variables' names) are left out (web_search's key
// is not encoded; the plugin asks the host for it, Host.GetSettingSecret), and
// so are paths but the built-in tools' own (Tools: the home, text_editor's
// roots, the work directories and the sandbox's policy).
type PluginSettings struct {
	Model         string `json:"model"`
	Provider      string `json:"provider"`
	NumCtx        int    `json:"num_ctx"`
	MaxNumCtx     int    `json:"max_num_ctx"`
	UtilityModel  string `json:"utility_model"`
	Embedder      string `json:"embedder"`
	MaxIterations int    `json:"max_iterations"`
	Approval      string `json:"approval"`
	FullToolDocs  bool   `json:"full_tool_docs"`
	// Tools are the built-in tools' settings, from the tools: section resolved
	// at the home (ToolsAt), so that the tool plugins need not read config.yaml.
	Tools toolsettings.Tools `json:"tools"`
}

// PluginSettings returns the settings of c a plugin may see.
func (c Config) PluginSettings() PluginSettings {
	return PluginSettings{
		Model: c.Model, Provider: c.Provider, NumCtx: c.NumCtx, MaxNumCtx: c.MaxNumCtx,
		UtilityModel: c.UtilityModel, Embedder: c.Tools.Memory.Embedder,
		MaxIterations: c.MaxIterations, Approval: c.Approval, FullToolDocs: c.FullToolDocs,
	}
}

// PluginSettingsEnv returns the EnvSettings=JSON entry of a plugin's
// environment for c, read from home: PluginSettings with the tools' settings,
// resolved against project, the project directory the host gives its plugins
// (EnvProject).
func (c Config) PluginSettingsEnv(home, project string) (string, error) {
	s := c.PluginSettings()
	getenv := func(k string) string {
		if k == EnvProject {
			return project
		}
		return os.Getenv(k)
	}
	t, err := c.toolsWith(home, getenv)
	if err != nil {
		return "", err
	}
	s.Tools = toolsettings.Tools{
		Home: t.Home, Editor: &t.Editor, CodeExecution: &t.CodeExecution, Data: &t.Data,
		WebSearch: &t.WebSearch, Recall: &t.Memory.Recall,
	}
	s.Tools.MCPServers, s.Tools.MCPProblems = c.MCPServersAt(home)
	hooks := c.CommandHooksSettings(home, project)
	s.Tools.CommandHooks = &hooks
	b, err := json.Marshal(s)
	if err != nil {
		return "", fmt.Errorf("encoding the settings for the plugins: %w", err)
	}
	return EnvSettings + "=" + string(b), nil
}
