package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/core/hooks"
	"github.com/exocortex/exocortex/core/loop"
	"github.com/exocortex/exocortex/sdk/sdktest"
	"github.com/exocortex/exocortex/signals"
)

var update = flag.Bool("update", false, "rewrite golden files")

// e2eScript is the scripted model of the end-to-end test: a tool call, a read,
// a write and a patch through the built-in text_editor, a tool reporting its progress and an
// embedding model change (the tool-side hooks), a failed model call that an
// extension at message_loop_exception handles, two failing response calls (the second with other arguments, so not a repeat), the same
// failing call again (a repeat), and the answer. Before the answer the
// history outgrows the small window the test gives (--num-ctx e2eNumCtx) and
// is compressed by the utility model (utilityReply), which fires
// util_model_call_before/after.
const e2eScript = `model: e2e
replies:
  - content: '{"thoughts":["start"],"headline":"greet","tool_name":"hello_time","tool_args":{"name":"e2e"}}'
    thinking: 'The operator wants a greeting first.'
  - content: '{"thoughts":["look"],"headline":"read","tool_name":"text_editor","tool_args":{"action":"read","path":"notes.txt"}}'
  - content: '{"thoughts":["note"],"headline":"write","tool_name":"text_editor","tool_args":{"action":"write","path":"todo.txt","content":"buy milk\n"}}'
  - content: '{"thoughts":["fix"],"headline":"patch","tool_name":"text_editor","tool_args":{"action":"patch","path":"todo.txt","old_text":"milk","new_text":"eggs"}}'
  - content: '{"thoughts":["work"],"headline":"work","tool_name":"progress","tool_args":{}}'
` + handledFailure + `  - content: '{"thoughts":["answer"],"tool_name":"response","tool_args":{}}'
  - content: '{"thoughts":["answer again"],"tool_name":"response","tool_args":{"txt":"typo"}}'
  - content: '{"thoughts":["answer again"],"tool_name":"response","tool_args":{"txt":"typo"}}'
` + utilityReply + `  - content: '{"thoughts":["done"],"tool_name":"response","tool_args":{"text":"All done."}}'
`

// utilityReply is the utility model's summary when the history is compressed
// before the last iteration's request (the utility model is the script's own
// model, so its call takes the next reply). modelhooks' util_model_call_before
// marks the message with UTILMARK, so the reply proves the hook's change
// reached the utility model. Sessions that do not compress leave it out.
const utilityReply = `  - content: '- the operator was greeted; todo.txt says buy eggs'
    expect_contains: 'UTILMARK'
`

// e2eNumCtx is the end-to-end run's context window: small enough that the
// history exceeds its budget at the last iteration (1054 tokens against 892;
// 712 at the one before, so it is compressed exactly once), with some room
// either side so a prompt edit does not move the compression.
const e2eNumCtx = "3456"

// handledFailure is the e2e script's failed model call, which the modelhooks
// plugin handles at message_loop_exception; sessions without that plugin leave
// it out.
const handledFailure = `  - error: 'handle-me: the server hiccuped'
    status: 400
`

func readEvents(t *testing.T, out []byte) []loop.Event {
	t.Helper()
	var evs []loop.Event
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	for sc.Scan() {
		var e loop.Event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("--json wrote a line that is not an event: %q: %v", sc.Text(), err)
		}
		evs = append(evs, e)
	}
	return evs
}

// TestEndToEnd runs the real binary with real plugin processes against the
// scripted model server, once for each provider's protocol (Ollama's and the
// OpenAI-compatible one): the hook trace must match the same golden file.
func TestEndToEnd(t *testing.T) {
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
	for _, provider := range []string{"ollama", "openai"} {
		t.Run(provider, func(t *testing.T) {
			home := t.TempDir()
			plugins := filepath.Join(home, "plugins")
			if err := os.MkdirAll(plugins, 0o755); err != nil {
				t.Fatal(err)
			}
			for name, path := range built {
				copyExecutable(t, path, filepath.Join(plugins, name))
			}
			endToEnd(t, exe, home, script, provider)
		})
	}
}

func endToEnd(t *testing.T, exe, home, script, provider string) {
	// The utility model (the script's model) writes the summary of history
	// compression.
	if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte("utility_model: e2e\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(exe, "run", "-p", "Say hello, then answer.", "--json", "--model", "script:"+script, "--provider", provider, "--num-ctx", e2eNumCtx)
	cmd.Dir = t.TempDir()
	// The file the script reads through the built-in text_editor.
	if err := os.WriteFile(filepath.Join(cmd.Dir, "notes.txt"), []byte("remember the milk\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd.Env = append(os.Environ(), "EXOCORTEX_HOME="+home, "EXOCORTEX_TEST_CRASH_MARKER="+filepath.Join(t.TempDir(), "crashed"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("exocortex run: %v\nstderr:\n%s\nstdout:\n%s", err, stderr.String(), out)
	}
	// The first line says which server the run talks to.
	var first modelEvent
	if err := json.Unmarshal(bytes.SplitN(out, []byte("\n"), 2)[0], &first); err != nil || first.Type != "model" || first.Provider != provider || first.Model != "e2e" || !strings.HasPrefix(first.BaseURL, "http://127.0.0.1:") {
		t.Errorf("first line %+v (%v), want the model event naming provider %s", first, err, provider)
	}
	evs := readEvents(t, out)

	// The exact hook order of the test's own plugins (the built-ins' order is
	// pinned by WIRING.md), with signals and tool calls, against the golden file.
	ours := map[string]bool{"hello": true, "statepair-writer": true, "statepair-reader": true, "crashonce": true, "modelhooks": true, "toolwatch": true}
	// A stream hook fires once per piece of a stream, and how a stream is cut
	// into pieces depends on timing: consecutive calls of one stream
	// extension are one line.
	stream := map[string]bool{"response_stream_chunk": true, "response_stream": true, "reasoning_stream_chunk": true, "reasoning_stream": true,
		"tool_output_update": true}
	var trace strings.Builder
	lastStream := ""
	for _, e := range evs {
		switch e.Type {
		case loop.EventHook:
			if !ours[e.Plugin] {
				continue
			}
			if key := fmt.Sprint(e.Iteration, e.Hook, e.Extension); stream[e.Hook] && key == lastStream {
				continue
			} else if stream[e.Hook] {
				lastStream = key
			} else {
				lastStream = ""
			}
			status := "ok"
			if e.Error != "" {
				status = "FAILED"
			}
			fmt.Fprintf(&trace, "%d %-28s %-26s %-18s %3d %s reads=%v writes=%v\n", e.Iteration, e.Hook, e.Extension, e.Plugin, *e.Order, status, e.Reads, e.Writes)
		case loop.EventSignal, loop.EventToolCall, loop.EventToolResult, loop.EventResponse:
			fmt.Fprintf(&trace, "%d %s %s%s\n", e.Iteration, e.Type, e.Signal, e.Tool)
		case loop.EventCompression:
			fmt.Fprintf(&trace, "%d %s %s messages=%d\n", e.Iteration, e.Type, e.Compression.Method, e.Compression.Messages)
		}
	}
	golden := filepath.Join("testdata", "e2e_hooks.golden")
	if *update {
		if err := os.WriteFile(golden, []byte(trace.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if trace.String() != string(want) {
		t.Errorf("hook trace differs from %s (go test -run TestEndToEnd -update to rewrite):\n%s", golden, trace.String())
	}

	// Every plugin's hooks, built-ins included, fired within each iteration in
	// the order core/hooks declares (hooks.Iteration, which the wiring lint
	// simulates and WIRING.md is ordered by).
	checkIterationOrder(t, evs)

	// The built-in text_editor wrote and patched the file (through the
	// text_editor_* hooks of the trace).
	if b, err := os.ReadFile(filepath.Join(cmd.Dir, "todo.txt")); err != nil || string(b) != "buy eggs\n" {
		t.Errorf("todo.txt holds %q (%v), want the patched write", b, err)
	}

	// The history was compressed once, by the utility model, and
	// util_model_call_after's rewrite is the summary kept.
	var compressions []*loop.Compression
	for _, e := range evs {
		if e.Type == loop.EventCompression {
			compressions = append(compressions, e.Compression)
		}
	}
	if len(compressions) != 1 || compressions[0].Method != "utility" || !strings.HasPrefix(compressions[0].Added, "- hooked: the operator was greeted") {
		for _, c := range compressions {
			t.Logf("compression: method %q fallback %q added %.80q", c.Method, c.Fallback, c.Added)
		}
		t.Fatalf("%d compressions, want one by the utility model carrying util_model_call_after's rewrite", len(compressions))
	}

	var final string
	var signalsSeen []string
	var crashes, laterCrashOnce int
	for _, e := range evs {
		switch {
		case e.Type == loop.EventResponse:
			final = e.Text
		case e.Type == loop.EventSignal:
			signalsSeen = append(signalsSeen, e.Signal)
		case e.Type == loop.EventHook && e.Extension == "crash_once" && e.Error != "":
			crashes++
			if !strings.Contains(e.Error, "crashed") {
				t.Errorf("the killed plugin's event says %q, want a crash", e.Error)
			}
		case e.Type == loop.EventHook && e.Extension == "crash_once" && e.Iteration > 1:
			laterCrashOnce++
		}
	}
	if final != "All done." {
		t.Fatalf("final response = %q", final)
	}
	if crashes != 1 || laterCrashOnce == 0 {
		t.Fatalf("crash_once: %d crashes, %d later calls; want one crash and the restarted plugin serving later iterations", crashes, laterCrashOnce)
	}
	// A typed signal on the repeated reply, seen by the example reader.
	if !contains(signalsSeen, signals.Repeat) {
		t.Fatalf("signals = %v, want %s on the repeated reply", signalsSeen, signals.Repeat)
	}
	// Typed state between two plugins: the writer's failure_tracker reached the
	// reader, whose intervention reached the model (two failures of response).
	var interventions []string
	for _, e := range evs {
		if e.Type == loop.EventSignal && e.Signal == signals.Intervention {
			interventions = append(interventions, e.Text)
		}
	}
	if !containsText(interventions, "response (2 times)") {
		t.Fatalf("interventions = %q\nwant the reader's alarm about response failing twice", interventions)
	}
	if !containsText(interventions, "statepair_repeat_alarm") && !containsText(interventions, "repeat") {
		t.Logf("interventions: %q", interventions)
	}
}

func contains(xs []string, x string) bool {
	for _, s := range xs {
		if s == x {
			return true
		}
	}
	return false
}

func containsText(xs []string, sub string) bool {
	for _, s := range xs {
		if strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// checkIterationOrder asserts that the hooks each iteration fired are, in the
// order they fired, a subsequence of hooks.Iteration(): the loop and what the
// lint and WIRING.md are told about it cannot drift apart.
func checkIterationOrder(t *testing.T, evs []loop.Event) {
	t.Helper()
	// The stream hooks fire piece by piece, reasoning and response pieces
	// interleaved as the model sends them: they are one step here.
	step := func(h string) string {
		switch h {
		case "reasoning_stream_chunk", "reasoning_stream", "response_stream_chunk", "response_stream":
			return "(streams)"
		}
		return h
	}
	var order []string
	for _, h := range hooks.Iteration() {
		if s := step(strings.ToLower(strings.TrimPrefix(h.String(), "HOOK_"))); len(order) == 0 || order[len(order)-1] != s {
			order = append(order, s)
		}
	}
	outside := map[string]bool{"agent_init": true, "monologue_start": true, "monologue_end": true, "process_chain_end": true}
	byIter := map[int][]string{}
	var iters []int
	for _, e := range evs {
		if e.Type != loop.EventHook || e.Iteration == 0 || outside[e.Hook] {
			continue
		}
		h := step(e.Hook)
		seq := byIter[e.Iteration]
		if len(seq) > 0 && seq[len(seq)-1] == h {
			continue // the next extension of the same call, or the next piece of a stream
		}
		if seq == nil {
			iters = append(iters, e.Iteration)
		}
		byIter[e.Iteration] = append(seq, h)
	}
	if len(iters) == 0 {
		t.Fatal("no hook fired inside an iteration")
	}
	for _, it := range iters {
		pos := 0
		for _, h := range byIter[it] {
			for pos < len(order) && order[pos] != h {
				pos++
			}
			if pos == len(order) {
				t.Errorf("iteration %d fired %v: %s is out of hooks.Iteration()'s order %v", it, byIter[it], h, order)
				break
			}
			pos++
		}
	}
}
