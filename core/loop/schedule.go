package loop

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/exocortex/exocortex/core/hooks"
	"github.com/exocortex/exocortex/core/host"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// fire calls every extension of hook, with the effect of calling them one after
// another in their order. build makes the request around an extension's
// HookCall, with the fields only extensions that declare reading them get. handle, if set, takes a response after its
// state changes were applied. A failing extension is reported and skipped,
// unless it is required: then fire returns the error. A canceled ctx stops the
// hook.
//
// Round trips are what an iteration's hook time is made of, so fire saves them
// where the order cannot be told apart:
//   - A round trip goes over the plugin's Dispatch stream when it serves one.
//   - Consecutive extensions of one plugin go in one round trip (a batch); the
//     plugin threads the state from one to the next, and stops the batch where a
//     response changes the next request, so the rest are sent again.
//   - At a hook where no response feeds the next request (see hooks.Info.
//     FeedsNext), an extension of another plugin is called at the same time when
//     it and the extensions before it that have not answered yet all declare
//     effects_declared (their only effects are their declared keys and files),
//     and the state keys and data files their manifests declare do not meet.
//     Every other extension runs in order, as Agent Zero runs them. At system_prompt and
//     message_loop_prompts_after, whose responses feed the prompt so far into
//     the next request, so may an extension that does not read it
//     (reads_prompt).
//
// Responses are always taken, and events emitted, in the extensions' order.
func fire[Req proto.Message, Resp changer](
	ctx context.Context, a *Agent, t *turn, hook exocortexv1.Hook,
	build func(c *exocortexv1.HookCall, f fields) Req,
	rpc host.RPC[Req, Resp],
	handle func(*host.Extension, Resp) error,
) error {
	info, _ := hooks.Of(hook)
	// overtake says whether an extension may be called before the ones ahead
	// of it have answered: at a hook where no response feeds the next request,
	// any may; at the prompt-assembly hooks that thread the prompt so far, those
	// that do not read it (reads_prompt); elsewhere none.
	overtake := func(e *host.Extension) bool {
		switch {
		case a.opts.NoBatching:
			return false
		case len(info.FeedsNext) == 0:
			return true
		}
		return info.ThreadsPrompt && !e.Spec.GetReadsPrompt()
	}
	// pending are the extensions not taken yet, in order; ran holds the answers
	// of those that ran but wait for one before them (in a batch the plugin
	// stopped early) to be taken first.
	pending := a.runnable(t, hook)
	if len(pending) == 0 {
		return nil
	}
	began, trips := time.Now(), 0
	defer func() {
		a.emit(Event{Type: EventHookDone, Iteration: t.iteration, Hook: info.Name,
			DurationUS: time.Since(began).Microseconds(), RoundTrips: trips})
	}()
	ran := map[*host.Extension]*outcome[Resp]{}
	calls := map[*host.Extension]*exocortexv1.HookCall{}
	ctxJSON := map[*host.Extension][]byte{}
	for len(pending) > 0 {
		groups := a.round(pending, func(e *host.Extension) bool { _, ok := ran[e]; return ok }, overtake)
		for _, g := range groups {
			for _, ext := range g {
				calls[ext], ctxJSON[ext] = a.hookCall(t, ext)
			}
		}
		trips += len(groups)
		outs := make([][]outcome[Resp], len(groups))
		run := func(i int) { outs[i] = callGroup(ctx, a.opts.NoBatching, groups[i], calls, build, rpc) }
		if len(groups) == 1 {
			run(0)
		} else {
			var wg sync.WaitGroup
			for i := range groups {
				wg.Go(func() { run(i) })
			}
			wg.Wait()
		}
		for _, rs := range outs {
			b := &batchState{ran: len(rs)}
			for j := range rs {
				rs[j].state = b
				ran[rs[j].ext] = &rs[j]
			}
		}

		// Take the answers in the extensions' order, up to the first extension
		// that has not run.
		for len(pending) > 0 {
			ext := pending[0]
			o, ok := ran[ext]
			if !ok {
				break
			}
			pending = pending[1:]
			if o.state.broken != "" && o.err == nil {
				o.err = &HookError{Plugin: ext.Plugin.Name(), Extension: ext.Name(), Hook: ext.Hook.Name, Problem: o.state.broken}
			}
			// What it read, for its event, is the state after the ones before it:
			// its plugin threaded it through the batch, and others' writes do not
			// meet its reads.
			calls[ext].State = a.store.Read(ext.Access)
			accepted, stop := settle(ctx, a, t, ext, calls[ext], ctxJSON[ext], o.resp, o.err, time.Now().Add(-o.dur), o.pos, o.batch, handle)
			a.charge(t, ext, o.dur)
			delete(ran, ext)
			if stop != nil {
				return stop
			}
			if o.pos < o.state.ran-1 && o.err == nil && o.state.broken == "" && (!accepted || !stateOnly(o.resp.ProtoReflect())) {
				o.state.broken = fmt.Sprintf("ran in a batch after %s, whose response changed what the next extension receives, so its result is discarded; the plugin must stop a batch there", ext.Name())
			}
		}
	}
	return nil
}

// batchState is shared by the answers of one round trip.
type batchState struct {
	ran    int    // how many of its extensions ran
	broken string // why the rest of the batch cannot be trusted
}

// runnable is the extensions that run at hook now: not yet run when once per
// session, and at the tool hooks only those for the tool called.
func (a *Agent) runnable(t *turn, hook exocortexv1.Hook) []*host.Extension {
	if a.opts.Host == nil {
		return nil // an agent without plugins (tests of the loop's own rules)
	}
	all := a.opts.Host.Extensions(hook)
	exts := make([]*host.Extension, 0, len(all))
	for _, ext := range all {
		if ext.Spec.GetOncePerSession() && a.ran(ext) {
			continue
		}
		if t.stoppedForBudget(ext) || (t.only != nil && !t.only(ext)) {
			continue
		}
		if tools := ext.Spec.GetForTools(); len(tools) > 0 && t.tool != "" && !slices.Contains(tools, t.tool) {
			continue
		}
		exts = append(exts, ext)
	}
	return exts
}

// ran reports whether a once-per-session extension has run (a.once is read
// under a.mu: a utility-model call's hooks may run beside the agent).
func (a *Agent) ran(ext *host.Extension) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.once[onceKey(ext)]
}

func onceKey(ext *host.Extension) string { return ext.Name() + "@" + ext.Hook.Name }

// round picks the extensions to call now, from the start of pending, grouped by
// round trip: one group per plugin, each in order. The first pending extension
// is always in it; after it come the ones of its plugin right after it (a
// batch), and the later ones that may overtake those ahead of them.
//
// Extensions that already ran are not called again, but count as not answered
// for those after them.
func (a *Agent) round(pending []*host.Extension, ran func(*host.Extension) bool, overtake func(*host.Extension) bool) [][]*host.Extension {
	groups := [][]*host.Extension{{pending[0]}}
	if a.opts.NoBatching || pending[0].Spec.GetRequired() {
		return groups
	}
	groupOf := map[*host.Plugin]int{pending[0].Plugin: 0}
	in := map[*host.Extension]bool{pending[0]: true}
	for i := 1; i < len(pending); i++ {
		e := pending[i]
		if ran(e) || !canJoin(e, pending[:i], in, groupOf, overtake(e)) {
			continue
		}
		g, ok := groupOf[e.Plugin]
		if !ok {
			g = len(groups)
			groupOf[e.Plugin] = g
			groups = append(groups, nil)
		}
		groups[g] = append(groups[g], e)
		in[e] = true
		if e.Spec.GetRequired() {
			break // its failure stops the hook: nothing after it may have run
		}
	}
	return groups
}

// canJoin reports whether e may be called in the round being built, before the
// earlier extensions that are not in it have answered. overtake says whether e
// may run before earlier extensions of other plugins answer at all.
func canJoin(e *host.Extension, earlier []*host.Extension, in map[*host.Extension]bool, groupOf map[*host.Plugin]int, overtake bool) bool {
	if _, ok := groupOf[e.Plugin]; ok && !e.Plugin.ServesBatches() {
		return false // a second call to the same plugin would wait for the first
	}
	fe := footprintOf(e)
	for _, x := range earlier {
		switch {
		case in[x] && x.Plugin == e.Plugin:
			// Same batch, after x: the plugin threads x's writes to e, and stops
			// the batch where x's response would change e's request.
		case !overtake:
			return false
		case x.Plugin != e.Plugin && (!x.Spec.GetEffectsDeclared() || !e.Spec.GetEffectsDeclared()):
			// In order by default: only extensions that declare their only
			// effects are their declared keys and files run beside another
			// plugin's, since an undeclared effect (a file, a service, a cache)
			// would go unseen by the footprint check below.
			return false
		case !in[x] && (x.Plugin == e.Plugin || x.Spec.GetRequired() || e.Spec.GetRequired()):
			// Never overtake an extension of the same plugin, or a required one;
			// a required one never overtakes.
			return false
		case footprintOf(x).meets(fe):
			return false
		}
	}
	return true
}

// footprint is what an extension's call may touch that another's could see:
// the state keys it reads and writes, and the data files its plugin declares
// for it, or for no one in particular (then for each of its extensions).
type footprint struct{ reads, writes map[string]bool }

func footprintOf(ext *host.Extension) footprint {
	return declared(ext.Spec, ext.Plugin.Manifest().GetFiles())
}

// declared is the footprint spec declares, with the data files of its
// plugin's manifest.
func declared(spec *exocortexv1.ExtensionSpec, files []*exocortexv1.FileSpec) footprint {
	f := footprint{reads: map[string]bool{}, writes: map[string]bool{}}
	for _, k := range spec.GetReads() {
		f.reads["key "+k] = true
	}
	for _, k := range spec.GetWrites() {
		f.writes["key "+k] = true
	}
	for _, k := range spec.GetResets() {
		f.writes["key "+k] = true
	}
	for _, fs := range files {
		if u := fs.GetUser(); u != spec.GetName() && u != "" {
			continue
		}
		id := "file " + fs.GetId()
		if fs.GetId() == "" {
			id = "file " + fs.GetPath()
		}
		switch fs.GetAccess() {
		case exocortexv1.Access_ACCESS_READ:
			f.reads[id] = true
		case exocortexv1.Access_ACCESS_WRITE:
			f.writes[id] = true
		default: // read-write, or unspecified: assume both
			f.reads[id], f.writes[id] = true, true
		}
	}
	return f
}

// meets reports whether two calls could see each other's effects.
func (f footprint) meets(g footprint) bool {
	for k := range f.writes {
		if g.reads[k] || g.writes[k] {
			return true
		}
	}
	for k := range g.writes {
		if f.reads[k] {
			return true
		}
	}
	return false
}

// fields says which request fields an extension declared it reads: the whole
// conversation (reads_history) and the prompt as the ones before it left it
// (reads_prompt).
type fields struct{ history, prompt bool }

func fieldsOf(ext *host.Extension) fields {
	return fields{history: ext.Spec.GetReadsHistory(), prompt: ext.Spec.GetReadsPrompt()}
}

// outcome is one extension's answer in a round.
type outcome[Resp any] struct {
	ext  *host.Extension
	resp Resp
	err  error
	dur  time.Duration
	// pos is its place in its round trip, batch the number of extensions that
	// shared it (1 for a call of its own).
	pos, batch int
	state      *batchState
}

// callGroup calls the extensions of one plugin, in one round trip, and returns
// the outcomes of those that ran (a batch may stop early). The round trip goes
// over the plugin's Dispatch stream when it serves one (a single extension
// too), else by RunBatch, or by the hook's own RPC for a single extension.
func callGroup[Req proto.Message, Resp changer](
	ctx context.Context, noStream bool, exts []*host.Extension, calls map[*host.Extension]*exocortexv1.HookCall,
	build func(*exocortexv1.HookCall, fields) Req, rpc host.RPC[Req, Resp],
) []outcome[Resp] {
	single := func() []outcome[Resp] {
		ext := exts[0]
		start := time.Now()
		resp, err := host.Call(ctx, ext, build(calls[ext], fieldsOf(ext)), rpc)
		return []outcome[Resp]{{ext: ext, resp: resp, err: err, dur: time.Since(start), batch: 1}}
	}
	stream := !noStream && exts[0].Plugin.ServesDispatch()
	if len(exts) == 1 && !stream {
		return single()
	}
	hcs := make([]*exocortexv1.HookCall, len(exts))
	var f fields
	for j, ext := range exts {
		hcs[j] = calls[ext]
		g := fieldsOf(ext)
		f.history, f.prompt = f.history || g.history, f.prompt || g.prompt
	}
	breq := &exocortexv1.BatchRequest{Calls: hcs}
	// The plugin clears those fields again for the extensions that did not
	// declare reading them. The hook request goes without its call: each
	// extension's request gets calls[i] in its place (both SDKs set it before the
	// handler runs), so a call there would be a second copy of calls[0], its
	// context and custom_data map the costliest part of the message to encode and
	// decode (docs/perf/suite.md, "The hook path's remaining regression").
	base := build(hcs[0], f).ProtoReflect()
	base.Clear(base.Descriptor().Fields().ByName("call"))
	breq.ProtoReflect().Set(batchField(breq.ProtoReflect(), exts[0].Hook.Hook), protoreflect.ValueOfMessage(base))
	start := time.Now()
	var bresp *exocortexv1.BatchResponse
	var err error
	sent := false
	if stream {
		bresp, err, sent = host.Dispatch(ctx, exts, breq)
	}
	if !sent {
		if len(exts) == 1 {
			return single() // the stream is busy
		}
		bresp, err = host.CallBatch(ctx, exts, breq)
	}
	total := time.Since(start)
	fail := func(n int, err error) []outcome[Resp] {
		out := make([]outcome[Resp], n)
		for j := range out {
			out[j] = outcome[Resp]{ext: exts[j], err: err, pos: j, batch: len(exts)}
		}
		out[0].dur = total
		return out
	}
	if err != nil {
		// A crash, a missed deadline or a cancel: none of them has a result.
		return fail(len(exts), err)
	}
	results := bresp.GetResults()
	if len(results) == 0 || len(results) > len(exts) {
		return fail(1, &HookError{Plugin: exts[0].Plugin.Name(), Extension: exts[0].Name(), Hook: exts[0].Hook.Name,
			Problem: fmt.Sprintf("answered a batch of %d extensions with %d results", len(exts), len(results))})
	}
	// The round trip's own cost goes to the first extension, so that the events'
	// durations add up to the hook's time.
	var inPlugin time.Duration
	for _, r := range results {
		inPlugin += time.Duration(r.GetDurationUs()) * time.Microsecond
	}
	out := make([]outcome[Resp], len(results))
	for j, r := range results {
		ext := exts[j]
		o := outcome[Resp]{ext: ext, dur: time.Duration(r.GetDurationUs()) * time.Microsecond, pos: j, batch: len(exts)}
		if j == 0 {
			o.dur += max(total-inPlugin, 0)
		}
		switch {
		case r.GetError() != "":
			o.err = &host.CallError{Plugin: ext.Plugin.Name(), Extension: ext.Name(), Hook: ext.Hook.Name, Kind: host.Returned, Err: errors.New(r.GetError())}
		default:
			m := r.ProtoReflect()
			if fd := batchField(m, ext.Hook.Hook); m.Has(fd) {
				o.resp, _ = m.Get(fd).Message().Interface().(Resp)
			}
			if any(o.resp) == nil || !o.resp.ProtoReflect().IsValid() {
				o.err = &HookError{Plugin: ext.Plugin.Name(), Extension: ext.Name(), Hook: ext.Hook.Name, Problem: "answered its batch with a result for another hook, or none"}
			}
		}
		out[j] = o
	}
	return out
}
