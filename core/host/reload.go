package host

// Hot reload.
//
// A plugin that changes on disk (Watch) or that the operator names (Reload) is
// started again as a separate *Plugin, beside the running one. It must start,
// hand-shake, answer its manifest and stay up for a moment; then the table it
// would make together with every other plugin must pass Wire's checks, keep the
// types of the state keys the session already holds, and add no error-severity
// finding of the wiring lint. Only then is it staged. A version that fails any of
// this is stopped and reported (a reload_rejected event, LastRejection in Status)
// and the running version keeps serving.
//
// A staged table is swapped in between iterations, never during one: the loop
// calls BeginIteration at the top of each iteration, which installs the staged
// table when no iteration is in flight. Within an iteration the loop therefore
// sees one table, and a call already in flight finishes on the process it
// started on: a replaced plugin is retired, drained (its in-flight calls end) and
// then stopped. Several changes staged before the next iteration are applied
// together, each having been vetted against the others.

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/exocortex/exocortex/core/discover"
	"github.com/exocortex/exocortex/core/state"
	"github.com/exocortex/exocortex/core/watch"
	"github.com/exocortex/exocortex/core/wirecheck"
)

const (
	// startSettle is how long a new version must stay up after its handshake
	// before it is vetted: a plugin that dies at once is rejected, not swapped in.
	startSettle = 100 * time.Millisecond
	// drainMax bounds how long a replaced plugin is kept for calls in flight
	// (a long tool call, say) before it is stopped anyway.
	drainMax = 2 * time.Minute
)

// Event kinds of hot reload, besides load, load_failed, crash, restart,
// quarantine and unquarantine.
const (
	// EventStaged: a new version passed every check and waits for the next iteration.
	EventStaged = "staged"
	// EventReload: a new version of a plugin was swapped in.
	EventReload = "reload"
	// EventAdded: a new plugin was swapped in.
	EventAdded = "added"
	// EventRemoved: a deleted plugin was taken out.
	EventRemoved = "removed"
	// EventReloadRejected: a new version, a new plugin or a removal was refused;
	// the running table is unchanged. Detail says why.
	EventReloadRejected = "reload_rejected"
	// EventUntrusted: a project's plugins were not loaded, since the project is
	// not trusted.
	EventUntrusted = "untrusted"
)

// ReloadError is a new version (or a new plugin, or a removal) that was not
// swapped in. The running table is unchanged.
type ReloadError struct {
	Plugin string
	// Stage is where it failed: "start" (start-up, handshake, manifest, or an
	// exit right after), "wiring" (Wire's checks), "state" (a key the session
	// holds would change type), "lint" (new error findings), "unknown" (no such
	// plugin) or "closed".
	Stage  string
	Reason string
	// New is true when the plugin was not loaded before.
	New bool
	Err error
}

func (e *ReloadError) Error() string {
	switch {
	case e.Stage == "unknown" || e.Stage == "closed":
		return fmt.Sprintf("plugin %s: %s", e.Plugin, e.Reason)
	case e.New:
		return fmt.Sprintf("new plugin %s was not loaded (%s check): %s", e.Plugin, e.Stage, e.Reason)
	}
	return fmt.Sprintf("the new version of plugin %s was not swapped in (%s check); the running version keeps serving: %s", e.Plugin, e.Stage, e.Reason)
}

func (e *ReloadError) Unwrap() error { return e.Err }

// reloadState is the host's hot-reload bookkeeping.
type reloadState struct {
	// vet serialises vetting: one new version is checked at a time, against the
	// table that will be in force once everything staged before it applies.
	vet sync.Mutex

	mu        sync.Mutex
	dirs      []discover.Dir // the directories scanned: untrusted projects left out
	staged    *staged
	active    int // iterations in flight
	info      map[string]*reloadInfo
	notices   []string
	untrusted []PluginStatus
	skipped   []discover.Skip
	cancel    context.CancelFunc
	done      chan struct{}
	closing   chan struct{}
	closed    bool
	retiring  sync.WaitGroup
}

// staged is the table to install at the next iteration.
type staged struct {
	plugins  []*Plugin
	failed   []*StartError
	registry *state.Registry
	table    Table
	shadows  []Shadow // plugin-level, from discovery
	events   []Event  // emitted when applied
	names    []string
}

// reloadInfo is what Status shows of a plugin's reloads.
type reloadInfo struct {
	reloads       int
	pending       string
	lastRejection string
	// rejected is set for a plugin that was never loaded: its rejected version,
	// for Status.
	rejected *PluginStatus
}

func (r *reloadState) infoOf(name string) *reloadInfo {
	if r.info == nil {
		r.info = map[string]*reloadInfo{}
	}
	in := r.info[name]
	if in == nil {
		in = &reloadInfo{}
		r.info[name] = in
	}
	return in
}

func (r *reloadState) closingCh() chan struct{} {
	if r.closing == nil {
		r.closing = make(chan struct{})
	}
	return r.closing
}

// Watch watches the plugin directories the host scans (untrusted projects left
// out) and reloads what changes: a changed plugin is reloaded, a new one added,
// a deleted one removed, each vetted as Reload does. It returns once the watches
// are in place; watching stops when ctx ends or the host is closed.
func (h *Host) Watch(ctx context.Context) error {
	h.rl.mu.Lock()
	if h.rl.closed {
		h.rl.mu.Unlock()
		return errors.New("watching plugins: the host is closed")
	}
	if h.rl.cancel != nil {
		h.rl.mu.Unlock()
		return errors.New("watching plugins: already watching")
	}
	dirs := append([]discover.Dir(nil), h.rl.dirs...)
	h.rl.mu.Unlock()

	w, err := watch.New(watch.Options{Dirs: dirs, Debounce: h.opts.WatchDebounce, Logger: h.logger})
	if err != nil {
		return err
	}
	wctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	h.rl.mu.Lock()
	h.rl.cancel, h.rl.done = cancel, done
	h.rl.mu.Unlock()
	go func() {
		defer close(done)
		defer w.Close()
		_ = w.Run(wctx, func(c watch.Change) {
			h.logger.Debug("plugin changed on disk", "change", c.String())
			from := c.Candidate
			_ = h.reconcile(wctx, c.Name, c.Last, &from)
		})
	}()
	return nil
}

// Reload starts the plugin called name again from its file and stages the new
// version for the next iteration, with the checks a change on disk gets. It
// returns nil once the new version is staged (Pending names it until then), or
// a *ReloadError saying why it was refused; the running version keeps serving.
// A name that is no longer on disk stages the plugin's removal.
func (h *Host) Reload(ctx context.Context, name string) error {
	return h.reconcile(ctx, name, time.Now(), nil)
}

// BeginIteration is called by the loop at the top of every iteration, and
// around the opening of every monologue (the user message's hist_add_before and
// monologue_start). When no other iteration is in flight it swaps in what is
// staged, and it points store at the declarations in force. The returned function ends the iteration; call
// it when the iteration is over (defer it):
//
//	defer a.opts.Host.BeginIteration(a.store)()
func (h *Host) BeginIteration(store *state.Store) (end func()) {
	h.rl.mu.Lock()
	var evs []Event
	if h.rl.active == 0 {
		evs = h.applyLocked()
	}
	h.rl.active++
	h.rl.mu.Unlock()
	h.emitAll(evs)
	if store != nil {
		if reg := h.Registry(); store.Registry() != reg {
			store.SetRegistry(reg)
		}
	}
	var once sync.Once
	return func() {
		once.Do(func() {
			h.rl.mu.Lock()
			h.rl.active--
			h.rl.mu.Unlock()
		})
	}
}

// ApplyPending swaps in what is staged now, unless an iteration is in flight,
// and reports whether it did. It is for hosts driven without the loop (tools,
// tests); call it only between hooks. A loop's state store must then be given
// the new declarations (Store.SetRegistry(h.Registry())).
func (h *Host) ApplyPending() bool {
	h.rl.mu.Lock()
	if h.rl.active > 0 || h.rl.staged == nil {
		h.rl.mu.Unlock()
		return false
	}
	evs := h.applyLocked()
	h.rl.mu.Unlock()
	h.emitAll(evs)
	return true
}

// Pending names the plugins whose new version, addition or removal is staged.
func (h *Host) Pending() []string {
	h.rl.mu.Lock()
	defer h.rl.mu.Unlock()
	if h.rl.staged == nil {
		return nil
	}
	return append([]string(nil), h.rl.staged.names...)
}

// Notices are what the operator should be told about loading: a project whose
// plugins were not loaded because it is not trusted, a plugin kept out for
// wiring errors, a plugin file without its execute bit, a configured plugin
// directory that does not exist, a plugin directory entry that cannot load.
func (h *Host) Notices() []string {
	h.rl.mu.Lock()
	defer h.rl.mu.Unlock()
	return append([]string(nil), h.rl.notices...)
}

// applyLocked installs the staged table and retires the plugins it replaces.
// h.rl.mu is held. It returns the events to emit once the lock is released.
func (h *Host) applyLocked() []Event {
	s := h.rl.staged
	if s == nil || h.rl.closed {
		return nil
	}
	h.rl.staged = nil
	h.mu.Lock()
	old := h.plugins
	h.plugins, h.failed = s.plugins, s.failed
	h.registry, h.byHook, h.tools = s.registry, s.table.ByHook, s.table.Tools
	h.shadows = append(append([]Shadow(nil), s.shadows...), s.table.Shadows...)
	h.mu.Unlock()

	keep := map[*Plugin]bool{}
	for _, p := range s.plugins {
		keep[p] = true
	}
	var retire []*Plugin
	for _, p := range old {
		if !keep[p] {
			retire = append(retire, p)
		}
	}
	now := time.Now().UTC()
	evs := make([]Event, len(s.events))
	for i, e := range s.events {
		e.Time = now
		evs[i] = e
		in := h.rl.infoOf(e.Plugin)
		in.pending = ""
		if e.Kind != EventRemoved {
			in.reloads++
		}
		if e.Kind == EventRemoved {
			delete(h.rl.info, e.Plugin)
		}
	}
	closing := h.rl.closingCh()
	for _, p := range retire {
		h.rl.retiring.Add(1)
		go func() {
			defer h.rl.retiring.Done()
			p.retire(drainMax, closing)
		}()
	}
	return evs
}

// emitAll emits the events of an applied table, outside the locks.
func (h *Host) emitAll(evs []Event) {
	for _, e := range evs {
		h.emit(e)
	}
}

// reconcile brings plugin name in line with the disk: it starts the version
// found there (or notes its removal), vets the table it would make, and stages
// it. from is the candidate the watcher saw change (nil for Reload); a change to
// a plugin that a higher-priority one of the same name hides changes nothing.
func (h *Host) reconcile(ctx context.Context, name string, trigger time.Time, from *discover.Candidate) error {
	h.rl.vet.Lock()
	defer h.rl.vet.Unlock()
	h.rl.mu.Lock()
	closed := h.rl.closed
	h.rl.mu.Unlock()
	if closed {
		return &ReloadError{Plugin: name, Stage: "closed", Reason: "the host is closed"}
	}

	cands, plShadows := h.candidates(h.scanDirsNow())
	var want discover.Candidate
	wantOK := false
	pos := map[string]int{}
	for i, c := range cands {
		pos[c.Name] = i
		if c.Name == name {
			want, wantOK = c, true
		}
	}
	base, baseFailed, baseReg := h.next()
	var cur *Plugin
	for _, p := range base {
		if p.Name() == name {
			cur = p
		}
	}
	isNew := cur == nil || cur.Manifest() == nil
	switch {
	case !wantOK && cur == nil:
		h.rl.mu.Lock()
		delete(h.rl.info, name) // a rejected plugin that went away
		h.rl.mu.Unlock()
		if from != nil {
			return nil
		}
		return &ReloadError{Plugin: name, Stage: "unknown", Reason: "no plugin of that name is loaded or found in the plugin directories"}
	case from != nil && wantOK && cur != nil && want.Path == cur.cand.Path && from.Path != want.Path:
		// A hidden copy changed; the one that runs did not.
		return nil
	}

	kind := EventReload
	var np *Plugin
	if wantOK {
		if isNew {
			kind = EventAdded
		}
		np = &Plugin{cand: want, h: h, stderr: newTail(20, h.opts.PluginLog)}
		np.stderr.watch = np.watchLog
		if err := h.startNew(ctx, np); err != nil {
			return h.reject(name, "start", isNew, err, np, want)
		}
	} else {
		kind = EventRemoved
	}

	// The plugin list once this is in: name replaced, added or taken out, in
	// discovery's priority order.
	var list []*Plugin
	for _, p := range base {
		if p.Name() != name {
			list = append(list, p)
		}
	}
	if np != nil {
		list = append(list, np)
	}
	rank := func(p *Plugin) int {
		if i, ok := pos[p.Name()]; ok {
			return i
		}
		return len(cands)
	}
	sort.SliceStable(list, func(i, j int) bool { return rank(list[i]) < rank(list[j]) })
	var failed []*StartError
	for _, f := range baseFailed {
		if f.Plugin != name {
			failed = append(failed, f)
		}
	}
	isFailed := map[string]bool{}
	for _, f := range failed {
		isFailed[f.Plugin] = true
	}
	var loaded []*Plugin
	for _, p := range list {
		if !isFailed[p.Name()] && p.Manifest() != nil {
			loaded = append(loaded, p)
		}
	}

	reg, table, err := Wire(loaded, h.opts)
	if err != nil {
		return h.reject(name, "wiring", isNew, err, np, want)
	}
	if err := keptTypes(baseReg, reg); err != nil {
		return h.reject(name, "state", isNew, err, np, want)
	}
	if err := h.lintDelta(base, baseFailed, list, failed); err != nil {
		return h.reject(name, "lint", isNew, err, np, want)
	}

	var ev Event
	switch kind {
	case EventRemoved:
		ev = Event{Kind: kind, Plugin: name, Detail: cur.cand.Path}
	case EventAdded:
		ev = Event{Kind: kind, Plugin: name, Detail: fmt.Sprintf("version %s from %s", orUnknown(np.Manifest().GetVersion()), want.Path)}
	default:
		ev = Event{Kind: kind, Plugin: name, Detail: fmt.Sprintf("version %s -> %s from %s", orUnknown(cur.Manifest().GetVersion()), orUnknown(np.Manifest().GetVersion()), want.Path)}
	}
	ready := time.Since(trigger).Round(time.Millisecond)
	if from != nil {
		ev.Detail += fmt.Sprintf("; ready %s after the last change on disk", ready)
	} else {
		ev.Detail += fmt.Sprintf("; ready %s after the reload was asked for", ready)
	}

	h.rl.mu.Lock()
	if h.rl.closed {
		h.rl.mu.Unlock()
		if np != nil {
			np.stop()
		}
		return &ReloadError{Plugin: name, Stage: "closed", Reason: "the host was closed during the reload"}
	}
	prev := h.rl.staged
	s := &staged{plugins: list, failed: failed, registry: reg, table: table, shadows: plShadows}
	var earlier *Event // what is already staged for name, not yet applied
	if prev != nil {
		for _, e := range prev.events {
			if e.Plugin != name {
				s.events = append(s.events, e)
				s.names = append(s.names, e.Plugin)
			} else {
				earlier = &e
			}
		}
	}
	merged, ok := mergeStaged(earlier, ev)
	if ok {
		s.events = append(s.events, merged)
		s.names = append(s.names, name)
		in := h.rl.infoOf(name)
		in.pending = fmt.Sprintf("%s staged at %s; it takes effect at the next iteration", merged.Kind, time.Now().Format(time.TimeOnly))
		in.lastRejection, in.rejected = "", nil
	} else {
		delete(h.rl.info, name) // added and removed again before it ever ran
	}
	h.rl.staged = s
	h.rl.mu.Unlock()

	// A version staged earlier and superseded before it ever served is stopped.
	if prev != nil {
		live := map[*Plugin]bool{}
		for _, p := range h.Plugins() {
			live[p] = true
		}
		inList := map[*Plugin]bool{}
		for _, p := range list {
			inList[p] = true
		}
		for _, p := range prev.plugins {
			if !inList[p] && !live[p] {
				p.stop()
			}
		}
	}
	detail := "takes effect at the next iteration"
	if np != nil {
		detail = fmt.Sprintf("version %s from %s passed start-up, wiring and lint checks; %s", orUnknown(np.Manifest().GetVersion()), want.Path, detail)
	} else {
		detail = "removal passed the wiring and lint checks; " + detail
	}
	h.emit(Event{Kind: EventStaged, Plugin: name, Detail: detail})
	return nil
}

// mergeStaged combines a change staged earlier for a plugin, not applied yet,
// with a new one, as the running table will see them: added then changed is
// added, added then removed is nothing, removed then added back is a reload.
func mergeStaged(earlier *Event, ev Event) (Event, bool) {
	if earlier == nil {
		return ev, true
	}
	switch {
	case earlier.Kind == EventAdded && ev.Kind == EventRemoved:
		return Event{}, false
	case earlier.Kind == EventAdded:
		ev.Kind = EventAdded
	case earlier.Kind == EventRemoved && ev.Kind == EventAdded:
		ev.Kind = EventReload
	}
	return ev, true
}

func orUnknown(v string) string {
	if v == "" {
		return "(unversioned)"
	}
	return v
}

// next returns the plugins, failures and declarations that will be in force
// once what is staged applies.
func (h *Host) next() ([]*Plugin, []*StartError, *state.Registry) {
	h.rl.mu.Lock()
	s := h.rl.staged
	h.rl.mu.Unlock()
	if s != nil {
		return append([]*Plugin(nil), s.plugins...), append([]*StartError(nil), s.failed...), s.registry
	}
	h.mu.RLock()
	defer h.mu.RUnlock()
	return append([]*Plugin(nil), h.plugins...), append([]*StartError(nil), h.failed...), h.registry
}

// startNew starts a new version and checks that it stays up.
func (h *Host) startNew(ctx context.Context, p *Plugin) error {
	p.mu.Lock()
	err := p.start(ctx)
	p.mu.Unlock()
	if err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		p.stop()
		return ctx.Err()
	case <-time.After(startSettle):
	}
	p.mu.Lock()
	exited := p.client == nil || p.client.Exited()
	p.mu.Unlock()
	if exited {
		p.stop()
		return &StartError{Plugin: p.Name(), Path: p.cand.Path, Reason: "it exited right after its handshake", Stderr: p.StderrTail()}
	}
	return nil
}

// reject reports a refused reload and stops the version that was started for it.
func (h *Host) reject(name, stage string, isNew bool, err error, np *Plugin, cand discover.Candidate) error {
	if np != nil {
		np.stop()
	}
	re := &ReloadError{Plugin: name, Stage: stage, Reason: err.Error(), New: isNew, Err: err}
	h.rl.mu.Lock()
	in := h.rl.infoOf(name)
	in.lastRejection = re.Error()
	if isNew && np != nil {
		in.rejected = &PluginStatus{
			Name: name, Path: cand.Path, Source: cand.Dir.Source.String(), State: StateRejected,
			LastError: re.Error(), Stderr: np.StderrTail(), Extensions: []ExtensionInfo{},
		}
	}
	h.rl.mu.Unlock()
	h.emit(Event{Kind: EventReloadRejected, Plugin: name, Detail: re.Error()})
	return re
}

// keptTypes refuses a declaration change the running session cannot follow: a
// key it may hold values of, declared with another type or scope.
func keptTypes(before, after *state.Registry) error {
	if before == nil {
		return nil
	}
	var problems []string
	for _, d := range after.All() {
		old, ok := before.Lookup(d.Name)
		if !ok {
			continue
		}
		if old.Type != d.Type {
			problems = append(problems, fmt.Sprintf("state key %q would change type from %s to %s", d.Name, old.Type, d.Type))
		}
		if old.Scope != d.Scope {
			problems = append(problems, fmt.Sprintf("state key %q would change scope from %s to %s", d.Name, state.ScopeName(old.Scope), state.ScopeName(d.Scope)))
		}
	}
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("%s; the running session holds values of the old declaration: restart the session to change it", strings.Join(problems, "; "))
}

// lintDelta runs the wiring check (Options.WiringCheck) over the table before
// and after and refuses error findings the change adds. Findings that were
// there before are not the new version's doing, so they do not block it.
func (h *Host) lintDelta(before []*Plugin, beforeFailed []*StartError, after []*Plugin, afterFailed []*StartError) error {
	if h.opts.WiringCheck == nil {
		return nil
	}
	old := map[string]bool{}
	for _, f := range h.opts.WiringCheck(h.checkInput(before, beforeFailed)) {
		if f.Error {
			old[f.ID()] = true
		}
	}
	var added []string
	for _, f := range h.opts.WiringCheck(h.checkInput(after, afterFailed)) {
		if f.Error && !old[f.ID()] {
			added = append(added, f.String())
		}
	}
	if len(added) == 0 {
		return nil
	}
	return fmt.Errorf("the wiring lint finds new errors:\n  - %s", strings.Join(added, "\n  - "))
}

// checkInput is the wiring check's view of a plugin list: manifests, load
// failures and priorities, with the operator's enabled and disabled extensions.
func (h *Host) checkInput(plugins []*Plugin, failed []*StartError) wirecheck.Input {
	h.rl.mu.Lock()
	dirs := h.rl.dirs
	h.rl.mu.Unlock()
	priority := map[string]int{}
	for i, d := range dirs {
		priority[d.Path] = i
	}
	fail := map[string]*StartError{}
	for _, f := range failed {
		fail[f.Plugin] = f
	}
	var out []wirecheck.Plugin
	for _, p := range plugins {
		c := p.Candidate()
		wp := wirecheck.Plugin{Name: p.Name(), Path: c.Path, Manifest: p.Manifest()}
		if c.Dir.Source == discover.Builtin {
			wp.Priority = len(dirs)
		} else {
			wp.Dir, wp.Priority = c.Dir.Path, priority[c.Dir.Path]
		}
		if f, ok := fail[p.Name()]; ok {
			wp.LoadError, wp.Manifest = f, nil
		}
		out = append(out, wp)
	}
	return wirecheck.Input{Plugins: out, Disabled: h.opts.Disabled, Enabled: h.opts.Enabled}
}

// candidates lists the plugins to run from dirs and the built-ins, in priority
// order, with what discovery hides.
func (h *Host) candidates(dirs []discover.Dir) ([]discover.Candidate, []Shadow) {
	res := discover.Scan(dirs)
	cands := append([]discover.Candidate(nil), res.Plugins...)
	var shadows []Shadow
	seen := map[string]bool{}
	for _, c := range cands {
		seen[c.Name] = true
	}
	for _, b := range h.opts.Builtins {
		if seen[b.Name] {
			for _, c := range cands {
				if c.Name == b.Name {
					shadows = append(shadows, Shadow{Kind: "plugin", Name: b.Name, Hidden: "builtin", By: c.Dir.Source.String() + ":" + c.Path})
				}
			}
			continue
		}
		cands = append(cands, b)
	}
	for _, s := range res.Shadowed {
		shadows = append(shadows, Shadow{Kind: "plugin", Name: s.Hidden.Name, Hidden: s.Hidden.Path, By: s.By.Path})
	}
	for _, p := range res.Problems {
		h.logger.Warn("plugin directory entry skipped", "path", p.Path, "err", p.Err)
	}
	return cands, shadows
}

// scanDirsNow returns the directories decided at load (trusted ones only).
func (h *Host) scanDirsNow() []discover.Dir {
	h.rl.mu.Lock()
	defer h.rl.mu.Unlock()
	return append([]discover.Dir(nil), h.rl.dirs...)
}

// reloadStatus adds reload counts, pending swaps and rejections to a status
// report, and lists plugins that are not loaded because they were rejected or
// their project is not trusted.
func (h *Host) reloadStatus(out []PluginStatus) []PluginStatus {
	h.rl.mu.Lock()
	defer h.rl.mu.Unlock()
	seen := map[string]bool{}
	for i := range out {
		seen[out[i].Name] = true
		if in := h.rl.info[out[i].Name]; in != nil {
			out[i].Reloads, out[i].Pending, out[i].LastRejection = in.reloads, in.pending, in.lastRejection
		}
	}
	names := make([]string, 0, len(h.rl.info))
	for n := range h.rl.info {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		in := h.rl.info[n]
		if seen[n] || in.rejected == nil {
			continue
		}
		st := *in.rejected
		st.LastRejection, st.Pending = in.lastRejection, in.pending
		out = append(out, st)
	}
	return append(out, h.rl.untrusted...)
}

// closeReload stops watching, stops versions staged but never swapped in, and
// stops replaced plugins without waiting for their calls any longer.
func (h *Host) closeReload() {
	h.rl.mu.Lock()
	if h.rl.closed {
		h.rl.mu.Unlock()
		return
	}
	h.rl.closed = true
	cancel, done := h.rl.cancel, h.rl.done
	close(h.rl.closingCh())
	s := h.rl.staged
	h.rl.staged = nil
	h.rl.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
	// Wait for a reload being vetted to see that the host is closed (it then
	// stops what it started).
	h.rl.vet.Lock()
	h.rl.vet.Unlock() //nolint:staticcheck // taken only to wait for the holder
	if s != nil {
		h.mu.RLock()
		live := map[*Plugin]bool{}
		for _, p := range h.plugins {
			live[p] = true
		}
		h.mu.RUnlock()
		for _, p := range s.plugins {
			if !live[p] {
				p.stop()
			}
		}
	}
	h.rl.retiring.Wait()
}

// errRetired is returned for a call to a plugin that a newer version replaced.
var errRetired = errors.New("replaced by a newer version; the call was not made")

// release ends a call that live let through.
func (p *Plugin) release() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.inflight--
	if p.inflight == 0 && p.drained != nil {
		close(p.drained)
		p.drained = nil
	}
}

// retire refuses new calls, waits up to wait for the calls in flight (or until
// closing is closed), then stops the process.
func (p *Plugin) retire(wait time.Duration, closing <-chan struct{}) {
	p.mu.Lock()
	p.retired = true
	if p.inflight > 0 {
		ch := make(chan struct{})
		p.drained = ch
		p.mu.Unlock()
		t := time.NewTimer(wait)
		select {
		case <-ch:
		case <-t.C:
			p.h.logger.Warn("a replaced plugin still had calls in flight; stopping it", "plugin", p.Name())
		case <-closing:
		}
		t.Stop()
		p.mu.Lock()
	}
	if p.client != nil {
		p.disp.drop()
		p.killLocked(false)
		p.client, p.rpc = nil, nil
	}
	p.mu.Unlock()
}
