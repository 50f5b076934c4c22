package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/exocortex/exocortex/core/llm/scripted"
	"github.com/exocortex/exocortex/core/loop"
	"github.com/exocortex/exocortex/scaffold/a0port"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

const answer = `{"thoughts":["done"],"headline":"answering","tool_name":"response","tool_args":{"text":"all done"}}`

// TestLintReportsPortedSeamsAndKeys ports the fixture tree, runs a monologue with
// it (so the layer records the keys each file uses), then runs the real
// `exocortex lint --json` over the plugin directory: every seam of the porting
// report is a lint finding at the same file and line with the same fix (the
// ported files under a0/, the files the port left out in the Agent Zero tree),
// and the key named only at run time (EXO133) and the key named but never used
// (EXO134) are reported.
func TestLintReportsPortedSeamsAndKeys(t *testing.T) {
	home := t.TempDir()
	plugins := filepath.Join(home, "plugins")
	r, err := a0port.Port(t.Context(), a0Tree, filepath.Join(plugins, "a0-fixture"), "a0-fixture")
	if err != nil {
		t.Fatal(err)
	}
	_, a, st := portedAgent(t, home, nil, []scripted.Reply{{Content: answer}, {Content: answer}})
	if _, err := a.Monologue(context.Background(), "hello"); err != nil {
		t.Fatalf("monologue: %v\nplugins: %s", err, st)
	}
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	out, errOut, code := runExo(t, exe, t.TempDir(), home, "lint", "--dir", plugins, "--json")
	if code != 1 {
		t.Fatalf("lint exit %d, want 1 (the seams are errors)\n%s\n%s", code, out, errOut)
	}
	rep := report(t, out)
	for _, f := range r.Findings {
		file := f.File
		wantCode := "EXO131"
		if i := strings.Index(file, "extensions/python/"); i >= 0 && f.Seam != a0port.SeamNoHookPoint {
			file = "a0/" + file[i:]
		} else {
			wantCode = "EXO132"
		}
		t.Run(filepath.Base(f.File), func(t *testing.T) {
			for _, l := range rep.Findings {
				loc := l.File
				if i := strings.LastIndex(loc, ":"); i > 0 && f.Line > 0 {
					if loc[i+1:] != itoa(f.Line) {
						continue
					}
					loc = loc[:i]
				}
				if l.Code == wantCode && l.Plugin == "a0-fixture" && strings.HasSuffix(loc, file) && l.Fix == f.Fix {
					return
				}
			}
			t.Errorf("no %s for %s (seam %d, line %d, fix %q) in the lint report:\n%s", wantCode, file, f.Seam, f.Line, f.Fix, out)
		})
	}
	const dyn = "a0/extensions/python/monologue_start/_20_dynamic_key.py"
	tests := []struct{ code, key string }{
		{"EXO133", "a0_fixture_session_topic"},
		{"EXO134", "a0_fixture_far_future"},
	}
	for _, tt := range tests {
		f := find(rep, tt.code, "a0-fixture", tt.key)
		if f == nil || f.File != dyn {
			t.Errorf("no %s for key %s at %s:\n%s", tt.code, tt.key, dyn, out)
		}
	}
	if f := find(rep, "EXO133", "a0-fixture", "a0_fixture_note_calls"); f != nil {
		t.Errorf("a key found statically and used is reported as a difference: %+v", f)
	}
}

func itoa(n int) string {
	const digits = "0123456789"
	if n < 10 {
		return digits[n : n+1]
	}
	return itoa(n/10) + digits[n%10:n%10+1]
}

// TestTwoPortedTreesKeepTheirDataApart loads two ported trees whose files count
// their calls under the same Agent Zero data name: each plugin's key is its own
// (a0_<plugin>_note_calls), so both count 1 then 2, as two Agent Zero
// installations would, instead of one counting the other's calls.
func TestTwoPortedTreesKeepTheirDataApart(t *testing.T) {
	home := t.TempDir()
	plugins := filepath.Join(home, "plugins")
	for _, p := range []struct{ src, name string }{{a0Tree, "a0-fixture"}, {"testdata/a0second", "a0-second"}} {
		if _, err := a0port.Port(t.Context(), p.src, filepath.Join(plugins, p.name), p.name); err != nil {
			t.Fatal(err)
		}
	}
	srv, a, st := portedAgent(t, home, nil, []scripted.Reply{
		{Content: `{"thoughts":["go on"],"headline":"thinking","tool_name":"unknown_tool_xyz","tool_args":{}}`},
		{Content: answer}, {Content: answer}, {Content: answer},
	})
	if _, err := a.Monologue(context.Background(), "count please"); err != nil {
		t.Fatalf("monologue: %v\nplugins: %s", err, st)
	}
	reqs := srv.Requests()
	if len(reqs) < 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	for i, want := range [][]string{
		{"A0-MARKER-alpha from A0, call 1,", "A0-MARKER-second call 1"},
		{"A0-MARKER-alpha from A0, call 2,", "A0-MARKER-second call 2"},
	} {
		var b strings.Builder
		for _, m := range reqs[i].Messages {
			b.WriteString(m.Content + "\n")
		}
		for _, w := range want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("request %d lacks %q (the trees' counts are not apart):\n%s\nplugins: %s", i+1, w, b.String(), st)
			}
		}
	}
}

// TestPortedFilesGetAgentZeroKwargs serves files that take Agent Zero's keyword
// arguments: tool_execute_before's tool_name and tool_args (a changed argument
// changes the call), tool_execute_after's response (a changed message is the
// result), response_stream_chunk's stream_data (a changed chunk is what is shown).
func TestPortedFilesGetAgentZeroKwargs(t *testing.T) {
	home := t.TempDir()
	if _, err := a0port.Port(t.Context(), "testdata/a0kwargs", filepath.Join(home, "plugins", "a0-kwargs"), "a0-kwargs"); err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var shown []string
	_, a, st := portedAgent(t, home, func(e loop.Event) {
		if e.Type == loop.EventDisplay {
			mu.Lock()
			shown = append(shown, e.Text)
			mu.Unlock()
		}
	}, []scripted.Reply{{Content: `{"thoughts":["done"],"headline":"answering","tool_name":"response","tool_args":{"text":"the SECRET answer"}}`}})
	res, err := a.Monologue(context.Background(), "tell me")
	if err != nil {
		t.Fatalf("monologue: %v\nplugins: %s", err, st)
	}
	if !strings.Contains(res.Response, "the SECRET answer [A0-BEFORE saw response]") {
		t.Errorf("final answer %q: tool_args changed at tool_execute_before did not reach the tool\nplugins: %s", res.Response, st)
	}
	if !strings.Contains(res.Response, "[A0-AFTER]") {
		t.Errorf("final answer %q: response.message changed at tool_execute_after is not the result", res.Response)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(shown) == 0 || !strings.Contains(strings.Join(shown, "|"), "A0-MASKED") {
		t.Errorf("displayed %q, want the chunk stream_data was masked to (A0-MASKED)", shown)
	}
	if _, err := os.Stat(filepath.Join(home, "plugins", "a0-kwargs", ".a0compat", "observed.json")); err != nil {
		t.Errorf("the layer recorded no observed keys: %v", err)
	}
}
