package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/exocortex/exocortex/core/discover"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// fixtureBin is the misbehaving test plugin, built once by TestMain.
var fixtureBin string

func TestMain(m *testing.M) {
	if os.Getenv("EXOCORTEX_HOST_TEST_CHILD") != "" {
		runChildHost()
		return
	}
	dir, err := os.MkdirTemp("", "exocortex-host-test")
	if err != nil {
		panic(err)
	}
	fixtureBin = filepath.Join(dir, "fixture")
	out, err := exec.Command("go", "build", "-o", fixtureBin, "./testdata/fixture").CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "building the fixture plugin: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type ext struct {
	name, hook string
	order      int32
	reads      []string
	writes     []string
	injects    bool
	timeoutMS  uint32
	failOpen   bool
}

// addPlugin writes a plugin directory that starts the fixture with a manifest
// and behaviours.
func addPlugin(t *testing.T, dir, name string, exts []ext, stateKeys []*exocortexv1.StateKeySpec, args ...string) {
	t.Helper()
	m := &exocortexv1.ManifestResponse{Plugin: name, Version: "test", StateKeys: stateKeys}
	for _, e := range exts {
		h := exocortexv1.Hook(exocortexv1.Hook_value["HOOK_"+strings.ToUpper(e.hook)])
		m.Extensions = append(m.Extensions, &exocortexv1.ExtensionSpec{
			Name: e.name, Hook: h, Order: e.order, Reads: e.reads, Writes: e.writes,
			InjectsPrompt: e.injects, TimeoutMs: e.timeoutMS, FailOpen: e.failOpen,
		})
	}
	pdir := filepath.Join(dir, name)
	if err := os.MkdirAll(pdir, 0o755); err != nil {
		t.Fatal(err)
	}
	mb, err := json.Marshal(protoJSON(t, m))
	if err != nil {
		t.Fatal(err)
	}
	mf := filepath.Join(pdir, "manifest.json")
	if err := os.WriteFile(mf, mb, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := append([]string{fixtureBin, "-manifest", mf}, args...)
	pj, _ := json.Marshal(discover.Manifest{Command: cmd})
	if err := os.WriteFile(filepath.Join(pdir, "plugin.json"), pj, 0o644); err != nil {
		t.Fatal(err)
	}
}

func newHost(t *testing.T, dir string, opts Options) (*Host, error) {
	t.Helper()
	opts.Dirs = []discover.Dir{{Path: dir, Source: discover.User}}
	if opts.StartTimeout == 0 {
		opts.StartTimeout = 5 * time.Second
	}
	h, err := New(context.Background(), opts)
	if h != nil {
		t.Cleanup(h.Close)
	}
	return h, err
}

func loopEnd(ctx context.Context, h *Host, name string) (*exocortexv1.MessageLoopEndResponse, error) {
	for _, e := range h.Extensions(exocortexv1.Hook_HOOK_MESSAGE_LOOP_END) {
		if e.Name() == name {
			return Call(ctx, e, &exocortexv1.MessageLoopEndRequest{Call: &exocortexv1.HookCall{Extension: name}}, exocortexv1.PluginClient.MessageLoopEnd)
		}
	}
	return nil, fmt.Errorf("no extension %s", name)
}

func TestLoadOrdersAcrossPlugins(t *testing.T) {
	dir := t.TempDir()
	addPlugin(t, dir, "alpha", []ext{{name: "a10", hook: "message_loop_end", order: 10}, {name: "a9", hook: "message_loop_end", order: 9}}, nil)
	addPlugin(t, dir, "beta", []ext{{name: "b100", hook: "message_loop_end", order: 100}, {name: "b2", hook: "message_loop_end", order: 2}}, nil)
	h, err := newHost(t, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, e := range h.Extensions(exocortexv1.Hook_HOOK_MESSAGE_LOOP_END) {
		got = append(got, e.Name())
	}
	if strings.Join(got, ",") != "b2,a9,a10,b100" {
		t.Fatalf("order = %v, want integer order b2,a9,a10,b100", got)
	}
	if _, err := loopEnd(context.Background(), h, "a9"); err != nil {
		t.Fatal(err)
	}
	for _, st := range h.Status() {
		if st.State != StateRunning {
			t.Errorf("plugin %s is %s", st.Name, st.State)
		}
		if st.Calls != "unary" { // the fixture serves neither RunBatch nor Dispatch
			t.Errorf("plugin %s: calls %q, want unary", st.Name, st.Calls)
		}
	}
}

func TestWiringErrors(t *testing.T) {
	tests := []struct {
		name    string
		plugins map[string][]ext
		keys    []*exocortexv1.StateKeySpec
		want    string
	}{
		{
			name: "order collision",
			plugins: map[string][]ext{
				"p1": {{name: "first", hook: "tool_execute_after", order: 20}},
				"p2": {{name: "second", hook: "tool_execute_after", order: 20}},
			},
			want: "order collision at tool_execute_after: extensions first (plugin p1) and second (plugin p2) both have order 20",
		},
		{
			name:    "injection after the prompt is built",
			plugins: map[string][]ext{"p1": {{name: "late", hook: "before_main_llm_call", order: 17, injects: true}}},
			want:    "plugin p1, extension late declares prompt injection at before_main_llm_call",
		},
		{
			name:    "fail_open where nothing is stopped",
			plugins: map[string][]ext{"p1": {{name: "watch", hook: "tool_execute_after", order: 3, failOpen: true}}},
			want:    "plugin p1, extension watch declares fail_open at tool_execute_after, whose response stops nothing",
		},
		{
			name:    "undeclared key",
			plugins: map[string][]ext{"p1": {{name: "reader", hook: "message_loop_end", order: 1, reads: []string{"_bst_store"}}}},
			want:    `plugin p1, extension reader uses state key "_bst_store", which nobody declares`,
		},
		{
			name:    "key declared with another type",
			plugins: map[string][]ext{"p1": nil},
			keys:    []*exocortexv1.StateKeySpec{{Name: "failure_tracker", Type: "p1.Counts", Scope: exocortexv1.Scope_SCOPE_SESSION}},
			want:    `state key "failure_tracker" is declared twice with different types: exocortex.v1.FailureTracker by proto, p1.Counts by p1`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, exts := range tt.plugins {
				addPlugin(t, dir, name, exts, tt.keys)
			}
			_, err := newHost(t, dir, Options{})
			var we *WiringError
			if !errors.As(err, &we) {
				t.Fatalf("err = %v, want a WiringError", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v\nwant it to say %q", err, tt.want)
			}
		})
	}
}

func TestStdoutBeforeHandshakeIsReported(t *testing.T) {
	dir := t.TempDir()
	addPlugin(t, dir, "noisy", []ext{{name: "n", hook: "message_loop_end", order: 1}}, nil, "-stdout-junk")
	addPlugin(t, dir, "quiet", []ext{{name: "q", hook: "message_loop_end", order: 2}}, nil)
	h, err := newHost(t, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	failed := h.FailedPlugins()
	if len(failed) != 1 || failed[0].Plugin != "noisy" {
		t.Fatalf("failed = %v", failed)
	}
	if !strings.Contains(failed[0].Error(), "printed to stdout before its handshake") {
		t.Fatalf("error does not explain the stdout problem: %v", failed[0])
	}
	if _, err := loopEnd(context.Background(), h, "q"); err != nil {
		t.Fatalf("the healthy plugin must still serve: %v", err)
	}
}

// TestCrashBeforeHandshakeIsReported: a plugin that dies before its handshake is
// reported with how it ended and its last stderr lines, not as one that printed
// to stdout.
func TestCrashBeforeHandshakeIsReported(t *testing.T) {
	tests := []struct {
		mode, want, stderr string
	}{
		{"exit", "it exited with status 7 before its handshake", "cannot open its database: permission denied"},
		{"kill", "it was killed (signal: killed) before its handshake", "out of memory, killing itself"},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			dir := t.TempDir()
			addPlugin(t, dir, "dying", []ext{{name: "d", hook: "message_loop_end", order: 1}}, nil, "-die-before-handshake", tt.mode)
			h, err := newHost(t, dir, Options{})
			if err != nil {
				t.Fatal(err)
			}
			failed := h.FailedPlugins()
			if len(failed) != 1 || failed[0].Plugin != "dying" {
				t.Fatalf("failed = %v", failed)
			}
			msg := failed[0].Error()
			for _, want := range []string{"plugin dying", tt.want, tt.stderr} {
				if !strings.Contains(msg, want) {
					t.Errorf("error does not say %q:\n%s", want, msg)
				}
			}
			if strings.Contains(msg, "printed to stdout") {
				t.Errorf("a crash is reported as printing to stdout:\n%s", msg)
			}
			t.Log(msg)
		})
	}
}

func TestChecksumPin(t *testing.T) {
	dir := t.TempDir()
	addPlugin(t, dir, "pinned", []ext{{name: "x", hook: "message_loop_end", order: 1}}, nil)
	h, err := newHost(t, dir, Options{Checksums: map[string]string{"pinned": strings.Repeat("ab", 32)}})
	if err != nil {
		t.Fatal(err)
	}
	failed := h.FailedPlugins()
	if len(failed) != 1 || !strings.Contains(failed[0].Error(), "checksum") {
		t.Fatalf("a plugin with a wrong checksum must not start: %v", failed)
	}
}

func TestCrashRestartsOnNextUse(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(t.TempDir(), "crashed")
	addPlugin(t, dir, "flaky", []ext{{name: "f", hook: "message_loop_end", order: 1}}, nil, "-behave", "f=crash-once:"+marker)
	var events []string
	h, err := newHost(t, dir, Options{OnEvent: func(e Event) { events = append(events, e.Kind) }})
	if err != nil {
		t.Fatal(err)
	}
	_, err = loopEnd(context.Background(), h, "f")
	var ce *CallError
	if !errors.As(err, &ce) || ce.Kind != Crashed || ce.Extension != "f" || ce.Plugin != "flaky" {
		t.Fatalf("err = %v, want a crash of extension f", err)
	}
	if _, err := loopEnd(context.Background(), h, "f"); err != nil {
		t.Fatalf("the plugin was not restarted: %v", err)
	}
	st := h.Status()[0]
	if st.Crashes != 1 || st.Restarts != 1 || st.State != StateRunning {
		t.Fatalf("status = %+v", st)
	}
	if strings.Join(events, ",") != "load,crash,restart" {
		t.Fatalf("events = %v", events)
	}
}

func TestQuarantineAfterThreeCrashes(t *testing.T) {
	dir := t.TempDir()
	addPlugin(t, dir, "crasher", []ext{{name: "c", hook: "message_loop_end", order: 1}}, nil, "-behave", "c=exit")
	h, err := newHost(t, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < crashQuarantine; i++ {
		_, err := loopEnd(context.Background(), h, "c")
		var ce *CallError
		if !errors.As(err, &ce) || ce.Kind != Crashed {
			t.Fatalf("call %d: err = %v, want a crash", i, err)
		}
		time.Sleep(backoffBase << i)
	}
	if st := h.Status()[0]; st.State != StateQuarantined {
		t.Fatalf("state = %s after %d crashes", st.State, crashQuarantine)
	}
	_, err = loopEnd(context.Background(), h, "c")
	var ce *CallError
	if !errors.As(err, &ce) || ce.Kind != Unavailable || !strings.Contains(err.Error(), "quarantined") {
		t.Fatalf("err = %v, want quarantined", err)
	}
	// A changed plugin is tried again.
	time.Sleep(10 * time.Millisecond)
	if err := os.WriteFile(filepath.Join(dir, "crasher", "touch"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = loopEnd(context.Background(), h, "c")
	if !errors.As(err, &ce) || ce.Kind != Crashed {
		t.Fatalf("after a change on disk, err = %v, want a fresh start (that crashes again)", err)
	}
}

func TestHungPluginIsKilled(t *testing.T) {
	dir := t.TempDir()
	addPlugin(t, dir, "stuck", []ext{{name: "s", hook: "message_loop_end", order: 1, timeoutMS: 300}}, nil, "-behave", "s=hang")
	h, err := newHost(t, dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	pid := h.Plugins()[0].client.ReattachConfig().Pid
	start := time.Now()
	_, err = loopEnd(context.Background(), h, "s")
	var ce *CallError
	if !errors.As(err, &ce) || ce.Kind != TimedOut {
		t.Fatalf("err = %v, want a timeout", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Fatalf("the hung call held the caller for %s", d)
	}
	if processAlive(pid) {
		t.Fatalf("the hung plugin (pid %d) is still running", pid)
	}
}

func TestTimeoutOverrideFromConfig(t *testing.T) {
	dir := t.TempDir()
	addPlugin(t, dir, "p", []ext{{name: "e", hook: "message_loop_end", order: 1, timeoutMS: 5000}}, nil)
	h, err := newHost(t, dir, Options{Timeouts: map[string]time.Duration{"e": 250 * time.Millisecond}})
	if err != nil {
		t.Fatal(err)
	}
	if got := h.Extensions(exocortexv1.Hook_HOOK_MESSAGE_LOOP_END)[0].Timeout; got != 250*time.Millisecond {
		t.Fatalf("timeout = %s, want the configured 250ms", got)
	}
}

func processAlive(pid int) bool {
	// A zombie still answers signal 0; read its state instead.
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	f := strings.Fields(string(b))
	return len(f) > 2 && f[2] != "Z"
}

// runChildHost loads one plugin, prints its pid and waits to be killed.
func runChildHost() {
	dir := os.Getenv("EXOCORTEX_HOST_TEST_CHILD")
	h, err := New(context.Background(), Options{Dirs: []discover.Dir{{Path: dir, Source: discover.User}}})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Println(h.Plugins()[0].client.ReattachConfig().Pid)
	time.Sleep(time.Hour)
}

func TestNoOrphansWhenTheHostDies(t *testing.T) {
	dir := t.TempDir()
	addPlugin(t, dir, "orphan", []ext{{name: "o", hook: "message_loop_end", order: 1}}, nil)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), "EXOCORTEX_HOST_TEST_CHILD="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 64)
	n, _ := out.Read(buf)
	pid, err := strconv.Atoi(strings.TrimSpace(string(buf[:n])))
	if err != nil {
		t.Fatalf("child host said %q", buf[:n])
	}
	if !processAlive(pid) {
		t.Fatal("plugin not running")
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	_ = cmd.Wait()
	deadline := time.Now().Add(2 * time.Second)
	for processAlive(pid) {
		if time.Now().After(deadline) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
			t.Fatalf("plugin pid %d outlived its host by more than 2 s", pid)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
