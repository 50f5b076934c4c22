package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/spf13/cobra"

	"github.com/exocortex/exocortex/config"
	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/core/watch"
	"github.com/exocortex/exocortex/sdk/python"
)

// runCmd runs one command in-process with args and returns its output.
func runCmd(t *testing.T, cmd *cobra.Command, args ...string) (string, error) {
	t.Helper()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	err := cmd.ExecuteContext(context.Background())
	return out.String(), err
}

func TestTrust(t *testing.T) {
	home := t.TempDir()
	t.Setenv(config.HomeEnv, home)
	cfgFile := filepath.Join(home, config.FileName)
	if err := os.WriteFile(cfgFile, []byte("# my settings\nmodel: qwen3:14b # the big one\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	project := t.TempDir()
	out, err := runCmd(t, newTrustCmd(), project)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "trusted "+project) || !strings.Contains(out, "holds no plugins yet") {
		t.Errorf("output: %s", out)
	}
	b, _ := os.ReadFile(cfgFile)
	for _, want := range []string{"# my settings", "# the big one", "trusted_projects:", "- " + project} {
		if !strings.Contains(string(b), want) {
			t.Errorf("config.yaml lost or lacks %q:\n%s", want, b)
		}
	}
	cfg, err := config.Load(home)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Model != "qwen3:14b" || len(cfg.TrustedProjects) != 1 || cfg.TrustedProjects[0] != project {
		t.Fatalf("config = %+v", cfg)
	}
	sub := filepath.Join(project, "sub")
	os.Mkdir(sub, 0o755)
	if out, _ := runCmd(t, newTrustCmd(), sub); !strings.Contains(out, "already trusted") {
		t.Errorf("a directory inside a trusted project: %s", out)
	}
	out, err = runCmd(t, newTrustCmd(), "--list", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var listed struct {
		Trusted []string `json:"trusted_projects"`
	}
	if err := json.Unmarshal([]byte(out), &listed); err != nil || len(listed.Trusted) != 1 {
		t.Fatalf("--list --json: %s (%v)", out, err)
	}
	if _, err := runCmd(t, newTrustCmd(), "--revoke", project); err != nil {
		t.Fatal(err)
	}
	if cfg, _ := config.Load(home); len(cfg.TrustedProjects) != 0 {
		t.Fatalf("still trusted after --revoke: %v", cfg.TrustedProjects)
	}
	if _, err := runCmd(t, newTrustCmd(), filepath.Join(project, "missing")); err == nil {
		t.Error("trusting a directory that does not exist")
	}
}

// writeModule writes a tiny Go program (no dependencies: fast to build).
func writeModule(t *testing.T, dir, body string) {
	t.Helper()
	os.MkdirAll(dir, 0o755)
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/tiny\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// syncBuf is a buffer written by the dev loop and read by the test.
type syncBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuf) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestDevRebuildsOnChange: dev installs the plugin, rebuilds it on a change,
// shows a failed build's errors with file:line relative to where it was
// started, keeps the installed binary and logs the failure.
func TestDevRebuildsOnChange(t *testing.T) {
	wd := t.TempDir()
	t.Chdir(wd)
	src := filepath.Join(wd, "tiny")
	writeModule(t, src, "package main\n\nfunc main() { println(1) }\n")
	plugins := filepath.Join(t.TempDir(), "plugins")
	bin := filepath.Join(plugins, "tiny")
	var mu sync.Mutex
	var events []host.Event
	out := &syncBuf{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- runDev(ctx, out, devOptions{src: "tiny", pluginDir: plugins, debounce: 50 * time.Millisecond,
			onEvent: func(e host.Event) { mu.Lock(); events = append(events, e); mu.Unlock() }})
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	waitFor(t, "the first build", func() bool { return strings.Contains(out.String(), "watching the Go sources of tiny") })
	first, err := os.ReadFile(bin)
	if err != nil {
		t.Fatalf("no plugin installed: %v\n%s", err, out)
	}

	writeModule(t, src, "package main\n\nfunc main() {\n\tnotDefined()\n}\n")
	waitFor(t, "the failed build", func() bool { return strings.Contains(out.String(), "build failed") })
	if !strings.Contains(out.String(), "    tiny/main.go:4:2: undefined: notDefined") {
		t.Errorf("the error is not shown inline with its place:\n%s", out)
	}
	if now, _ := os.ReadFile(bin); !bytes.Equal(now, first) {
		t.Error("a failed build replaced the installed plugin")
	}
	mu.Lock()
	if len(events) != 1 || events[0].Kind != host.EventReloadRejected || events[0].Plugin != "tiny" || !strings.Contains(events[0].Detail, "tiny/main.go:4:2") {
		t.Errorf("events = %+v", events)
	}
	mu.Unlock()

	writeModule(t, src, "package main\n\nfunc main() { println(2) }\n")
	waitFor(t, "the second build", func() bool { return strings.Count(out.String(), "installed tiny") == 2 })
	if now, _ := os.ReadFile(bin); bytes.Equal(now, first) {
		t.Error("the fixed build was not installed")
	}
	entries, _ := os.ReadDir(plugins)
	if len(entries) != 1 {
		t.Errorf("leftovers in the plugin directory: %v", entries)
	}
}

func TestDevOncePython(t *testing.T) {
	if _, err := os.Stat(python.Interpreter); err != nil {
		t.Skipf("skipping: %s is not installed", python.Interpreter)
	}
	src := filepath.Join(t.TempDir(), "pyplug")
	os.MkdirAll(src, 0o755)
	os.WriteFile(filepath.Join(src, "plugin.json"), []byte(`{"command": ["/usr/bin/python3", "main.py"]}`), 0o644)
	os.WriteFile(filepath.Join(src, "main.py"), []byte("print('ok')\n"), 0o644)
	plugins := t.TempDir()
	var out bytes.Buffer
	if err := runDev(context.Background(), &out, devOptions{src: src, pluginDir: plugins, once: true}); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	if _, err := os.Stat(filepath.Join(plugins, "pyplug", "plugin.json")); err != nil {
		t.Fatal("not installed")
	}
	os.WriteFile(filepath.Join(src, "main.py"), []byte("def broken(:\n"), 0o644)
	out.Reset()
	err := runDev(context.Background(), &out, devOptions{src: src, pluginDir: plugins, once: true})
	var be *watch.BuildError
	if !errors.As(err, &be) || !strings.Contains(out.String(), "main.py:1:") {
		t.Fatalf("err = %v\n%s", err, out.String())
	}
	if b, _ := os.ReadFile(filepath.Join(plugins, "pyplug", "main.py")); string(b) != "print('ok')\n" {
		t.Error("a file with a syntax error was installed")
	}
}

func TestPluginsNew(t *testing.T) {
	t.Setenv(config.HomeEnv, t.TempDir())
	dir := filepath.Join(t.TempDir(), "notes")
	out, err := runCmd(t, newPluginsNewCmd(), "notes", "--lang", "python", "--hook", "message_loop_end", "--dir", dir, "--json")
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Order int
		Files []string
	}
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if r.Order < defaultOrder || len(r.Files) == 0 {
		t.Fatalf("result: %+v", r)
	}
	if _, err := os.Stat(filepath.Join(dir, "plugin.json")); err != nil {
		t.Fatal(err)
	}
	if _, err := runCmd(t, newPluginsNewCmd(), "notes", "--hook", "nope", "--dir", t.TempDir()); err == nil || !strings.Contains(err.Error(), "choose one of") {
		t.Errorf("an unknown hook: %v", err)
	}
	// From a checkout, a Go plugin builds against it.
	godir := filepath.Join(t.TempDir(), "gonotes")
	out, err = runCmd(t, newPluginsNewCmd(), "gonotes", "--dir", godir)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "created go plugin gonotes") || !strings.Contains(out, "make build") {
		t.Errorf("output: %s", out)
	}
	mod, _ := os.ReadFile(filepath.Join(godir, "go.mod"))
	if !strings.Contains(string(mod), "replace github.com/exocortex/exocortex => ") {
		t.Errorf("go.mod:\n%s", mod)
	}
}

// TestFreeOrder: the default order skips orders the built-ins use at the hook.
func TestFreeOrder(t *testing.T) {
	t.Setenv(config.HomeEnv, t.TempDir())
	for _, h := range []string{"message_loop_prompts_after", "tool_execute_after", "agent_init"} {
		o, err := freeOrder(context.Background(), h)
		if err != nil {
			t.Fatal(err)
		}
		if o < defaultOrder || o%10 != 0 {
			t.Errorf("%s: order %d", h, o)
		}
	}
}

func TestPluginHistory(t *testing.T) {
	log := strings.Join([]string{
		`{"time":"2026-11-21T10:00:00Z","kind":"load","plugin":"greeter"}`,
		`{"time":"2026-11-21T10:01:00Z","kind":"reload","plugin":"greeter","detail":"v1 -> v2"}`,
		`not json`,
		`{"time":"2026-11-21T10:02:00Z","kind":"reload_rejected","plugin":"greeter","detail":"order collision at x"}`,
		`{"time":"2026-11-21T10:03:00Z","kind":"reload_rejected","plugin":"other","detail":"does not start"}`,
		`{"time":"2026-11-21T10:04:00Z","kind":"load","plugin":"other"}`,
		`{"time":"2026-11-21T10:05:00Z","kind":"over_budget","plugin":"greeter","extension":"slow","hook":"response_stream_chunk","took_ms":90,"budget_ms":100}`,
		`{"time":"2026-11-21T10:05:01Z","kind":"over_budget","plugin":"greeter","extension":"slow","hook":"response_stream_chunk","took_ms":300,"budget_ms":100}`,
		`{"time":"2026-11-21T10:05:01Z","kind":"budget_stopped","plugin":"greeter","extension":"slow","hook":"response_stream_chunk","took_ms":300,"budget_ms":100}`,
	}, "\n")
	h := parsePluginHistory(strings.NewReader(log))
	st := h.apply([]host.PluginStatus{{Name: "greeter"}, {Name: "other"}, {Name: "quiet"}})
	if st[0].Reloads != 1 || !strings.HasSuffix(st[0].LastRejection, ": order collision at x") {
		t.Errorf("greeter: %+v", st[0])
	}
	if ob := st[0].OverBudget; len(ob) != 1 || ob[0].Extension != "slow" || ob[0].Hook != "response_stream_chunk" ||
		ob[0].Count != 2 || ob[0].Stopped != 1 || ob[0].LastMS != 300 || ob[0].BudgetMS != 100 {
		t.Errorf("greeter's time budgets from the log: %+v", ob)
	}
	if st[1].LastRejection != "" {
		t.Errorf("a rejection followed by a load is still shown: %+v", st[1])
	}
	if st[2].LastRejection != "" || st[2].Reloads != 0 {
		t.Errorf("quiet: %+v", st[2])
	}
}

// TestDevReportsEachErrorOnce: saving the same broken source again, and an
// editor's temporary files coming and going, build nothing more; the next
// real edit is built and its error shown, each error once.
func TestDevReportsEachErrorOnce(t *testing.T) {
	wd := t.TempDir()
	t.Chdir(wd)
	src := filepath.Join(wd, "tiny")
	broken := "package main\n\nfunc main() {\n\tnotDefined()\n}\n"
	writeModule(t, src, broken)
	plugins := filepath.Join(t.TempDir(), "plugins")
	out := &syncBuf{}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- runDev(ctx, out, devOptions{src: "tiny", pluginDir: plugins, debounce: 50 * time.Millisecond})
	}()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	waitFor(t, "the first build", func() bool { return strings.Contains(out.String(), "watching the Go sources of tiny") })

	// The same text saved again, as an editor or a formatter does.
	if err := os.WriteFile(filepath.Join(src, "main.go"), []byte(broken), 0o644); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond)
	// Editors' temporaries, written and removed.
	for _, name := range []string{".main.go.swp", "main.go~", "4913", ".#main.go", "#main.go#", "main.go___jb_tmp___", "main.go.kate-swp", "x.go.crswap"} {
		p := filepath.Join(src, name)
		if err := os.WriteFile(p, []byte("package main\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Remove(p)
	}
	time.Sleep(300 * time.Millisecond)
	writeModule(t, src, "package main\n\nfunc main() {\n\tstillNotDefined()\n}\n")
	waitFor(t, "the second build", func() bool { return strings.Contains(out.String(), "stillNotDefined") })
	time.Sleep(300 * time.Millisecond)
	got := out.String()
	if n := strings.Count(got, "build failed"); n != 2 {
		t.Errorf("%d builds, want 2 (the first and the real edit):\n%s", n, got)
	}
	for _, e := range []string{"undefined: notDefined", "undefined: stillNotDefined"} {
		if n := strings.Count(got, e); n != 1 {
			t.Errorf("%q shown %d times, want once:\n%s", e, n, got)
		}
	}
}
