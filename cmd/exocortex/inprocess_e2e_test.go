package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/core/loop"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// TestBuiltinsInProcessSameSession runs one scripted session (the e2e script:
// tools, a third-party plugin that crashes once, history compression, the
// memory extensions writing) twice, once with every built-in (agent-tools,
// cognition, command-hooks, mcp-servers, memory-tools, safety, supervision)
// served in the host's process (the default) and once with every built-in
// in a process of its own
// (builtin_plugins_in_process: false): every hook call (hook, extension,
// plugin, order, keys read and written, error), every request sent to the
// model and the answer must be the same, and `plugins status` must show the
// same plugins running.
func TestBuiltinsInProcessSameSession(t *testing.T) {
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	built := map[string]string{}
	for name, pkg := range map[string]string{
		"hello":            "github.com/exocortex/exocortex/examples/hello",
		"statepair-writer": "github.com/exocortex/exocortex/examples/statepair/writer",
		"statepair-reader": "github.com/exocortex/exocortex/examples/statepair/reader",
		"crashonce":        "./testdata/crashonce",
		"modelhooks":       "github.com/exocortex/exocortex/core/loop/testdata/modelhooks",
		"toolwatch":        "./testdata/toolwatch",
	} {
		built[name] = sdktest.BuildPlugin(t, pkg)
	}
	script := filepath.Join(t.TempDir(), "e2e.yaml")
	if err := os.WriteFile(script, []byte(e2eScript), 0o644); err != nil {
		t.Fatal(err)
	}
	type result struct{ hooks, requests, answer, status string }
	runs := map[string]result{}
	for _, mode := range []struct{ name, config string }{
		{"in-process", ""},
		{"processes", "builtin_plugins_in_process: false\n"},
	} {
		home := t.TempDir()
		plugins := filepath.Join(home, "plugins")
		if err := os.MkdirAll(plugins, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, path := range built {
			copyExecutable(t, path, filepath.Join(plugins, name))
		}
		if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte("utility_model: e2e\n"+mode.config), 0o644); err != nil {
			t.Fatal(err)
		}
		// One project directory for both, so the paths in the requests match.
		dir := filepath.Join(os.TempDir(), "exocortex-inprocess-test-"+fmt.Sprint(os.Getpid()))
		os.RemoveAll(dir)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("remember the milk\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(exe, "run", "-p", "Say hello, then answer.", "--json", "--model", "script:"+script, "--provider", "ollama", "--num-ctx", e2eNumCtx)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "EXOCORTEX_HOME="+home, "EXOCORTEX_TEST_CRASH_MARKER="+filepath.Join(t.TempDir(), "crashed"))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("%s: exocortex run: %v\nstderr:\n%s", mode.name, err, stderr.String())
		}
		var r result
		r.hooks, r.requests, r.answer = sessionTrace(t, readEvents(t, out), home)
		st := exec.Command(exe, "plugins", "status", "--json")
		st.Dir = dir
		st.Env = append(os.Environ(), "EXOCORTEX_HOME="+home)
		so, err := st.Output()
		if err != nil {
			t.Fatalf("%s: plugins status: %v", mode.name, err)
		}
		r.status = pluginStates(t, so)
		runs[mode.name] = r
	}
	a, b := runs["in-process"], runs["processes"]
	if a.requests == "" {
		t.Fatalf("the in-process run recorded no requests")
	}
	// Every built-in's hooks ran (agent-tools has tools only: its results
	// are in the requests, text_editor's among them).
	for _, p := range []string{"memory-tools", "cognition", "supervision", "safety", "command-hooks", "mcp-servers"} {
		if !strings.Contains(a.hooks, " "+p+" ") {
			t.Fatalf("the in-process run recorded no call of the built-in %s:\n%s", p, a.hooks)
		}
	}
	if !strings.Contains(a.requests, "remember the milk") {
		t.Fatalf("the in-process run's requests hold no text_editor result (agent-tools):\n%s", a.requests)
	}
	for _, c := range []struct{ what, in, out string }{
		{"hook calls", a.hooks, b.hooks}, {"requests", a.requests, b.requests},
		{"answer", a.answer, b.answer}, {"plugins status", a.status, b.status},
	} {
		if c.in != c.out {
			t.Errorf("%s differ between the built-ins in process and in processes:\n%s", c.what, lineDiff(c.in, c.out))
		}
	}
}

// sessionTrace is a run's hook calls (a stream hook's calls for one
// extension in one iteration folded into the first: how many pieces a reply
// streams in depends on timing, and two extensions' pieces interleave), its
// requests and its answer, as text, with the run's home directory written
// as $HOME so two runs compare.
func sessionTrace(t *testing.T, evs []loop.Event, home string) (hooks, requests, answer string) {
	t.Helper()
	stream := map[string]bool{"response_stream_chunk": true, "response_stream": true, "reasoning_stream_chunk": true, "reasoning_stream": true, "tool_output_update": true}
	var h, r strings.Builder
	streamed := map[string]bool{}
	for _, e := range evs {
		switch e.Type {
		case loop.EventHook:
			if stream[e.Hook] {
				key := fmt.Sprint(e.Iteration, e.Hook, e.Extension)
				if streamed[key] {
					continue
				}
				streamed[key] = true
			}
			var order int32
			if e.Order != nil {
				order = *e.Order
			}
			fmt.Fprintf(&h, "%d %s %s %s %d err=%q reads=%v writes=%v\n", e.Iteration, e.Hook, e.Extension, e.Plugin, order, e.Error, e.Reads, e.Writes)
		case loop.EventRequest:
			b, err := json.Marshal(e.Request)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&r, "%d %s\n", e.Iteration, b)
		case loop.EventResponse:
			answer = e.Text
		}
	}
	norm := func(s string) string {
		return timestamps.ReplaceAllString(strings.ReplaceAll(s, home, "$HOME"), "TIME")
	}
	return norm(h.String()), norm(r.String()), norm(answer)
}

// timestamps are the clock readings a request carries (the current time in
// the system prompt, when things were saved), which differ run to run.
var timestamps = regexp.MustCompile(`\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:?\d\d)?( UTC)?`)

// pluginStates is `plugins status --json` cut to each plugin's name and state.
func pluginStates(t *testing.T, out []byte) string {
	t.Helper()
	var st []struct {
		Name  string `json:"name"`
		State string `json:"state"`
	}
	if err := json.Unmarshal(out, &st); err != nil {
		t.Fatalf("plugins status --json: %v\n%s", err, out)
	}
	var b strings.Builder
	for _, p := range st {
		fmt.Fprintf(&b, "%s %s\n", p.Name, p.State)
	}
	return b.String()
}

// lineDiff lists the lines of a and b that differ, by number.
func lineDiff(a, b string) string {
	x, y := strings.Split(a, "\n"), strings.Split(b, "\n")
	var out strings.Builder
	for i := 0; i < max(len(x), len(y)); i++ {
		var l, r string
		if i < len(x) {
			l = x[i]
		}
		if i < len(y) {
			r = y[i]
		}
		if l != r {
			fmt.Fprintf(&out, "line %d:\n  in process: %.400s\n  processes:  %.400s\n", i+1, l, r)
		}
	}
	return out.String()
}
