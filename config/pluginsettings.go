package config

import (
	"encoding/json"
	"fmt"
)

// EnvSettings holds, in a plugin's environment, the session's settings the
// host shows its plugins (PluginSettings, as JSON): the Python SDK's Agent Zero
// settings and model-config stand-ins read them. Read-only for the plugin:
// the operator changes them in config.yaml (or the environment) and restarts.
const EnvSettings = "EXOCORTEX_SETTINGS"

// PluginSettings are the settings a plugin may see: the models, the context
// window and the loop's limits, with the environment's overrides applied.
// Secrets (API keys, their variables' names) and paths are left out.
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
// environment for c.
func (c Config) PluginSettingsEnv() (string, error) {
	b, err := json.Marshal(c.PluginSettings())
	if err != nil {
		return "", fmt.Errorf("encoding the settings for the plugins: %w", err)
	}
	return EnvSettings + "=" + string(b), nil
}
