package loop

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/exocortex/exocortex/core/discover"
	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/core/llm"
	"github.com/exocortex/exocortex/core/llm/scripted"
	"github.com/exocortex/exocortex/prompts"
	"github.com/exocortex/exocortex/sdk/python"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// TestPythonToolReportsOutput runs testdata/pytoolhooks, a real Python plugin
// process, through a monologue: its tool's Call.report_output pieces reach
// tool_output_update in order, each answered with what the operator was shown
// (the extension's masked output), before tool_execute_after; its
// Call.report_embedding_model_changed reaches embedding_model_changed with the
// models, dimensions and store.
func TestPythonToolReportsOutput(t *testing.T) {
	if out, err := exec.Command(python.Interpreter, "-c", "import grpc, google.protobuf").CombinedOutput(); err != nil {
		t.Skipf("%s cannot import grpc and google.protobuf (%v: %s): apt-get install -y python3-grpcio python3-protobuf", python.Interpreter, err, out)
	}
	plugins := t.TempDir()
	dir := filepath.Join(plugins, "pytoolhooks")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile("testdata/pytoolhooks/main.py")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "main.py"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := python.Install(dir); err != nil {
		t.Fatal(err)
	}
	installPlugin(t, plugins, "pytoolhooks", python.Interpreter, "main.py")
	logPath := filepath.Join(t.TempDir(), "calls.jsonl")
	h, err := host.New(t.Context(), host.Options{Dirs: []discover.Dir{{Path: plugins, Source: discover.User}},
		PluginEnv: []string{"PYTOOLHOOKS_LOG=" + logPath}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	srv, err := scripted.NewServer(scripted.Script{Source: t.Name(), Replies: []scripted.Reply{
		toolCallReply("stream", map[string]any{}),
		toolCallReply("response", map[string]any{"text": "done"}),
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	c, _ := llm.New(srv.URL())
	rec := &recorder{}
	a, err := New(Options{Host: h, LLM: c, Prompts: prompts.NewLoader(), Model: srv.Model(), Observer: rec.observe, MaxIterations: 4})
	if err != nil {
		t.Fatal(err)
	}
	h.Services().SetEmbeddingSink(a.ReportEmbeddingChange)
	if res, err := a.Monologue(t.Context(), "Stream."); err != nil || res.Response != "done" {
		t.Fatalf("monologue: %v %+v", err, res)
	}
	var result string
	for _, m := range a.History() {
		if m.GetRole() == "tool" && strings.HasPrefix(m.GetContent(), "streamed") {
			result = m.GetContent()
		}
	}
	if want := "streamed; shown: one  | one ******  | one ****** three"; result != want {
		t.Errorf("the tool's result %q, want %q (what the operator was shown after each piece)", result, want)
	}
	var shown []string
	for _, e := range rec.events {
		if e.Type == EventToolOutput {
			shown = append(shown, e.Text)
		}
	}
	if got := strings.Join(shown, "|"); got != "one |one ****** |one ****** three" {
		t.Errorf("the operator was shown %q", got)
	}

	f, err := os.Open(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var calls []map[string]any
	var order []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var c map[string]any
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		calls = append(calls, c)
		order = append(order, c["hook"].(string))
	}
	want := []string{"tool_output_update", "tool_output_update", "tool_output_update", "embedding_model_changed", "tool_execute_after", "tool_execute_after"}
	if strings.Join(order, " ") != strings.Join(want, " ") {
		t.Fatalf("hooks fired: %s\nwant: %s", strings.Join(order, " "), strings.Join(want, " "))
	}
	checks := []struct {
		i     int
		key   string
		value any
	}{
		{0, "delta", "one "}, {1, "delta", "secret "}, {1, "output", "one secret "}, {2, "delta", "three"},
		{3, "old", "glove-100d"}, {3, "old_dims", float64(100)}, {3, "new", "nomic-embed-text"}, {3, "new_dims", float64(768)}, {3, "store", "/tmp/store"},
	}
	for _, c := range checks {
		if got := calls[c.i][c.key]; got != c.value {
			t.Errorf("call %d (%s): %s = %v, want %v", c.i, order[c.i], c.key, got, c.value)
		}
	}
}

// TestHostServicesLongAfterStart: a Go plugin's tool reaches the host's
// services on a first call long after the plugin started (go-plugin keeps the
// host's announcement of them for five seconds; the SDK dials at start).
func TestHostServicesLongAfterStart(t *testing.T) {
	bin := sdktest.BuildPlugin(t, "./testdata/toolhooks")
	dir := t.TempDir()
	installPlugin(t, dir, "toolhooks", bin)
	logPath := filepath.Join(t.TempDir(), "calls.jsonl")
	h, err := host.New(t.Context(), host.Options{Dirs: []discover.Dir{{Path: dir, Source: discover.User}},
		PluginEnv: []string{"TOOLHOOKS_LOG=" + logPath, "TOOLHOOKS_DIR=" + t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	time.Sleep(6 * time.Second)
	srv, err := scripted.NewServer(scripted.Script{Source: t.Name(), Replies: []scripted.Reply{
		toolCallReply("stream", map[string]any{}),
		toolCallReply("response", map[string]any{"text": "done"}),
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	c, _ := llm.New(srv.URL())
	a, err := New(Options{Host: h, LLM: c, Prompts: prompts.NewLoader(), Model: srv.Model(), MaxIterations: 4})
	if err != nil {
		t.Fatal(err)
	}
	h.Services().SetEmbeddingSink(a.ReportEmbeddingChange)
	if res, err := a.Monologue(t.Context(), "Stream."); err != nil || res.Response != "done" {
		t.Fatalf("monologue: %v %+v", err, res)
	}
	for _, m := range a.History() {
		if m.GetRole() == "tool" && !strings.HasPrefix(m.GetContent(), "streamed; shown: one ") {
			t.Errorf("the tool's result %q: it did not reach the host's services", m.GetContent())
		}
	}
}
