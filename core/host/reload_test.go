package host

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/exocortex/exocortex/core/discover"
	"github.com/exocortex/exocortex/lint"
	"github.com/exocortex/exocortex/prompts"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

const testWatchDebounce = 60 * time.Millisecond

// eventLog records the host's events and lets a test wait for one.
type eventLog struct {
	mu  sync.Mutex
	evs []Event
}

func (l *eventLog) add(e Event) {
	l.mu.Lock()
	l.evs = append(l.evs, e)
	l.mu.Unlock()
}

func (l *eventLog) find(kind, plugin string) (Event, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range l.evs {
		if e.Kind == kind && e.Plugin == plugin {
			return e, true
		}
	}
	return Event{}, false
}

func (l *eventLog) wait(t *testing.T, kind, plugin string) Event {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if e, ok := l.find(kind, plugin); ok {
			return e
		}
		time.Sleep(10 * time.Millisecond)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	t.Fatalf("no %s event for %s within 10 s; events: %+v", kind, plugin, l.evs)
	return Event{}
}

func (l *eventLog) kinds(plugin string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, e := range l.evs {
		if e.Plugin == plugin {
			out = append(out, e.Kind)
		}
	}
	return out
}

// watchedHost loads dir, watches it, and records events.
func watchedHost(t *testing.T, dir string) (*Host, *eventLog) {
	t.Helper()
	log := &eventLog{}
	h, err := newHost(t, dir, Options{WatchDebounce: testWatchDebounce, OnEvent: log.add})
	if err != nil {
		t.Fatal(err)
	}
	if err := h.Watch(t.Context()); err != nil {
		t.Fatal(err)
	}
	return h, log
}

func names(exts []*Extension) string {
	var out []string
	for _, e := range exts {
		out = append(out, e.Name())
	}
	return strings.Join(out, ",")
}

func endNames(h *Host) string { return names(h.Extensions(exocortexv1.Hook_HOOK_MESSAGE_LOOP_END)) }

func pidOf(t *testing.T, h *Host, name string) int {
	t.Helper()
	for _, p := range h.Plugins() {
		if p.Name() == name {
			p.mu.Lock()
			defer p.mu.Unlock()
			if p.client == nil {
				t.Fatalf("plugin %s is not running", name)
			}
			return p.client.ReattachConfig().Pid
		}
	}
	t.Fatalf("no plugin %s", name)
	return 0
}

func waitDead(t *testing.T, pid int, what string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for processAlive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("%s (pid %d) is still running", what, pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func statusOf(h *Host, name string) (PluginStatus, bool) {
	for _, st := range h.Status() {
		if st.Name == name {
			return st, true
		}
	}
	return PluginStatus{}, false
}

// TestWatchedReloadAppliesBetweenIterations: a plugin rewritten on disk is
// started, vetted and staged while an iteration runs; the iteration keeps the
// old table, the next one gets the new, and the old process is stopped.
func TestWatchedReloadAppliesBetweenIterations(t *testing.T) {
	dir := t.TempDir()
	addPlugin(t, dir, "alpha", []ext{{name: "a1", hook: "message_loop_end", order: 10}}, nil)
	addPlugin(t, dir, "beta", []ext{{name: "b1", hook: "message_loop_end", order: 20}}, nil)
	h, log := watchedHost(t, dir)
	oldPid := pidOf(t, h, "alpha")

	end := h.BeginIteration(nil)
	addPlugin(t, dir, "alpha", []ext{{name: "a2", hook: "message_loop_end", order: 30}}, nil)
	log.wait(t, EventStaged, "alpha")
	if got := endNames(h); got != "a1,b1" {
		t.Fatalf("during the iteration the table changed to %s", got)
	}
	if h.ApplyPending() {
		t.Fatal("ApplyPending swapped during an iteration")
	}
	if p := h.Pending(); len(p) != 1 || p[0] != "alpha" {
		t.Fatalf("Pending = %v", p)
	}
	if st, _ := statusOf(h, "alpha"); !strings.Contains(st.Pending, "next iteration") {
		t.Fatalf("status does not show the pending reload: %+v", st)
	}
	if _, err := loopEnd(context.Background(), h, "a1"); err != nil {
		t.Fatalf("the old version stopped serving before the swap: %v", err)
	}
	end()

	end = h.BeginIteration(nil)
	defer end()
	if got := endNames(h); got != "b1,a2" {
		t.Fatalf("after the swap: %s, want b1,a2", got)
	}
	if _, err := loopEnd(context.Background(), h, "a2"); err != nil {
		t.Fatal(err)
	}
	ev := log.wait(t, EventReload, "alpha")
	if !strings.Contains(ev.Detail, "after the last change") {
		t.Errorf("reload event detail: %q", ev.Detail)
	}
	waitDead(t, oldPid, "the replaced alpha")
	st, _ := statusOf(h, "alpha")
	if st.Reloads != 1 || st.Pending != "" || st.State != StateRunning {
		t.Fatalf("status after the reload: %+v", st)
	}
	if h.Pending() != nil {
		t.Fatalf("still pending: %v", h.Pending())
	}
}

// TestCallInFlightFinishesOnTheOldProcess: a swap while a call runs lets the
// call finish on the process it started on, then stops that process.
func TestCallInFlightFinishesOnTheOldProcess(t *testing.T) {
	dir := t.TempDir()
	addPlugin(t, dir, "slow", []ext{{name: "s", hook: "message_loop_end", order: 1}}, nil, "-behave", "s=sleep:600ms")
	h, err := newHost(t, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	oldPid := pidOf(t, h, "slow")
	done := make(chan error, 1)
	go func() {
		_, err := loopEnd(context.Background(), h, "s")
		done <- err
	}()
	time.Sleep(150 * time.Millisecond)
	if err := h.Reload(context.Background(), "slow"); err != nil {
		t.Fatal(err)
	}
	if !h.ApplyPending() {
		t.Fatal("nothing applied")
	}
	if newPid := pidOf(t, h, "slow"); newPid == oldPid {
		t.Fatal("the reload did not start a new process")
	}
	if !processAlive(oldPid) {
		t.Fatal("the old process was stopped with a call in flight")
	}
	if err := <-done; err != nil {
		t.Fatalf("the call in flight failed: %v", err)
	}
	waitDead(t, oldPid, "the drained old process")
}

// TestRejectedVersionsKeepTheOldOne: a new version that fails to start, breaks
// the wiring, changes a key's type or adds a lint error is refused with its
// reason; the old version keeps serving.
func TestRejectedVersionsKeepTheOldOne(t *testing.T) {
	note := func(typ string) []*exocortexv1.StateKeySpec {
		return []*exocortexv1.StateKeySpec{{Name: "alpha_note", Type: typ, Scope: exocortexv1.Scope_SCOPE_SESSION}}
	}
	tests := []struct {
		name  string
		write func(dir string)
		stage string
		want  string
	}{
		{
			name: "does not start",
			write: func(dir string) {
				addPlugin(t, dir, "alpha", []ext{{name: "a1", hook: "message_loop_end", order: 10}}, nil, "-stdout-junk")
			},
			stage: "start",
			want:  "printed to stdout before its handshake",
		},
		{
			name: "order collision",
			write: func(dir string) {
				addPlugin(t, dir, "alpha", []ext{{name: "a1", hook: "message_loop_end", order: 20}}, nil)
			},
			stage: "wiring",
			want:  "order collision at message_loop_end: extensions a1 (plugin alpha) and b1 (plugin beta) both have order 20",
		},
		{
			name: "key changes type",
			write: func(dir string) {
				addPlugin(t, dir, "alpha", []ext{{name: "a1", hook: "message_loop_end", order: 10, writes: []string{"alpha_note"}}}, note("google.protobuf.Int32Value"))
			},
			stage: "state",
			want:  `state key "alpha_note" would change type from google.protobuf.StringValue to google.protobuf.Int32Value`,
		},
		{
			name: "new lint error",
			write: func(dir string) {
				addPlugin(t, dir, "alpha", []ext{{name: "a1", hook: "message_loop_end", order: 10, reads: []string{"alpha_note"}}}, note("google.protobuf.StringValue"))
			},
			stage: "lint",
			want:  "EXO031",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			addPlugin(t, dir, "alpha", []ext{{name: "a1", hook: "message_loop_end", order: 10, writes: []string{"alpha_note"}}}, note("google.protobuf.StringValue"))
			addPlugin(t, dir, "beta", []ext{{name: "b1", hook: "message_loop_end", order: 20}}, nil)
			log := &eventLog{}
			h, err := newHost(t, dir, Options{OnEvent: log.add, WiringCheck: lint.HostCheck(prompts.Embedded())})
			if err != nil {
				t.Fatal(err)
			}
			pid := pidOf(t, h, "alpha")
			tt.write(dir)
			err = h.Reload(context.Background(), "alpha")
			var re *ReloadError
			if !errors.As(err, &re) || re.Stage != tt.stage || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v\nwant a %s rejection saying %q", err, tt.stage, tt.want)
			}
			t.Log(err)
			if !strings.Contains(err.Error(), "the running version keeps serving") {
				t.Errorf("the error does not say the old version serves: %v", err)
			}
			if ev := log.wait(t, EventReloadRejected, "alpha"); !strings.Contains(ev.Detail, tt.want) {
				t.Errorf("event detail %q", ev.Detail)
			}
			if h.ApplyPending() {
				t.Fatal("a rejected version was staged")
			}
			if got := endNames(h); got != "a1,b1" {
				t.Fatalf("table = %s", got)
			}
			if _, err := loopEnd(context.Background(), h, "a1"); err != nil {
				t.Fatalf("the old version stopped serving: %v", err)
			}
			if pidOf(t, h, "alpha") != pid {
				t.Fatal("the old process was replaced")
			}
			st, _ := statusOf(h, "alpha")
			if !strings.Contains(st.LastRejection, tt.want) || st.State != StateRunning {
				t.Fatalf("status = %+v", st)
			}
		})
	}
}

// TestPluginsAppearAndDisappear: a new plugin directory is added, a deleted one
// removed, a new one that breaks the wiring is shown as rejected.
func TestPluginsAppearAndDisappear(t *testing.T) {
	dir := t.TempDir()
	addPlugin(t, dir, "alpha", []ext{{name: "a1", hook: "message_loop_end", order: 10}}, nil)
	h, log := watchedHost(t, dir)

	addPlugin(t, dir, "gamma", []ext{{name: "g1", hook: "message_loop_end", order: 5}}, nil)
	log.wait(t, EventStaged, "gamma")
	if !h.ApplyPending() {
		t.Fatal("nothing applied")
	}
	if got := endNames(h); got != "g1,a1" {
		t.Fatalf("after the addition: %s", got)
	}
	log.wait(t, EventAdded, "gamma")
	if _, err := loopEnd(context.Background(), h, "g1"); err != nil {
		t.Fatal(err)
	}
	gpid := pidOf(t, h, "gamma")

	if err := os.RemoveAll(filepath.Join(dir, "gamma")); err != nil {
		t.Fatal(err)
	}
	log.wait(t, EventStaged, "gamma")
	// The removal waits for the next iteration like any other change.
	deadline := time.Now().Add(10 * time.Second)
	for !h.ApplyPending() {
		if time.Now().After(deadline) {
			t.Fatal("the removal was not staged")
		}
		time.Sleep(10 * time.Millisecond)
	}
	log.wait(t, EventRemoved, "gamma")
	if got := endNames(h); got != "a1" {
		t.Fatalf("after the removal: %s", got)
	}
	waitDead(t, gpid, "the removed plugin")
	if _, ok := statusOf(h, "gamma"); ok {
		t.Fatal("a removed plugin is still in the status")
	}

	addPlugin(t, dir, "delta", []ext{{name: "d1", hook: "message_loop_end", order: 10}}, nil)
	ev := log.wait(t, EventReloadRejected, "delta")
	if !strings.Contains(ev.Detail, "new plugin delta was not loaded") || !strings.Contains(ev.Detail, "order collision") {
		t.Fatalf("rejection: %q", ev.Detail)
	}
	st, ok := statusOf(h, "delta")
	if !ok || st.State != StateRejected || !strings.Contains(st.LastRejection, "order collision") {
		t.Fatalf("status of the rejected plugin: %+v", st)
	}
	if got := strings.Join(log.kinds("gamma"), ","); got != "staged,added,staged,removed" {
		t.Errorf("gamma's events: %s", got)
	}
}

// TestIterationsHoldSwaps: a nested iteration (a subordinate agent's) does not
// swap while its parent's iteration is in flight.
func TestIterationsHoldSwaps(t *testing.T) {
	dir := t.TempDir()
	addPlugin(t, dir, "alpha", []ext{{name: "a1", hook: "message_loop_end", order: 10}}, nil)
	h, err := newHost(t, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	outer := h.BeginIteration(nil)
	addPlugin(t, dir, "alpha", []ext{{name: "a2", hook: "message_loop_end", order: 10}}, nil)
	if err := h.Reload(context.Background(), "alpha"); err != nil {
		t.Fatal(err)
	}
	inner := h.BeginIteration(nil)
	if got := endNames(h); got != "a1" {
		t.Fatalf("a nested iteration swapped: %s", got)
	}
	inner()
	inner() // ending twice is harmless
	outer()
	end := h.BeginIteration(nil)
	end()
	if got := endNames(h); got != "a2" {
		t.Fatalf("the next top-level iteration did not swap: %s", got)
	}
}

func TestReloadUnknownAndClose(t *testing.T) {
	dir := t.TempDir()
	addPlugin(t, dir, "alpha", []ext{{name: "a1", hook: "message_loop_end", order: 10}}, nil)
	h, err := newHost(t, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var re *ReloadError
	if err := h.Reload(context.Background(), "nope"); !errors.As(err, &re) || re.Stage != "unknown" {
		t.Fatalf("err = %v", err)
	}
	// A version staged and never applied is stopped by Close.
	if err := h.Reload(context.Background(), "alpha"); err != nil {
		t.Fatal(err)
	}
	var staged *Plugin
	h.rl.mu.Lock()
	for _, p := range h.rl.staged.plugins {
		if p.Name() == "alpha" {
			staged = p
		}
	}
	h.rl.mu.Unlock()
	staged.mu.Lock()
	pid := staged.client.ReattachConfig().Pid
	staged.mu.Unlock()
	h.Close()
	waitDead(t, pid, "the staged version after Close")
	if err := h.Reload(context.Background(), "alpha"); !errors.As(err, &re) || re.Stage != "closed" {
		t.Fatalf("reload after close: %v", err)
	}
}

// TestUntrustedProject: a project's plugins load only once the project is
// trusted; until then the operator is told how to trust it.
func TestUntrustedProject(t *testing.T) {
	project := t.TempDir()
	pdir := filepath.Join(project, ".exocortex", "plugins")
	addPlugin(t, pdir, "local", []ext{{name: "l1", hook: "message_loop_end", order: 10}}, nil)
	open := func(trusted ...string) (*Host, *eventLog) {
		log := &eventLog{}
		h, err := New(context.Background(), Options{
			Dirs:            []discover.Dir{{Path: pdir, Source: discover.Project}},
			TrustedProjects: trusted, OnEvent: log.add, StartTimeout: 5 * time.Second,
		})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(h.Close)
		return h, log
	}

	h, log := open()
	if got := endNames(h); got != "" {
		t.Fatalf("an untrusted project's plugin was loaded: %s", got)
	}
	st, ok := statusOf(h, "local")
	if !ok || st.State != StateUntrusted || !strings.Contains(st.LastError, "exocortex trust "+project) {
		t.Fatalf("status = %+v", st)
	}
	if n := h.Notices(); len(n) != 1 || !strings.Contains(n[0], "not trusted") {
		t.Fatalf("notices = %v", n)
	}
	log.wait(t, EventUntrusted, "local")

	for _, trusted := range []string{project, filepath.Dir(project)} {
		h, _ := open("/elsewhere", trusted)
		if got := endNames(h); got != "l1" {
			t.Fatalf("trusting %s: extensions %q", trusted, got)
		}
		if len(h.Notices()) != 0 {
			t.Fatalf("notices for a trusted project: %v", h.Notices())
		}
	}
}

func TestProjectOf(t *testing.T) {
	if got := ProjectOf("/src/app/.exocortex/plugins"); got != "/src/app" {
		t.Errorf("ProjectOf = %s", got)
	}
	if got := ProjectOf("/opt/plugins"); got != "/opt/plugins" {
		t.Errorf("ProjectOf = %s", got)
	}
	if ProjectTrusted("/src/application", []string{"/src/app"}) {
		t.Error("a sibling with a common prefix was trusted")
	}
}

// TestStagedChangesMerge: changes staged one after the other before the next
// iteration are applied as the running table sees them.
func TestStagedChangesMerge(t *testing.T) {
	dir := t.TempDir()
	addPlugin(t, dir, "alpha", []ext{{name: "a1", hook: "message_loop_end", order: 10}}, nil)
	log := &eventLog{}
	h, err := newHost(t, dir, Options{OnEvent: log.add})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	// Added, then changed: one addition of the latest version.
	addPlugin(t, dir, "gamma", []ext{{name: "g1", hook: "message_loop_end", order: 5}}, nil)
	if err := h.Reload(ctx, "gamma"); err != nil {
		t.Fatal(err)
	}
	var first *Plugin
	h.rl.mu.Lock()
	for _, p := range h.rl.staged.plugins {
		if p.Name() == "gamma" {
			first = p
		}
	}
	h.rl.mu.Unlock()
	first.mu.Lock()
	firstPid := first.client.ReattachConfig().Pid
	first.mu.Unlock()
	addPlugin(t, dir, "gamma", []ext{{name: "g2", hook: "message_loop_end", order: 5}}, nil)
	if err := h.Reload(ctx, "gamma"); err != nil {
		t.Fatal(err)
	}
	waitDead(t, firstPid, "the superseded staged version")
	if !h.ApplyPending() {
		t.Fatal("nothing applied")
	}
	if got := endNames(h); got != "g2,a1" {
		t.Fatalf("table = %s", got)
	}
	if got := strings.Join(log.kinds("gamma"), ","); got != "staged,staged,added" {
		t.Fatalf("gamma's events: %s", got)
	}
	// Added, then removed before any iteration: nothing to apply for it.
	addPlugin(t, dir, "delta", []ext{{name: "d1", hook: "message_loop_end", order: 7}}, nil)
	if err := h.Reload(ctx, "delta"); err != nil {
		t.Fatal(err)
	}
	if err := os.RemoveAll(filepath.Join(dir, "delta")); err != nil {
		t.Fatal(err)
	}
	if err := h.Reload(ctx, "delta"); err != nil {
		t.Fatal(err)
	}
	if p := h.Pending(); len(p) != 0 {
		t.Fatalf("pending = %v", p)
	}
	h.ApplyPending()
	if got := endNames(h); got != "g2,a1" {
		t.Fatalf("table = %s", got)
	}
	if _, ok := statusOf(h, "delta"); ok {
		t.Fatal("delta shows in the status")
	}
}
