package lint

import (
	"fmt"
	"slices"

	"github.com/exocortex/exocortex/core/hooks"
	"github.com/exocortex/exocortex/core/state"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/wiring"
)

// phase is where in the loop a write or a read happens.
type phase uint8

const (
	phaseInit phase = iota // agent_init
	phasePre               // hist_add_before for the user message, and monologue_start
	phaseIter              // inside an iteration
	phasePost              // monologue_end
)

// tick is a point of the simulated session. Monologue and iteration numbers
// count across the whole simulation, so equal numbers mean the same one; 0 means
// none.
type tick struct {
	session, monologue, iteration int
	phase                         phase
}

// stamp is a key's value in the simulation: whether it holds one and when it
// was written.
type stamp struct {
	set bool
	// carried marks a persistent key's value left by an earlier run.
	carried bool
	at      tick
}

// fresh reports whether a value written at w is current for a reader at r: it
// was written in the reader's own iteration, or before the iterations of the
// reader's monologue (monologue_start, agent_init), or, for a reader at
// monologue_end, anywhere in its monologue.
func fresh(w stamp, r tick) bool {
	if w.carried || w.at.session != r.session {
		return false
	}
	switch w.at.phase {
	case phaseInit:
		return true
	case phasePre:
		return w.at.monologue == r.monologue
	case phaseIter:
		return w.at.iteration == r.iteration || (r.phase == phasePost && w.at.monologue == r.monologue)
	}
	return r.phase == phasePost && w.at.monologue == r.monologue
}

// observed counts what one extension saw of one key over the simulation.
type observed struct {
	empty, fresh, stale int
}

// The simulation's size: enough for every "first time" and "later times" case
// of each scope to occur.
const (
	simSessions   = 2
	simMonologues = 2
	simIterations = 2
)

// timeline runs the declared pipeline through a simulated session and reports
// readers that never see a value (EXO033) and readers that fire before every
// writer of their key in the same iteration (EXO034). See the package doc for
// the model.
func (c *checker) timeline() {
	tracked := map[string]state.Decl{}
	for _, k := range c.g.Keys {
		if k.Declared() && k.Decl().Owner != "core" && len(running(k.Readers)) > 0 && len(running(writersOf(k))) > 0 {
			tracked[k.Name] = k.Decl()
		}
	}
	if len(tracked) == 0 {
		return
	}
	byHook := map[exocortexv1.Hook][]*wiring.Extension{}
	for _, e := range c.g.Extensions {
		if e.Runs() {
			byHook[e.Spec.GetHook()] = append(byHook[e.Spec.GetHook()], e)
		}
	}

	values := map[string]stamp{}
	type readAt struct {
		ext *wiring.Extension
		key string
	}
	seen := map[readAt]*observed{}
	onceFired := map[*wiring.Extension]int{}
	var now tick

	fire := func(h exocortexv1.Hook) {
		for _, e := range byHook[h] {
			if e.Spec.GetOncePerSession() {
				if onceFired[e] == now.session {
					continue
				}
				onceFired[e] = now.session
			}
			for _, k := range e.Spec.GetReads() {
				if _, ok := tracked[k]; !ok {
					continue
				}
				o := seen[readAt{e, k}]
				if o == nil {
					o = &observed{}
					seen[readAt{e, k}] = o
				}
				switch v := values[k]; {
				case !v.set:
					o.empty++
				case fresh(v, now):
					o.fresh++
				default:
					o.stale++
				}
			}
			for _, k := range slices.Concat(e.Spec.GetWrites(), e.Spec.GetResets()) {
				if _, ok := tracked[k]; ok {
					values[k] = stamp{set: true, at: now}
				}
			}
		}
	}
	reset := func(scopes ...exocortexv1.Scope) {
		for k, d := range tracked {
			if slices.Contains(scopes, d.Scope) {
				delete(values, k)
			}
		}
	}

	for k, d := range tracked {
		if d.Scope == exocortexv1.Scope_SCOPE_PERSISTENT {
			values[k] = stamp{set: true, carried: true}
		}
	}
	mono, iter := 0, 0
	iteration := hooks.Iteration()
	for s := 1; s <= simSessions; s++ {
		now = tick{session: s, phase: phaseInit}
		reset(exocortexv1.Scope_SCOPE_ITERATION, exocortexv1.Scope_SCOPE_MONOLOGUE, exocortexv1.Scope_SCOPE_SESSION)
		if s == 1 {
			fire(exocortexv1.Hook_HOOK_STARTUP_MIGRATION) // the process's start
		}
		fire(exocortexv1.Hook_HOOK_AGENT_INIT)
		fire(exocortexv1.Hook_HOOK_BANNERS)
		for range simMonologues {
			mono++
			now = tick{session: s, monologue: mono, phase: phasePre}
			reset(exocortexv1.Scope_SCOPE_MONOLOGUE)
			fire(exocortexv1.Hook_HOOK_USER_MESSAGE_UI)
			fire(exocortexv1.Hook_HOOK_HIST_ADD_BEFORE) // the user's message
			fire(exocortexv1.Hook_HOOK_MONOLOGUE_START)
			for range simIterations {
				iter++
				now = tick{session: s, monologue: mono, iteration: iter, phase: phaseIter}
				reset(exocortexv1.Scope_SCOPE_ITERATION)
				for _, h := range iteration {
					fire(h)
				}
			}
			now = tick{session: s, monologue: mono, phase: phasePost}
			fire(exocortexv1.Hook_HOOK_MONOLOGUE_END)
			fire(exocortexv1.Hook_HOOK_PROCESS_CHAIN_END)
			fire(exocortexv1.Hook_HOOK_JOB_LOOP) // the front end's clock, between monologues
		}
	}

	for _, e := range c.g.Extensions {
		if !e.Runs() {
			continue
		}
		for _, k := range uniqStrings(e.Spec.GetReads()) {
			o := seen[readAt{e, k}]
			if o == nil {
				continue
			}
			key := c.g.Key(k)
			d := key.Decl()
			var others []*wiring.Extension
			for _, w := range running(writersOf(key)) {
				if w.Name != e.Name || w.Plugin != e.Plugin {
					others = append(others, w)
				}
			}
			if o.fresh+o.stale == 0 {
				c.add(Finding{Code: "EXO033", Severity: Error, Plugin: e.Plugin.Name, Extension: e.Name, Key: k,
					Message: fmt.Sprintf("extension %s reads %q but never sees a value in a simulated session of %d monologues of %d iterations: the key is %s-scoped, reset %s, and its writers run after the reader or before the reset; written by: %s",
						at(e), k, simMonologues, simIterations, state.ScopeName(d.Scope), resetWhen(d.Scope), ats(running(writersOf(key)))),
					Fix: "move the reader after a writer in the same iteration (a later hook or a higher order), or give the key a longer scope"})
				continue
			}
			if len(others) < len(running(writersOf(key))) || e.Hook.Stage == hooks.PerMessage {
				// The extension keeps its own state across calls, or fires at every
				// history add: an earlier value is what it expects.
				continue
			}
			if o.stale == 0 && o.empty == 0 {
				continue
			}
			var what string
			if o.stale > 0 {
				what = fmt.Sprintf("it sees the value from %s", earlier(d.Scope))
			} else {
				what = fmt.Sprintf("it sees nothing in %d of its %d simulated calls", o.empty, o.empty+o.fresh)
			}
			c.add(Finding{Code: "EXO034", Severity: Info, Plugin: e.Plugin.Name, Extension: e.Name, Key: k,
				Message: fmt.Sprintf("extension %s reads %q before any writer of it in the same %s, so %s; written by: %s",
					at(e), k, stageWord(e.Hook.Stage), what, ats(others)),
				Fix: "nothing to do if the earlier value is what it needs; otherwise move it after the writer (a later hook or a higher order)"})
		}
	}
}

func resetWhen(s exocortexv1.Scope) string {
	switch s {
	case exocortexv1.Scope_SCOPE_ITERATION:
		return "at every message_loop_start"
	case exocortexv1.Scope_SCOPE_MONOLOGUE:
		return "at every monologue_start"
	case exocortexv1.Scope_SCOPE_SESSION:
		return "when a session starts"
	}
	return "never"
}

// earlier says where a value seen before this iteration's writers comes from.
func earlier(s exocortexv1.Scope) string {
	switch s {
	case exocortexv1.Scope_SCOPE_MONOLOGUE:
		return "an earlier iteration of the monologue, and nothing in a monologue's first iteration"
	case exocortexv1.Scope_SCOPE_SESSION:
		return "an earlier iteration or monologue, and nothing before the session's first write"
	case exocortexv1.Scope_SCOPE_PERSISTENT:
		return "an earlier iteration, monologue or session"
	}
	return "an earlier iteration"
}

func stageWord(s hooks.Stage) string {
	switch s {
	case hooks.PerSession:
		return "session"
	case hooks.PerMonologue:
		return "monologue"
	case hooks.PerProcess:
		return "process"
	case hooks.Periodic:
		return "minute"
	}
	return "iteration"
}
