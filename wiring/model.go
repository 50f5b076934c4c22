package wiring

import (
	"github.com/exocortex/exocortex/core/state"
	"github.com/exocortex/exocortex/core/wirecheck"
	"github.com/exocortex/exocortex/signals"
)

// Plugin is one plugin the host found, with the manifest it answered or the
// reason it could not. It is defined below core (package core/wirecheck) so the
// host can hand it to the wiring check without importing this package.
type Plugin = wirecheck.Plugin

// Prompt is one prompt file and its front matter.
type Prompt struct {
	// File is the file name, e.g. "fw.msg_repeat.md".
	File string
	// Source says where it was read, e.g. "prompts/fw.msg_repeat.md" or an
	// override's path.
	Source string
	// Builtin is true for the prompts embedded in the binary (package prompts),
	// from which package signals is generated; false for overrides.
	Builtin bool
	// Signal is the front matter's signal ("" for none).
	Signal      string
	Description string
	// Opening is the start of the prompt's text, up to its first line end or
	// template variable ("Your reply is word for word the same as your
	// previous one,"): what a plugin matching the prompt's text instead of its
	// signal would test for (lint EXO017).
	Opening string
	// Phrases are the literal runs of the prompt's first line between its
	// template variables, trimmed ("The call to", "was not run"), Opening's
	// included: a plugin may test any of them (lint EXO017).
	Phrases []string
	// Err is set when the front matter could not be read.
	Err error
}

// Services names the external services and places the wiring depends on. They
// are written as the operator configures them (an environment variable and its
// default), not as resolved on one machine, so WIRING.md is the same everywhere.
type Services struct {
	Ollama  string `json:"ollama"`
	DataDir string `json:"data_dir"`
}

// DefaultServices describes the services as Exocortex finds them when nothing
// else is configured.
func DefaultServices() Services {
	return Services{
		Ollama:  "`$OLLAMA_HOST`, default `http://127.0.0.1:11434`",
		DataDir: "`$EXOCORTEX_HOME`, default `~/.exocortex`",
	}
}

// Model is everything the wiring is derived from.
type Model struct {
	// Plugins in any order; Build sorts them by priority, then name.
	Plugins []Plugin
	// BuiltinKeys are the keys of state.proto (state.Builtin()).
	BuiltinKeys []state.Decl
	// Prompts are the prompt files: the built-in ones and any overrides.
	Prompts []Prompt
	// Signals are the generated constants (signals.All()).
	Signals []signals.Info
	// CoreTools are the tools the loop implements itself (e.g. "response"), which
	// no plugin declares.
	CoreTools []string
	// Disabled turns extensions off by name; Enabled turns on extensions shipped
	// disabled. Both come from the operator's configuration.
	Disabled, Enabled map[string]bool
	Services          Services
}
