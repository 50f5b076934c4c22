package loop

import (
	"context"
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

// slowPlugins installs the slow plugin, written with the Go SDK or the Python
// SDK, in a plugin directory of its own.
func slowPlugin(t *testing.T, lang string) string {
	t.Helper()
	dir := t.TempDir()
	switch lang {
	case "go":
		installPlugin(t, dir, "slow", sdktest.BuildPlugin(t, "./testdata/slowplugin"))
	case "python":
		if out, err := exec.Command(python.Interpreter, "-c", "import grpc, google.protobuf").CombinedOutput(); err != nil {
			if os.Getenv("EXOCORTEX_CONFORMANCE_PYTHON") == "require" {
				t.Fatalf("the Python plugin is required, but %s cannot import grpc: %v %s", python.Interpreter, err, out)
			}
			t.Skipf("%s cannot import grpc and google.protobuf: %s", python.Interpreter, out)
		}
		pdir := filepath.Join(dir, "slow")
		src, err := os.ReadFile("testdata/slowplugin_py/main.py")
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(pdir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(pdir, "main.py"), src, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := python.Install(pdir); err != nil {
			t.Fatal(err)
		}
		pj, _ := json.Marshal(discover.Manifest{Command: []string{python.Interpreter, "main.py"}})
		if err := os.WriteFile(filepath.Join(pdir, "plugin.json"), pj, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// TestSlowExtensionsAreReported runs two monologues with a plugin (Go, then
// Python) whose stream extension sleeps 80ms per chunk against a 20ms budget,
// and whose message_loop_end extension sleeps 150ms against 50ms per
// iteration. The stream extension is reported for each of its first three
// calls, then stopped for the rest of the monologue with an event saying so,
// and called again in the next monologue; the other is reported once per
// iteration and keeps running. `plugins status` (host.Status) shows both.
func TestSlowExtensionsAreReported(t *testing.T) {
	for _, lang := range []string{"go", "python"} {
		t.Run(lang, func(t *testing.T) {
			dir := slowPlugin(t, lang)
			h, err := host.New(t.Context(), host.Options{Dirs: []discover.Dir{{Path: dir, Source: discover.User}}, StartTimeout: 20 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(h.Close)
			if f := h.FailedPlugins(); len(f) > 0 {
				t.Fatal(f[0])
			}
			// A reply of about 15 chunks of 64 bytes, 60ms apart: each fires
			// response_stream_chunk.
			long := `{"thoughts":["` + strings.Repeat("a long thought that streams in many pieces ", 20) +
				`"],"headline":"done","tool_name":"response","tool_args":{"text":"done"}}`
			reply := scripted.Reply{Content: long, ChunkSize: 64, Delay: 60 * time.Millisecond}
			srv, err := scripted.NewServer(scripted.Script{Replies: []scripted.Reply{reply, reply}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { srv.Close() })
			c, _ := llm.New(srv.URL())
			rec := &recorder{}
			a, err := New(Options{Host: h, LLM: c, Prompts: prompts.NewLoader(), Model: srv.Model(), MaxIterations: 3,
				Observer: rec.observe, TimeBudgets: TimeBudgets{Stream: 20 * time.Millisecond,
					Hooks: map[string]time.Duration{"message_loop_end": 50 * time.Millisecond}}})
			if err != nil {
				t.Fatal(err)
			}
			for range 2 {
				if _, err := a.Monologue(context.Background(), "answer at length"); err != nil {
					t.Fatal(err)
				}
			}

			var chunkCalls, budgets []Event
			for _, e := range rec.events {
				switch {
				case e.Type == EventHook && e.Extension == "slow_display":
					chunkCalls = append(chunkCalls, e)
				case e.Type == EventOverBudget:
					budgets = append(budgets, e)
				}
			}
			if len(chunkCalls) != 6 {
				t.Errorf("slow_display was called %d times in two monologues, want 3 in each before it is stopped", len(chunkCalls))
			}
			var display, end []Event
			for _, e := range budgets {
				switch e.Extension {
				case "slow_display":
					display = append(display, e)
				case "slow_end":
					end = append(end, e)
				}
			}
			if len(display) != 6 {
				t.Fatalf("budget events for slow_display: %d, want 6: %+v", len(display), display)
			}
			for i, e := range display {
				stopped := i%3 == 2
				if e.Plugin != "slow" || e.Hook != "response_stream_chunk" || e.Per != "call" || e.BudgetUS != 20000 ||
					e.DurationUS < 20000 || e.Skipped != stopped {
					t.Errorf("budget event %d: %+v", i, e)
				}
				if stopped && !strings.Contains(e.Text, "not called at response_stream_chunk for the rest of this monologue") {
					t.Errorf("the stopping event does not say so: %q", e.Text)
				}
			}
			if len(end) != 2 || end[0].Per != "iteration" || end[0].Skipped || end[0].BudgetUS != 50000 ||
				!strings.Contains(end[0].Text, "slow_end (plugin slow) took") {
				t.Errorf("budget events for slow_end: %+v, want one per iteration (two monologues of one)", end)
			}
			if n := len(rec.hook("slow_end")); n != 2 {
				t.Errorf("slow_end ran %d times, want 2: over its budget it is reported, not stopped", n)
			}

			st := h.Status()
			if len(st) != 1 || len(st[0].OverBudget) != 2 {
				t.Fatalf("status: %+v, want the two extensions over budget", st)
			}
			ob := st[0].OverBudget
			if ob[0].Extension != "slow_display" || ob[0].Count != 6 || ob[0].Stopped != 2 || ob[0].BudgetMS != 20 ||
				ob[1].Extension != "slow_end" || ob[1].Count != 2 || ob[1].Stopped != 0 {
				t.Errorf("status over budget: %+v", ob)
			}
		})
	}
}

// TestUnknownBudgetHook: a budget for a hook that does not exist is refused,
// naming it.
func TestUnknownBudgetHook(t *testing.T) {
	_, err := New(Options{Host: &host.Host{}, LLM: &llm.Client{}, Prompts: prompts.NewLoader(), Model: "m",
		TimeBudgets: TimeBudgets{Hooks: map[string]time.Duration{"response_stream_chunks": time.Second}}})
	if err == nil || !strings.Contains(err.Error(), `"response_stream_chunks", which is not a hook`) {
		t.Fatalf("err = %v", err)
	}
}
