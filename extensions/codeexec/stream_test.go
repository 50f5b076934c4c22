package codeexec

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/exocortex/exocortex/core/discover"
	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/core/llm"
	"github.com/exocortex/exocortex/core/llm/scripted"
	"github.com/exocortex/exocortex/core/loop"
	"github.com/exocortex/exocortex/prompts"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// TestToolsReportOutputAsItComes runs code_execution and data_analyze in a
// real plugin process (testdata/streaming: the tools as agent-tools serves
// them, and an extension at tool_output_update and tool_execute_after) through
// a monologue: a command or script that prints three lines a while apart
// reaches tool_output_update in pieces, in order, the first before the rest
// was printed, all of them before tool_execute_after; the operator is shown
// what the extension made of the output; the model's result is as before.
func TestToolsReportOutputAsItComes(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	bin := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/extensions/codeexec/testdata/streaming")
	tests := []struct {
		name, tool string
		args       map[string]any
		result     string
	}{
		{"code_execution", ToolName, map[string]any{"runtime": "terminal", "code": "echo one; sleep 0.7; echo two; sleep 0.7; echo three"}, "one\ntwo\nthree"},
		{"data_analyze", "data_analyze", map[string]any{"input_file_path": "data.csv", "analysis_script": "import time\nfor w in ['one', 'two', 'three']:\n    print(w, flush=True)\n    time.sleep(0.7)\n"}, "one\ntwo\nthree\n"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if tc.tool == "data_analyze" {
				if _, err := exec.LookPath("python3"); err != nil {
					t.Skip("python3 is not installed")
				}
			}
			updates, shown, result := streamSession(t, bin, tc.tool, tc.args)
			if result != tc.result {
				t.Errorf("the model's result is %q, want %q", result, tc.result)
			}
			var deltas []string
			sofar := ""
			for i, c := range updates {
				if c.Tool != tc.tool {
					t.Fatalf("update %d is %+v, want one of %s", i, c, tc.tool)
				}
				sofar += c.Delta
				if c.Output != sofar {
					t.Errorf("update %d: output %q, want the deltas so far %q", i, c.Output, sofar)
				}
				deltas = append(deltas, c.Delta)
			}
			if sofar != "one\ntwo\nthree\n" {
				t.Errorf("the deltas %q make %q, want the whole output", deltas, sofar)
			}
			// Each line came in a piece of its own: the first before "two"
			// was printed.
			if len(deltas) < 3 || strings.Contains(deltas[0], "two") || !strings.Contains(deltas[0], "one") {
				t.Errorf("pieces %q, want one per line printed", deltas)
			}
			if len(shown) != len(updates) || shown[len(shown)-1] != "ONE\nTWO\nTHREE\n" {
				t.Errorf("the operator was shown %q, want the extension's upper-cased output after each piece", shown)
			}
		})
	}
}

type logged struct {
	Hook, Tool, Delta, Output, Result string
}

// streamSession runs one monologue calling tool with args, then response, with
// testdata/streaming loaded, and returns the tool_output_update calls (all
// before the tool's tool_execute_after), what the operator was shown, and the
// tool's result in the history.
func streamSession(t *testing.T, bin, tool string, args map[string]any) ([]logged, []string, string) {
	t.Helper()
	plugins := t.TempDir()
	if err := os.MkdirAll(filepath.Join(plugins, "streaming"), 0o755); err != nil {
		t.Fatal(err)
	}
	pj, _ := json.Marshal(discover.Manifest{Command: []string{bin}})
	if err := os.WriteFile(filepath.Join(plugins, "streaming", "plugin.json"), pj, 0o644); err != nil {
		t.Fatal(err)
	}
	work := t.TempDir()
	if err := os.WriteFile(filepath.Join(work, "data.csv"), []byte("a,b\n1,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(t.TempDir(), "calls.jsonl")
	h, err := host.New(t.Context(), host.Options{Dirs: []discover.Dir{{Path: plugins, Source: discover.User}},
		PluginEnv: []string{"STREAMING_LOG=" + logPath, "STREAMING_DIR=" + work}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	call := func(tool string, args map[string]any) scripted.Reply {
		b, _ := json.Marshal(map[string]any{"thoughts": []string{"go"}, "headline": tool, "tool_name": tool, "tool_args": args})
		return scripted.Reply{Content: string(b)}
	}
	srv, err := scripted.NewServer(scripted.Script{Source: t.Name(), Replies: []scripted.Reply{
		call(tool, args),
		call("response", map[string]any{"text": "done"}),
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	client, err := llm.New(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var shown []string
	a, err := loop.New(loop.Options{Host: h, LLM: client, Prompts: prompts.NewLoader(), Model: srv.Model(), MaxIterations: 4,
		Observer: func(e loop.Event) {
			if e.Type == loop.EventToolOutput {
				mu.Lock()
				shown = append(shown, e.Text)
				mu.Unlock()
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	res, err := a.Monologue(t.Context(), "Count to three slowly.")
	if err != nil {
		t.Fatal(err)
	}
	if res.Response != "done" {
		t.Fatalf("response %q", res.Response)
	}
	var result string
	for _, m := range a.History() {
		if m.GetRole() == "tool" {
			result = m.GetContent()
		}
	}
	f, err := os.Open(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var calls []logged
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var c logged
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		calls = append(calls, c)
	}
	// The response tool's tool_execute_after comes last.
	n := len(calls)
	if n < 5 || calls[n-2].Hook != "tool_execute_after" || calls[n-2].Tool != tool {
		t.Fatalf("calls %+v: want at least three tool_output_update, then %s's tool_execute_after", calls, tool)
	}
	for i, c := range calls[:n-2] {
		if c.Hook != "tool_output_update" {
			t.Fatalf("call %d is %+v, want tool_output_update before tool_execute_after", i, c)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	return calls[:n-2], shown, result
}
