package lint

import (
	"fmt"
	"path"
	"strings"

	"github.com/exocortex/exocortex/wiring"
)

// fixGenerate is the one-line fix for constants out of step with the prompts.
const fixGenerate = "run `make generate` (go generate ./signals) and commit prompts/ and signals/ together"

// signals checks the prompt files' signal: headers against the generated
// constants (rule 1, seam 1: EXO011 to EXO016).
func (c *checker) signals() {
	builtinByFile := map[string]*wiring.Prompt{}
	for i := range c.in.Prompts {
		p := &c.in.Prompts[i]
		if p.Err != nil {
			c.add(Finding{Code: "EXO016", Severity: Error, File: p.Source,
				Message: fmt.Sprintf("prompt %s: front matter cannot be read: %v", p.Source, p.Err),
				Fix:     "fix the header between the two --- lines (allowed keys: signal, description)"})
			continue
		}
		if p.Builtin {
			builtinByFile[p.File] = p
		}
	}
	for i := range c.in.Prompts {
		p := &c.in.Prompts[i]
		if p.Builtin || p.Err != nil || p.Signal == "" {
			continue
		}
		if base, ok := builtinByFile[p.File]; ok && base.Signal != p.Signal {
			c.add(Finding{Code: "EXO016", Severity: Error, File: p.Source,
				Message: fmt.Sprintf("prompt override %s declares signal %q, but the built-in %s carries %q: the prompt loader refuses the override", p.Source, p.Signal, p.File, base.Signal),
				Fix:     fmt.Sprintf("remove the signal line from the override, or set it to %q", base.Signal)})
		}
	}

	for _, s := range c.g.Signals {
		var builtin []*wiring.Prompt
		for _, p := range s.Prompts {
			if p.Builtin {
				builtin = append(builtin, p)
			}
		}
		if len(builtin) > 1 {
			var files []string
			for _, p := range builtin {
				files = append(files, p.Source)
			}
			for _, p := range builtin[1:] {
				c.add(Finding{Code: "EXO015", Severity: Error, File: p.Source,
					Message: fmt.Sprintf("signal %q is declared by %s: each signal belongs to exactly one prompt file", s.Value, strings.Join(files, " and ")),
					Fix:     "remove the signal line from all but one of the files, or give each its own signal"})
			}
		}
		switch {
		case s.Const == nil && len(s.Prompts) > 0:
			for _, p := range s.Prompts {
				if !p.Builtin && builtinByFile[p.File] != nil {
					continue // EXO016 covers an override that changes its signal
				}
				c.add(Finding{Code: "EXO011", Severity: Error, File: p.Source,
					Message: fmt.Sprintf("prompt %s declares signal %q, but package signals has no constant for it: code cannot recognise the message", p.Source, s.Value),
					Fix:     fixGenerate})
			}
		case s.Const != nil && len(builtin) == 0:
			msg := fmt.Sprintf("constant signals.%s (%q) names prompt %s, but no prompt file declares signal %q", s.Const.Name, s.Value, s.Const.PromptFile, s.Value)
			if p := builtinByFile[path.Base(s.Const.PromptFile)]; p != nil {
				if p.Signal == "" {
					msg += fmt.Sprintf("; %s now declares no signal", p.File)
				} else {
					msg += fmt.Sprintf("; %s now declares %q", p.File, p.Signal)
				}
			}
			c.add(Finding{Code: "EXO012", Severity: Error, File: s.Const.PromptFile,
				Message: msg + ": extensions matching this constant never fire",
				Fix:     "restore the prompt's signal line, or " + fixGenerate})
		case s.Const != nil:
			p := builtin[0]
			var stale []string
			if path.Base(s.Const.PromptFile) != p.File {
				stale = append(stale, fmt.Sprintf("it names prompt %s but the signal is now in %s", s.Const.PromptFile, p.Source))
			}
			if s.Const.Description != p.Description {
				stale = append(stale, fmt.Sprintf("its description %q differs from the prompt's %q", s.Const.Description, p.Description))
			}
			if len(stale) > 0 {
				c.add(Finding{Code: "EXO013", Severity: Error, File: p.Source,
					Message: fmt.Sprintf("generated constant signals.%s is older than its prompt: %s", s.Const.Name, strings.Join(stale, "; ")),
					Fix:     fixGenerate})
			}
		}
		if s.Const == nil {
			for _, e := range s.Consumers {
				c.add(Finding{Code: "EXO014", Severity: Error, Plugin: e.Plugin.Name, Extension: e.Name,
					Message: fmt.Sprintf("extension %s consumes signal %q, which has no constant in package signals: no message carries it", at(e), s.Value),
					Fix:     "use a constant of package signals (see WIRING.md, Signals), or declare the signal in its prompt file and run `make generate`"})
			}
		}
	}
}
