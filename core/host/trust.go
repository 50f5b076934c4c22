package host

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/exocortex/exocortex/config"
	"github.com/exocortex/exocortex/core/discover"
)

// Plugins run with the operator's rights, so the host loads only what the
// operator chose: the directories it is given, and a project's own plugin
// directory (.exocortex/plugins under the working directory) only once the
// operator has trusted that project (`exocortex trust`, config key
// trusted_projects). A cloned repository cannot run code by being opened.

// ProjectOf returns the project a project plugin directory belongs to: the
// directory holding .exocortex/plugins, or the directory itself when it is not
// laid out that way.
func ProjectOf(pluginDir string) string {
	p := filepath.Clean(pluginDir)
	if filepath.Base(p) == "plugins" && filepath.Base(filepath.Dir(p)) == ".exocortex" {
		return filepath.Dir(filepath.Dir(p))
	}
	return p
}

// ProjectTrusted reports whether project is one of trusted or inside one of them
// (config.ProjectTrusted: the prompts loader decides the same way).
func ProjectTrusted(project string, trusted []string) bool {
	return config.ProjectTrusted(project, trusted)
}

// scanDirs decides, once at load, which directories are scanned: every one
// given, except the plugin directory of a project that is not trusted. For such
// a project that holds plugins it records a notice, an untrusted status entry
// per plugin and an event.
func (h *Host) scanDirs() []discover.Dir {
	var out []discover.Dir
	for _, d := range h.opts.Dirs {
		if d.Source != discover.Project || ProjectTrusted(ProjectOf(d.Path), h.opts.TrustedProjects) {
			out = append(out, d)
			continue
		}
		res := discover.Scan([]discover.Dir{d})
		if len(res.Plugins) == 0 {
			continue
		}
		project := ProjectOf(d.Path)
		var names []string
		for _, c := range res.Plugins {
			names = append(names, c.Name)
		}
		notice := fmt.Sprintf("the plugins of project %s (%s in %s) were not loaded: the project is not trusted, and plugins run with your rights. Review them, then run `exocortex trust %s` and start a new session",
			project, strings.Join(names, ", "), d.Path, shellQuote(project))
		h.rl.notices = append(h.rl.notices, notice)
		h.rl.skipped = append(h.rl.skipped, discover.Skip{Kind: discover.Untrusted, Path: d.Path, Plugins: names,
			Message: fmt.Sprintf("the plugins of project %s (%s in %s) are not loaded: the project is not trusted", project, strings.Join(names, ", "), d.Path),
			Fix:     fmt.Sprintf("review them, then run `exocortex trust %s`", shellQuote(project))})
		for _, c := range res.Plugins {
			h.rl.untrusted = append(h.rl.untrusted, PluginStatus{
				Name: c.Name, Path: c.Path, Source: d.Source.String(), State: StateUntrusted,
				LastError: notice, Extensions: []ExtensionInfo{},
			})
			h.emit(Event{Kind: EventUntrusted, Plugin: c.Name, Detail: notice})
		}
		h.logger.Warn("project plugins not loaded: the project is not trusted", "project", project, "plugins", names)
	}
	h.rl.dirs = out
	return out
}

// shellQuote quotes a path for a command the operator may paste.
func shellQuote(s string) string {
	if s != "" && !strings.ContainsAny(s, " \t\n'\"\\$`!*?[]{}()<>|&;#~") {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
