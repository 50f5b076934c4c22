package host_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/wrapperspb"

	"github.com/exocortex/exocortex/core/discover"
	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/core/llm"
	"github.com/exocortex/exocortex/core/llm/scripted"
	"github.com/exocortex/exocortex/core/loop"
	"github.com/exocortex/exocortex/core/watch"
	"github.com/exocortex/exocortex/prompts"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// hostEvents records the host's events for the end-to-end tests.
type hostEvents struct {
	mu  sync.Mutex
	evs []host.Event
}

func (r *hostEvents) add(e host.Event) {
	r.mu.Lock()
	r.evs = append(r.evs, e)
	r.mu.Unlock()
}

// after waits for an event of kind for plugin, past the first n events.
func (r *hostEvents) after(t *testing.T, n int, kind, plugin string) host.Event {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		r.mu.Lock()
		for _, e := range r.evs[min(n, len(r.evs)):] {
			if e.Kind == kind && e.Plugin == plugin {
				r.mu.Unlock()
				return e
			}
		}
		r.mu.Unlock()
		time.Sleep(10 * time.Millisecond)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	t.Fatalf("no %s event for %s within 30 s; events: %+v", kind, plugin, r.evs)
	return host.Event{}
}

func (r *hostEvents) len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.evs)
}

func (r *hostEvents) count(kind, plugin string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, e := range r.evs {
		if e.Kind == kind && e.Plugin == plugin {
			n++
		}
	}
	return n
}

// writeAnchor adds a plugin (the host tests' fixture) with one extension at
// message_loop_prompts_after, order 60, that version 3c of the greeter collides with.
func writeAnchor(t *testing.T, dir string) {
	t.Helper()
	pdir := filepath.Join(dir, "anchor")
	if err := os.MkdirAll(pdir, 0o755); err != nil {
		t.Fatal(err)
	}
	m := &exocortexv1.ManifestResponse{Plugin: "anchor", Version: "1", Extensions: []*exocortexv1.ExtensionSpec{
		{Name: "anchor", Hook: exocortexv1.Hook_HOOK_MESSAGE_LOOP_PROMPTS_AFTER, Order: 60},
	}}
	mb, _ := protojson.Marshal(m)
	mf := filepath.Join(pdir, "manifest.json")
	if err := os.WriteFile(mf, mb, 0o644); err != nil {
		t.Fatal(err)
	}
	pj, _ := json.Marshal(discover.Manifest{Command: []string{host.FixtureBin(), "-manifest", mf}})
	if err := os.WriteFile(filepath.Join(pdir, "plugin.json"), pj, 0o644); err != nil {
		t.Fatal(err)
	}
}

func note(n int) scripted.Reply {
	return scripted.Reply{Content: fmt.Sprintf(`{"thoughts":["keep going"],"headline":"step %d","tool_name":"note","tool_args":{"n":%d}}`, n, n)}
}

// TestHotReloadEndToEnd is the check, with real processes: a session
// runs with greeter v1; mid-session the dev build rebuilds it as v2 into the
// plugin directory, and the next iteration's hook events come from v2. Then a
// v3 that does not compile, one that panics on start and one with an order
// collision are each refused with their reason while v2 keeps serving. No
// iteration fails.
func TestHotReloadEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("builds five plugin versions")
	}
	ctx := context.Background()
	pluginDir := filepath.Join(t.TempDir(), "plugins")
	bin := filepath.Join(pluginDir, "greeter")
	build := func(version string) error {
		src, err := filepath.Abs(filepath.Join("testdata", "reload", version))
		if err != nil {
			t.Fatal(err)
		}
		return watch.Build(ctx, watch.BuildOptions{Src: src, Dest: bin})
	}
	if err := build("v1"); err != nil {
		t.Fatal(err)
	}
	writeAnchor(t, pluginDir)

	evs := &hostEvents{}
	h, err := host.New(ctx, host.Options{Dirs: []discover.Dir{{Path: pluginDir, Source: discover.User}}, OnEvent: evs.add})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	if err := h.Watch(ctx); err != nil {
		t.Fatal(err)
	}

	srv, err := scripted.NewServer(scripted.Script{Source: t.Name(), Replies: []scripted.Reply{
		note(1), note(2), note(3), note(4),
		{Content: `{"thoughts":["done"],"headline":"end","tool_name":"finish","tool_args":{}}`},
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	client, err := llm.New(srv.URL())
	if err != nil {
		t.Fatal(err)
	}

	var agent *loop.Agent
	served := map[int]string{} // iteration -> greeter version that served it
	var hookErrors []string
	var stepErr error
	steps := map[int]func() error{
		// Iteration 1 ends with v2 rebuilt into the plugin directory.
		1: func() error {
			n := evs.len()
			if err := build("v2"); err != nil {
				return err
			}
			evs.after(t, n, host.EventStaged, "greeter")
			return nil
		},
		// v3a does not compile: the build says where, the binary is untouched.
		2: func() error {
			before, _ := os.ReadFile(bin)
			err := build("v3a")
			var be *watch.BuildError
			if !errors.As(err, &be) || len(be.Diagnostics) == 0 || be.Diagnostics[0].File != "main.go" || be.Diagnostics[0].Line != 8 {
				return fmt.Errorf("v3a: err = %v, want a build error at main.go:8", err)
			}
			if after, _ := os.ReadFile(bin); string(after) != string(before) {
				return errors.New("v3a: a failed build replaced the plugin")
			}
			return nil
		},
		// v3b panics on start.
		3: func() error {
			n := evs.len()
			if err := build("v3b"); err != nil {
				return err
			}
			ev := evs.after(t, n, host.EventReloadRejected, "greeter")
			if !strings.Contains(ev.Detail, "panic: greeter v3b: GREETER_CONFIG is not set") || !strings.Contains(ev.Detail, "start check") {
				return fmt.Errorf("v3b rejection does not give the panic: %s", ev.Detail)
			}
			return nil
		},
		// v3c collides on order with the anchor.
		4: func() error {
			n := evs.len()
			if err := build("v3c"); err != nil {
				return err
			}
			ev := evs.after(t, n, host.EventReloadRejected, "greeter")
			if !strings.Contains(ev.Detail, "order collision at message_loop_prompts_after: extensions anchor (plugin anchor) and greeter (plugin greeter) both have order 60") {
				return fmt.Errorf("v3c rejection: %s", ev.Detail)
			}
			return nil
		},
	}
	observe := func(e loop.Event) {
		switch {
		case e.Type == loop.EventHook && e.Error != "":
			hookErrors = append(hookErrors, fmt.Sprintf("iteration %d %s/%s: %s", e.Iteration, e.Hook, e.Extension, e.Error))
		case e.Type == loop.EventHook && e.Extension == "greeter":
			v, ok := agent.State().Get("greeter_version")
			if !ok {
				hookErrors = append(hookErrors, fmt.Sprintf("iteration %d: greeter wrote no version", e.Iteration))
				return
			}
			var s wrapperspb.StringValue
			_ = v.UnmarshalTo(&s)
			served[e.Iteration] = s.GetValue()
		case e.Type == loop.EventLLMReply:
			// The session pauses here while the developer rebuilds: the
			// iteration is in flight, so nothing may swap until the next one.
			if step := steps[e.Iteration]; step != nil && stepErr == nil {
				stepErr = step()
			}
		}
	}
	agent, err = loop.New(loop.Options{Host: h, LLM: client, Prompts: prompts.NewLoader(), Model: srv.Model(), Observer: observe, MaxIterations: 10})
	if err != nil {
		t.Fatal(err)
	}
	res, err := agent.Monologue(ctx, "greet me five times")
	if stepErr != nil {
		t.Fatal(stepErr)
	}
	if err != nil {
		t.Fatalf("the monologue failed: %v", err)
	}
	if res.Iterations != 5 || res.Response != "finished by v2" {
		t.Fatalf("result = %+v, want 5 iterations ended by v2", res)
	}
	if len(hookErrors) > 0 {
		t.Fatalf("iterations failed:\n%s", strings.Join(hookErrors, "\n"))
	}
	want := map[int]string{1: "v1", 2: "v2", 3: "v2", 4: "v2", 5: "v2"}
	if fmt.Sprint(served) != fmt.Sprint(want) {
		t.Fatalf("versions serving each iteration = %v, want %v", served, want)
	}
	// The model saw each iteration's block from the version that served it.
	reqs := srv.Requests()
	if len(reqs) != 5 {
		t.Fatalf("%d model requests, want 5", len(reqs))
	}
	for i, req := range reqs {
		last := req.Messages[len(req.Messages)-1].Content
		for _, m := range req.Messages {
			if strings.Contains(m.Content, "greetings from") {
				last = m.Content
			}
		}
		if w := fmt.Sprintf("greetings from %s, iteration %d", want[i+1], i+1); !strings.Contains(last, w) {
			t.Errorf("request %d: the prompt does not carry %q", i+1, w)
		}
	}
	if n := evs.count(host.EventReload, "greeter"); n != 1 {
		t.Errorf("%d reload events, want 1", n)
	}
	if n := evs.count(host.EventReloadRejected, "greeter"); n != 2 {
		t.Errorf("%d rejections, want 2 (v3b, v3c)", n)
	}
	for _, st := range h.Status() {
		if st.Name != "greeter" {
			continue
		}
		if st.Version != "v2" || st.Reloads != 1 || st.State != host.StateRunning || !strings.Contains(st.LastRejection, "order collision") {
			t.Errorf("greeter status = %+v", st)
		}
	}
}

// TestChecksumPinRefusesARebuild: with the greeter pinned to v1's checksum, a
// real rebuild (v2) is refused and v1 keeps serving.
func TestChecksumPinRefusesARebuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two plugin versions")
	}
	ctx := context.Background()
	v1 := sdktest.BuildPlugin(t, "./testdata/reload/v1")
	v2 := sdktest.BuildPlugin(t, "./testdata/reload/v2")
	sum := func(path string) string {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		s := sha256.Sum256(b)
		return hex.EncodeToString(s[:])
	}
	pluginDir := t.TempDir()
	bin := filepath.Join(pluginDir, "greeter")
	install(t, v1, bin)
	h, err := host.New(ctx, host.Options{
		Dirs:      []discover.Dir{{Path: pluginDir, Source: discover.User}},
		Checksums: map[string]string{"greeter": sum(v1)},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	if f := h.FailedPlugins(); len(f) != 0 {
		t.Fatalf("the pinned v1 did not load: %v", f)
	}
	install(t, v2, bin)
	err = h.Reload(ctx, "greeter")
	var re *host.ReloadError
	if !errors.As(err, &re) || re.Stage != "start" || !strings.Contains(err.Error(), "checksum does not match the one pinned") {
		t.Fatalf("err = %v, want the checksum refusal", err)
	}
	if h.ApplyPending() {
		t.Fatal("the unpinned build was staged")
	}
	for _, st := range h.Status() {
		if st.Name == "greeter" && (st.Version != "v1" || st.State != host.StateRunning) {
			t.Fatalf("greeter status = %+v", st)
		}
	}
}

// install copies a built plugin into place through a temporary name, as the
// dev build does.
func install(t testing.TB, src, dst string) {
	t.Helper()
	b, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	tmp := filepath.Join(filepath.Dir(dst), "."+filepath.Base(dst)+".tmp")
	if err := os.WriteFile(tmp, b, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, dst); err != nil {
		t.Fatal(err)
	}
}
