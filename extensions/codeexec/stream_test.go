package codeexec

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/exocortex/exocortex/core/discover"
	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/core/llm"
	"github.com/exocortex/exocortex/core/llm/scripted"
	"github.com/exocortex/exocortex/core/loop"
	"github.com/exocortex/exocortex/prompts"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// TestStreamerCoalesces: pieces written while a report is in flight go out
// together in the next one, never more often than the interval; a character
// split across writes is never split across reports; a backlog beyond the
// bound is dropped from the report with a note; a failed report turns the
// streamer off; close reports what is left.
func TestStreamerCoalesces(t *testing.T) {
	type write struct {
		text  string
		pause time.Duration
	}
	tests := []struct {
		name    string
		writes  []write
		fail    bool
		want    func(t *testing.T, reports []string)
		every   time.Duration
		reports int // at most
	}{
		{name: "burst is one or two reports", every: 200 * time.Millisecond,
			writes: []write{{"a", 0}, {"b", 0}, {"c", 0}, {"d", 0}},
			want: func(t *testing.T, r []string) {
				if strings.Join(r, "") != "abcd" || len(r) > 2 {
					t.Errorf("reports %q, want abcd in at most two", r)
				}
			}},
		{name: "pauses make pieces", every: 10 * time.Millisecond,
			writes: []write{{"one\n", 150 * time.Millisecond}, {"two\n", 150 * time.Millisecond}, {"three\n", 0}},
			want: func(t *testing.T, r []string) {
				if strings.Join(r, "") != "one\ntwo\nthree\n" || len(r) != 3 {
					t.Errorf("reports %q, want one piece per pause", r)
				}
			}},
		{name: "split character", every: 10 * time.Millisecond,
			writes: []write{{"é"[:1], 100 * time.Millisecond}, {"é"[1:] + "x", 0}},
			want: func(t *testing.T, r []string) {
				for _, s := range r {
					if !strings.HasPrefix("éx", s) && !strings.HasSuffix("éx", s) {
						t.Errorf("report %q splits a character (all: %q)", s, r)
					}
				}
				if strings.Join(r, "") != "éx" {
					t.Errorf("reports %q, want éx", r)
				}
			}},
		{name: "backlog dropped with a note", every: time.Hour,
			writes: []write{{"first", 50 * time.Millisecond}, {strings.Repeat("x", reportBacklog+10) + "end", 0}},
			want: func(t *testing.T, r []string) {
				if len(r) != 2 || r[0] != "first" || !strings.HasPrefix(r[1], "[… 13 bytes of output not shown …]\n") || !strings.HasSuffix(r[1], "end") {
					t.Errorf("reports %.80q", r)
				}
			}},
		{name: "failure stops reporting", every: 10 * time.Millisecond, fail: true,
			writes: []write{{"a", 50 * time.Millisecond}, {"b", 50 * time.Millisecond}, {"c", 0}},
			want: func(t *testing.T, r []string) {
				if len(r) != 1 || r[0] != "a" {
					t.Errorf("reports after a failure: %q", r)
				}
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var mu sync.Mutex
			var reports []string
			s := newStreamer(t.Context(), tc.every, func(_ context.Context, d string) error {
				mu.Lock()
				reports = append(reports, d)
				mu.Unlock()
				if tc.fail {
					return errors.New("no tool call with this context is running")
				}
				return nil
			})
			for _, w := range tc.writes {
				s.write([]byte(w.text))
				time.Sleep(w.pause)
			}
			s.close()
			mu.Lock()
			defer mu.Unlock()
			tc.want(t, reports)
		})
	}
}

// TestCodeExecutionReportsOutputAsItComes runs code_execution in a real
// plugin process (testdata/streaming: the tool as agent-tools serves it, and an
// extension at tool_output_update and tool_execute_after) through a monologue:
// a command that prints three lines a while apart reaches tool_output_update
// in pieces, in order, the first before the command is done, all of them
// before tool_execute_after; the operator is shown what the extension made of
// the output; the model's result is the whole output as before.
func TestCodeExecutionReportsOutputAsItComes(t *testing.T) {
	if _, err := exec.LookPath("bash"); err != nil {
		t.Skip("bash is not installed")
	}
	bin := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/extensions/codeexec/testdata/streaming")
	plugins := t.TempDir()
	if err := os.MkdirAll(filepath.Join(plugins, "streaming"), 0o755); err != nil {
		t.Fatal(err)
	}
	pj, _ := json.Marshal(discover.Manifest{Command: []string{bin}})
	if err := os.WriteFile(filepath.Join(plugins, "streaming", "plugin.json"), pj, 0o644); err != nil {
		t.Fatal(err)
	}
	logPath := filepath.Join(t.TempDir(), "calls.jsonl")
	h, err := host.New(t.Context(), host.Options{Dirs: []discover.Dir{{Path: plugins, Source: discover.User}},
		PluginEnv: []string{"STREAMING_LOG=" + logPath, "STREAMING_DIR=" + t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	call := func(tool string, args map[string]any) scripted.Reply {
		b, _ := json.Marshal(map[string]any{"thoughts": []string{"go"}, "headline": tool, "tool_name": tool, "tool_args": args})
		return scripted.Reply{Content: string(b)}
	}
	srv, err := scripted.NewServer(scripted.Script{Source: t.Name(), Replies: []scripted.Reply{
		call(ToolName, map[string]any{"runtime": "terminal", "code": "echo one; sleep 0.7; echo two; sleep 0.7; echo three"}),
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
	if result != "one\ntwo\nthree" {
		t.Errorf("the model's result is %q, want the whole output", result)
	}

	type logged struct {
		Hook, Tool, Delta, Output, Result string
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
	if n := len(calls); n < 5 || calls[n-2].Hook != "tool_execute_after" || calls[n-2].Tool != ToolName {
		t.Fatalf("calls %+v: want at least three tool_output_update, then code_execution's tool_execute_after", calls)
	}
	updates := calls[:len(calls)-2]
	var deltas []string
	sofar := ""
	for i, c := range updates {
		if c.Hook != "tool_output_update" || c.Tool != ToolName {
			t.Fatalf("call %d is %+v, want tool_output_update of %s", i, c, ToolName)
		}
		sofar += c.Delta
		if c.Output != sofar {
			t.Errorf("update %d: output %q, want the deltas so far %q", i, c.Output, sofar)
		}
		deltas = append(deltas, c.Delta)
	}
	if sofar != "one\ntwo\nthree\n" {
		t.Errorf("the deltas %q make %q, want the command's whole output", deltas, sofar)
	}
	// Each line came in a piece of its own: the first before "two" was
	// printed, the second before "three".
	if strings.Contains(deltas[0], "two") || !strings.Contains(deltas[0], "one") {
		t.Errorf("first piece %q, want \"one\" alone", deltas[0])
	}
	if len(deltas) < 3 {
		t.Errorf("pieces %q, want one per line printed", deltas)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(shown) != len(updates) || shown[len(shown)-1] != "ONE\nTWO\nTHREE\n" {
		t.Errorf("the operator was shown %q, want the extension's upper-cased output after each piece", shown)
	}
}
