package config

import (
	"os"
	"path/filepath"

	"github.com/exocortex/exocortex/toolsettings"
)

// HookFiles are the command-hook configurations the bridge reads, in the
// order their hooks run at one event: the user's (Claude Code's, Gemini
// CLI's, Codex's, then Exocortex's own $EXOCORTEX_HOME/hooks.json), then, in
// a trusted project only, the project's (.claude/settings.json,
// .claude/settings.local.json, .gemini/settings.json, .codex/hooks.json,
// .exocortex/hooks.json). skipped are the project's files that exist but are
// not read because the project is not trusted. userHome is the operator's
// home directory ("" leaves the user files out).
func (c Config) HookFiles(userHome, home, project string) (files, skipped []toolsettings.HookFile) {
	if c.CommandHooks.Off {
		return nil, nil
	}
	if userHome != "" {
		files = append(files,
			toolsettings.HookFile{Path: filepath.Join(userHome, ".claude", "settings.json"), Dialect: toolsettings.DialectClaude, Scope: "user"},
			toolsettings.HookFile{Path: filepath.Join(userHome, ".gemini", "settings.json"), Dialect: toolsettings.DialectGemini, Scope: "user"},
			toolsettings.HookFile{Path: filepath.Join(userHome, ".codex", "hooks.json"), Dialect: toolsettings.DialectCodex, Scope: "user"})
	}
	if home != "" {
		files = append(files, toolsettings.HookFile{Path: filepath.Join(home, "hooks.json"), Dialect: toolsettings.DialectExocortex, Scope: "user"})
	}
	if project == "" {
		return files, nil
	}
	proj := []toolsettings.HookFile{
		{Path: filepath.Join(project, ".claude", "settings.json"), Dialect: toolsettings.DialectClaude, Scope: "project"},
		{Path: filepath.Join(project, ".claude", "settings.local.json"), Dialect: toolsettings.DialectClaude, Scope: "project"},
		{Path: filepath.Join(project, ".gemini", "settings.json"), Dialect: toolsettings.DialectGemini, Scope: "project"},
		{Path: filepath.Join(project, ".codex", "hooks.json"), Dialect: toolsettings.DialectCodex, Scope: "project"},
		{Path: filepath.Join(project, ".exocortex", "hooks.json"), Dialect: toolsettings.DialectExocortex, Scope: "project"},
	}
	if ProjectTrusted(project, c.TrustedProjects) {
		return append(files, proj...), nil
	}
	for _, f := range proj {
		if _, err := os.Stat(f.Path); err == nil {
			skipped = append(skipped, f)
		}
	}
	return files, skipped
}

// CommandHooksSettings is the bridge's settings as the host sends them.
func (c Config) CommandHooksSettings(home, project string) toolsettings.CommandHooks {
	s := c.CommandHooks.WithDefaults()
	userHome, _ := os.UserHomeDir()
	// The project's files would be the user's when the project is the home
	// directory itself: read them once.
	if project != "" && userHome != "" && canonical(project) == canonical(userHome) {
		project = ""
	}
	s.Files, s.Skipped = c.HookFiles(userHome, home, project)
	return s
}
