package toolsettings

// CommandHooks configures the command-hook bridge (extensions/cmdhooks): the
// hook scripts of Claude Code, Gemini CLI and Codex, run unchanged at the
// matching Exocortex hooks. The `command_hooks:` section of config.yaml holds
// the first three fields; the host fills in Files and Skipped.
//
//	command_hooks:
//	  max_output_bytes: 1048576
//	  stop_continues: 3
type CommandHooks struct {
	// Off turns the bridge off: no hook configuration is read.
	Off bool `yaml:"off" json:"off"`
	// MaxOutputBytes bounds what one hook run may print on stdout and on
	// stderr (default 1 MiB); a hook over it is reported, and its output is
	// not used (a blocking event fails closed), never cut silently.
	MaxOutputBytes int `yaml:"max_output_bytes" json:"max_output_bytes" check:"nonnegative"`
	// StopContinues caps how many times Stop hooks (and Gemini's AfterAgent)
	// may keep one monologue going after its final response (default 3).
	StopContinues int `yaml:"stop_continues" json:"stop_continues" check:"nonnegative"`

	// Files are the hook configurations to read, in their order (filled in by
	// the host: the user's always, a project's when it is trusted).
	Files []HookFile `yaml:"-" json:"files,omitempty"`
	// Skipped are the project's configurations that exist but were not read,
	// because the project is not trusted (`exocortex trust`).
	Skipped []HookFile `yaml:"-" json:"skipped,omitempty"`
}

// Dialects of hook configuration files.
const (
	DialectClaude = "claude"
	DialectGemini = "gemini"
	DialectCodex  = "codex"
	// DialectExocortex is Exocortex's own hooks.json, written as Claude Code's.
	DialectExocortex = "exocortex"
)

// HookFile is one hook configuration file.
type HookFile struct {
	Path    string `json:"path"`
	Dialect string `json:"dialect"`
	// Scope is "user" or "project".
	Scope string `json:"scope"`
}

// WithDefaults fills in the defaults of zero fields.
func (c CommandHooks) WithDefaults() CommandHooks {
	if c.MaxOutputBytes <= 0 {
		c.MaxOutputBytes = 1 << 20
	}
	if c.StopContinues <= 0 {
		c.StopContinues = 3
	}
	return c
}
