package lint

import (
	"io/fs"
	"sync"

	"github.com/exocortex/exocortex/core/state"
	"github.com/exocortex/exocortex/core/wirecheck"
	"github.com/exocortex/exocortex/signals"
	"github.com/exocortex/exocortex/wiring"
)

// HostCheck is the wiring lint as the host runs it, at start and before every
// hot reload (core/host's Options.WiringCheck): the manifest checks of Check
// over the plugins given, with the built-in state keys, the generated signals
// and the prompt files (builtin, and the override directories in promptDirs).
// The prompts are read once, on the first call; a directory that cannot be
// read leaves its overrides out (`exocortex lint` reports it).
func HostCheck(builtin fs.FS, promptDirs ...string) wirecheck.Func {
	var once sync.Once
	var ps []Prompt
	return func(in wirecheck.Input) []wirecheck.Finding {
		once.Do(func() {
			var err error
			if ps, err = LoadPrompts(builtin, promptDirs...); err != nil {
				ps, _ = LoadPrompts(builtin)
			}
		})
		fs := Check(Input{Model: wiring.Model{
			Plugins: in.Plugins, BuiltinKeys: state.Builtin(), Prompts: ps, Signals: signals.All(),
			Disabled: in.Disabled, Enabled: in.Enabled, Services: wiring.DefaultServices(),
		}})
		out := make([]wirecheck.Finding, len(fs))
		for i, f := range fs {
			out[i] = wirecheck.Finding{Code: f.Code, Error: f.Severity == Error, Plugin: f.Plugin, Extension: f.Extension,
				Key: f.Key, File: f.File, Message: f.Message, Fix: f.Fix}
		}
		return out
	}
}
