package host

// The wiring check at start.
//
// Hot reload refuses a new version that adds an error finding of the wiring
// lint (reload.go). Start applies the same rule, so a plugin cannot run just
// because it was there when the session began: every plugin of a plugin
// directory that adds error findings to what the built-ins and the other
// plugins make is kept out (stopped, listed as rejected in Status, named in
// Notices and in FailedPlugins with the findings). Options.AllowWiringErrors
// keeps such plugins in, and still reports the errors.

import (
	"errors"
	"fmt"
	"strings"

	"github.com/exocortex/exocortex/core/discover"
	"github.com/exocortex/exocortex/core/wirecheck"
)

// KeptOutError is why a plugin was kept out at start: the wiring lint's error
// findings that it adds.
type KeptOutError struct {
	Plugin   string
	Findings []string
}

func (e *KeptOutError) Error() string {
	return fmt.Sprintf("plugin %s was kept out: %s", e.Plugin, e.reason())
}

func (e *KeptOutError) reason() string {
	return "the wiring lint finds errors it adds (the rule hot reload applies; `exocortex lint` shows the fixes, --allow-wiring-errors starts it anyway):\n  - " +
		strings.Join(e.Findings, "\n  - ")
}

// KeptOut reports whether err says a plugin was kept out by the wiring check
// (its notice, in Notices, says why).
func KeptOut(err error) bool { return keptOut(err) }

func keptOut(err error) bool {
	var ke *KeptOutError
	return errors.As(err, &ke)
}

func (h *Host) isFailed(name string) bool {
	for _, f := range h.failed {
		if f.Plugin == name {
			return true
		}
	}
	return false
}

// keepOutWiringErrors runs the wiring check over the loaded plugins and keeps
// out those that add error findings to the built-ins' own. A finding located
// at a plugin blames that plugin; one located at a built-in or at no plugin
// blames the plugins whose absence makes it go away. Keeping one plugin out can
// break another (its reader loses its writer), so the check repeats until no
// plugin of a plugin directory adds an error.
func (h *Host) keepOutWiringErrors() {
	if h.opts.WiringCheck == nil {
		return
	}
	var builtins, kept []*Plugin
	for _, p := range h.plugins {
		switch {
		case p.Manifest() == nil || h.isFailed(p.Name()):
		case p.cand.Dir.Source == discover.Builtin:
			builtins = append(builtins, p)
		default:
			kept = append(kept, p)
		}
	}
	failed := append([]*StartError(nil), h.failed...)
	var failedPlugins []*Plugin
	for _, p := range h.plugins {
		if h.isFailed(p.Name()) {
			failedPlugins = append(failedPlugins, p)
		}
	}
	check := func(ps []*Plugin) []wirecheck.Finding {
		var out []wirecheck.Finding
		for _, f := range h.opts.WiringCheck(h.checkInput(append(append(append([]*Plugin(nil), builtins...), ps...), failedPlugins...), failed)) {
			if f.Error {
				out = append(out, f)
			}
		}
		return out
	}
	base := map[string]bool{}
	for _, f := range check(nil) {
		base[f.ID()] = true
	}
	added := func(ps []*Plugin) []wirecheck.Finding {
		var out []wirecheck.Finding
		for _, f := range check(ps) {
			if !base[f.ID()] && !h.isFailed(f.Plugin) {
				out = append(out, f)
			}
		}
		return out
	}

	blamed := map[string][]string{}
	var order []string
	var unresolved []wirecheck.Finding
	for range len(kept) + 1 {
		fs := added(kept)
		if len(fs) == 0 {
			break
		}
		in := map[string]bool{}
		for _, p := range kept {
			in[p.Name()] = true
		}
		now := map[string][]string{}
		for _, f := range fs {
			if in[f.Plugin] {
				now[f.Plugin] = append(now[f.Plugin], f.String())
			}
		}
		if len(now) == 0 {
			// Located at a built-in or at no plugin: blame whoever's absence
			// removes it.
			for i, p := range kept {
				without := append(append([]*Plugin(nil), kept[:i]...), kept[i+1:]...)
				still := map[string]bool{}
				for _, f := range added(without) {
					still[f.ID()] = true
				}
				for _, f := range fs {
					if !still[f.ID()] {
						now[p.Name()] = append(now[p.Name()], f.String())
					}
				}
			}
		}
		if len(now) == 0 || h.opts.AllowWiringErrors {
			unresolved = fs
			break
		}
		var next []*Plugin
		for _, p := range kept {
			if fs, ok := now[p.Name()]; ok {
				if blamed[p.Name()] == nil {
					order = append(order, p.Name())
				}
				blamed[p.Name()] = append(blamed[p.Name()], fs...)
				continue
			}
			next = append(next, p)
		}
		kept = next
	}

	for _, name := range order {
		var p *Plugin
		for _, q := range h.plugins {
			if q.Name() == name {
				p = q
			}
		}
		ke := &KeptOutError{Plugin: name, Findings: blamed[name]}
		se := &StartError{Plugin: name, Path: p.cand.Path, Reason: "kept out: " + ke.reason(), err: ke}
		p.stop()
		p.mu.Lock()
		p.lastErr = ke
		p.mu.Unlock()
		h.failed = append(h.failed, se)
		h.rl.notices = append(h.rl.notices, ke.Error())
		h.emit(Event{Kind: EventKeptOut, Plugin: name, Detail: ke.Error()})
	}
	if len(unresolved) > 0 {
		var lines []string
		for _, f := range unresolved {
			lines = append(lines, f.String())
		}
		what := "the wiring lint finds errors no plugin could be kept out for"
		if h.opts.AllowWiringErrors {
			what = "started with wiring errors (--allow-wiring-errors): the affected extensions may not work as declared"
		}
		n := what + ":\n  - " + strings.Join(lines, "\n  - ")
		h.rl.notices = append(h.rl.notices, n)
		h.logger.Warn("wiring errors at start", "findings", len(lines))
	}
}

// EventKeptOut: a plugin was kept out at start because it adds wiring errors.
const EventKeptOut = "kept_out"
