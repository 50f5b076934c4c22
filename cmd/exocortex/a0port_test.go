package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

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

// TestPortedModelHooksReachTheModel serves Agent Zero files at the model-side
// hook points: chat_model_call_before (call_data's messages),
// chat_model_call_after (a changed call_data["response"] is what the agent acts
// on), response_stream and reasoning_stream (the text so far), process_chain_end
// (the chain's final answer). What each saw reaches the model through a prompt
// file reading their agent data, in the next iteration and the next task.
func TestPortedModelHooksReachTheModel(t *testing.T) {
	home := t.TempDir()
	if _, err := a0port.Port(t.Context(), "testdata/a0newhooks", filepath.Join(home, "plugins", "a0-new"), "a0-new"); err != nil {
		t.Fatal(err)
	}
	h := portedHost(t, home)
	srv, a := agentOn(t, h, nil, []scripted.Reply{
		{Content: `<think>pondering A0-THINK</think>{"thoughts":["go on"],"headline":"thinking","tool_name":"unknown_tool_xyz","tool_args":{}}`},
		{Content: `{"thoughts":["done"],"headline":"answering","tool_name":"response","tool_args":{"text":"the DRAFT answer"}}`},
		{Content: answer},
	})
	res, err := a.Monologue(context.Background(), "first task")
	st, _ := json.Marshal(h.Status())
	if err != nil {
		t.Fatalf("monologue: %v\nplugins: %s", err, st)
	}
	if res.Response != "the FINAL answer" {
		t.Errorf("final answer %q, want the response chat_model_call_after rewrote (the FINAL answer)\nplugins: %s", res.Response, st)
	}
	if _, err := a.Monologue(context.Background(), "second task"); err != nil {
		t.Fatalf("monologue 2: %v", err)
	}
	reqs := srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3", len(reqs))
	}
	// The newest block is the last one: a prompts_after block that changed is
	// sent again, while the copies sent earlier stay pinned in the history.
	seen := func(i int) string {
		msgs := reqs[i].Messages
		for k := len(msgs) - 1; k >= 0; k-- {
			if j := strings.LastIndex(msgs[k].Content, "A0-SEEN"); j >= 0 {
				return strings.SplitN(msgs[k].Content[j:], "\n", 2)[0]
			}
		}
		return ""
	}
	tests := []struct {
		req  int
		want []string
	}{
		{0, []string{"A0-SEEN sent=None streamed=None thought=None last=None"}},
		{1, []string{"thought=pondering A0-THINK", "last=None"}},
		{2, []string{"last=the FINAL answer"}},
	}
	for _, tt := range tests {
		got := seen(tt.req)
		for _, w := range tt.want {
			if !strings.Contains(got, w) {
				t.Errorf("request %d: %q lacks %q\nplugins: %s", tt.req+1, got, w, st)
			}
		}
	}
	if got := seen(1); strings.Contains(got, "sent=None") || strings.Contains(got, "streamed=None") || strings.Contains(got, "streamed=0 ") {
		t.Errorf("request 2: %q: chat_model_call_before or response_stream did not run", got)
	}
}

// TestHotReloadPicksUpAnEditedPortedFile edits a ported Agent Zero file (four
// directories down in the plugin: a0/extensions/python/<hook>/) while a session
// runs on a watching host: the plugin is reloaded, and the next message's model
// request carries what the edited file adds, not what the old one did.
func TestHotReloadPicksUpAnEditedPortedFile(t *testing.T) {
	home := t.TempDir()
	dir := filepath.Join(home, "plugins", "a0-second")
	if _, err := a0port.Port(t.Context(), "testdata/a0second", dir, "a0-second"); err != nil {
		t.Fatal(err)
	}
	h := portedHost(t, home)
	if err := h.Watch(t.Context()); err != nil {
		t.Fatal(err)
	}
	srv, a := agentOn(t, h, nil, []scripted.Reply{{Content: answer}, {Content: answer}})
	ctx := context.Background()
	if _, err := a.Monologue(ctx, "first"); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "a0/extensions/python/message_loop_prompts_after/_55_count_too.py")
	code, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	edited := strings.Replace(string(code), "A0-MARKER-second call", "A0-MARKER-edited call", 1)
	if err := os.WriteFile(file, []byte(edited), 0o644); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for staged := false; !staged; {
		for _, st := range h.Status() {
			staged = staged || (st.Name == "a0-second" && (st.Pending != "" || st.Reloads > 0))
		}
		if time.Now().After(deadline) {
			t.Fatalf("the edit was not picked up in 30s: %+v", h.Status())
		}
		time.Sleep(50 * time.Millisecond)
	}
	if _, err := a.Monologue(ctx, "second"); err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	tests := []struct {
		req       int
		want, not string
	}{
		{0, "A0-MARKER-second call 1", "A0-MARKER-edited"},
		{1, "A0-MARKER-edited call", "A0-MARKER-second"},
	}
	for _, tt := range tests {
		// The block of this request is the newest one: the blocks sent before
		// stay pinned, as sent, in the history (prefix repeat).
		var newest string
		for _, m := range reqs[tt.req].Messages {
			if strings.Contains(m.Content, "A0-MARKER") {
				newest = m.Content
			}
		}
		if !strings.Contains(newest, tt.want) || strings.Contains(newest, tt.not) {
			t.Errorf("request %d: want %q and not %q in the newest marker block:\n%s", tt.req+1, tt.want, tt.not, newest)
		}
	}
}

// TestPortedToolHooks serves Agent Zero files at the tool-side hook points
// (testdata/a0tools, one file per hook, written the Agent Zero way with its
// data and ctx keyword arguments) through the real host, the built-in
// text_editor and a plugin whose tool reports partial output and an embedding
// model change. What each file changes in its keyword argument takes effect
// where Exocortex's response has a field for it: the content written
// (text_editor_write_before; an exception refuses the write), the replacement
// (text_editor_patch_before), what the model sees of a read
// (text_editor_read_after), the output shown (tool_output_update), the result
// stored (hist_add_tool_result); the files that only note something
// (text_editor_write_after, text_editor_patch_after, embedding_model_changed,
// reasoning_stream_end) reach the model through a prompt file reading their
// agent data. The change without a field (read_after's warnings) is named by
// the porting report.
func TestPortedToolHooks(t *testing.T) {
	home, project := t.TempDir(), t.TempDir()
	plugins := filepath.Join(home, "plugins")
	r, err := a0port.Port(t.Context(), "testdata/a0tools", filepath.Join(plugins, "a0-tools"), "a0-tools")
	if err != nil {
		t.Fatal(err)
	}
	bin := sdktest.BuildPlugin(t, "./testdata/a0toolhost")
	if err := os.MkdirAll(filepath.Join(plugins, "a0toolhost"), 0o755); err != nil {
		t.Fatal(err)
	}
	pj, _ := json.Marshal(map[string][]string{"command": {bin}})
	if err := os.WriteFile(filepath.Join(plugins, "a0toolhost", "plugin.json"), pj, 0o644); err != nil {
		t.Fatal(err)
	}
	h := portedHostIn(t, home, project)
	var mu sync.Mutex
	var shown []string
	call := func(tool string, args map[string]any) scripted.Reply {
		b, _ := json.Marshal(map[string]any{"thoughts": []string{"go on"}, "headline": "working", "tool_name": tool, "tool_args": args})
		return scripted.Reply{Content: string(b)}
	}
	think := call("text_editor", map[string]any{"action": "write", "path": "a.txt", "content": "hello"})
	think.Content = "<think>A0-THINK about writing</think>" + think.Content
	srv, a := agentOn(t, h, func(e loop.Event) {
		if e.Type == loop.EventToolOutput {
			mu.Lock()
			shown = append(shown, e.Text)
			mu.Unlock()
		}
	}, []scripted.Reply{
		think,
		call("text_editor", map[string]any{"action": "write", "path": "forbidden.txt", "content": "x"}),
		call("text_editor", map[string]any{"action": "patch", "path": "a.txt", "old_text": "hello", "new_text": "bye"}),
		call("text_editor", map[string]any{"action": "read", "path": "a.txt"}),
		call("stream", map[string]any{}),
		{Content: answer},
	})
	h.Services().SetEmbeddingSink(a.ReportEmbeddingChange)
	_, err = a.Monologue(context.Background(), "edit a.txt")
	st, _ := json.Marshal(h.Status())
	if err != nil {
		t.Fatalf("monologue: %v\nplugins: %s", err, st)
	}
	reqs := srv.Requests()
	if len(reqs) != 6 {
		t.Fatalf("%d model requests, want 6\nplugins: %s", len(reqs), st)
	}
	// newest returns the last message of request i holding marker, from the
	// marker on (prompt blocks sent before stay pinned in the history).
	newest := func(i int, marker string) string {
		msgs := reqs[i].Messages
		for k := len(msgs) - 1; k >= 0; k-- {
			if j := strings.LastIndex(msgs[k].Content, marker); j >= 0 {
				return msgs[k].Content[j:]
			}
		}
		return ""
	}
	line := func(s string) string { return strings.SplitN(s, "\n", 2)[0] }
	tests := []struct {
		name      string
		got, want string
	}{
		{"reasoning_stream_end counted the first call", line(newest(1, "A0-TOOLS")), "ends=1"},
		{"text_editor_write_after noted the write", line(newest(1, "A0-TOOLS")), "write=a.txt:2"},
		{"text_editor_write_before refused by exception", newest(2, "A0-REFUSED"), "A0-REFUSED: forbidden.txt is off limits"},
		{"text_editor_patch_after noted the patch", line(newest(3, "A0-TOOLS")), "patch=a.txt by replace"},
		{"text_editor_read_after changed what the model sees", newest(4, "A0-READ-SEEN"), "bye A0-PATCHED"},
		{"hist_add_tool_result changed the stored result", newest(5, "streamed one"), "[A0-STORED]"},
		{"embedding_model_changed ran", line(newest(5, "A0-TOOLS")), "reembed=pending"},
		{"reasoning_stream_end fires every call", line(newest(5, "A0-TOOLS")), "ends=5"},
	}
	for _, tt := range tests {
		if !strings.Contains(tt.got, tt.want) {
			t.Errorf("%s: %q lacks %q\nplugins: %s", tt.name, tt.got, tt.want, st)
		}
	}
	disk, err := os.ReadFile(filepath.Join(project, "a.txt"))
	if err != nil || string(disk) != "bye A0-PATCHED\nA0-STAMPED" {
		t.Errorf("a.txt holds %q (%v), want the stamped write with the signed patch", disk, err)
	}
	if _, err := os.Stat(filepath.Join(project, "forbidden.txt")); err == nil {
		t.Error("forbidden.txt was written although the Agent Zero file refused it")
	}
	mu.Lock()
	all := strings.Join(shown, "|")
	mu.Unlock()
	if !strings.Contains(all, "one A0-MASKED three") || strings.Contains(all, "secret") {
		t.Errorf("shown output %q, want it masked by tool_output_update", all)
	}
	var notes []string
	for _, f := range r.Files {
		if strings.HasSuffix(f.Source, "_10_mark_read.py") {
			notes = f.Notes
			if f.Status != "needs a hand" {
				t.Errorf("the file changing data[\"warnings\"] is %q, want needs a hand", f.Status)
			}
		}
	}
	if n := strings.Join(notes, "\n"); !strings.Contains(n, `line 11: changes data["warnings"] at text_editor_read_after, which no field`) ||
		!strings.Contains(n, `line 10: data["content"] becomes what the model sees of the read`) {
		t.Errorf("the report's notes on _10_mark_read.py do not say what becomes of its changes:\n%s", n)
	}
}

// TestPortLeavesTheRestPorted ports a tree where most files cannot be served
// (one does not parse, one has no numeric prefix, one is at a web-UI hook with
// no hook point, one imports an Agent Zero internal the layer has no module
// for) beside one sound file: the port reports each with why, and the ported
// plugin loads and serves the sound file, whose note reaches the model, while
// the broken ones never do.
func TestPortLeavesTheRestPorted(t *testing.T) {
	home := t.TempDir()
	r, err := a0port.Port(t.Context(), "testdata/a0broken", filepath.Join(home, "plugins", "a0-broken"), "a0-broken")
	if err != nil {
		t.Fatalf("one file that cannot be ported failed the whole port: %v", err)
	}
	const base = "usr/extensions/python/"
	tests := []struct {
		file, status, note string
	}{
		{base + "message_loop_prompts_after/_20_good_note.py", "adapted by the layer", "become prompt blocks"},
		{base + "message_loop_prompts_after/_30_syntax_error.py", "not ported", "line 6: does not parse as Python"},
		// Agent Zero loads any *.py of a hook folder, in name order.
		{base + "message_loop_prompts_after/no_prefix.py", "adapted by the layer", "no numeric prefix: Agent Zero runs it in name order (after _20_good_note.py)"},
		{base + "webui_ws_event/_10_ui_only.py", "not ported", "no hook point yet: webui_ws_event"},
		{base + "monologue_start/_10_internal.py", "needs a hand", "imports helpers.memory"},
	}
	for _, tt := range tests {
		t.Run(filepath.Base(tt.file), func(t *testing.T) {
			for _, f := range r.Files {
				if f.Source == tt.file {
					if f.Status != tt.status || !strings.Contains(strings.Join(f.Notes, "\n"), tt.note) {
						t.Errorf("status %q notes %v, want %q with %q", f.Status, f.Notes, tt.status, tt.note)
					}
					return
				}
			}
			t.Errorf("%s is not in the report", tt.file)
		})
	}
	srv, a, st := portedAgent(t, home, nil, []scripted.Reply{{Content: answer}})
	if _, err := a.Monologue(context.Background(), "hello"); err != nil {
		t.Fatalf("monologue: %v\nplugins: %s", err, st)
	}
	var sent strings.Builder
	for _, m := range srv.Requests()[0].Messages {
		sent.WriteString(m.Content + "\n")
	}
	for _, want := range []string{"A0-MARKER-good survives", "A0-MARKER-noprefix"} {
		if !strings.Contains(sent.String(), want) {
			t.Errorf("the note of a sound file (%s) did not reach the model:\n%s\nplugins: %s", want, sent.String(), st)
		}
	}
	for _, never := range []string{"A0-MARKER-syntax"} {
		if strings.Contains(sent.String(), never) {
			t.Errorf("the model was sent %s, from a file that was not ported", never)
		}
	}
}

// TestEverySeamReportedByPortAndLint ports the two fixture trees that hold a
// file for each seam of the seed's table the issue names (1, 2, 3, 4, 7, 8, 9,
// 10) and checks that the porting report and `exocortex lint` over the ported
// plugins both report each one at its file and line, with its fix.
func TestEverySeamReportedByPortAndLint(t *testing.T) {
	home := t.TempDir()
	plugins := filepath.Join(home, "plugins")
	trees := []struct{ src, name string }{{a0Tree, "a0-fixture"}, {"../../scaffold/a0port/testdata/seams", "a0-seams"}}
	var findings []a0port.Finding
	for _, tr := range trees {
		r, err := a0port.Port(t.Context(), tr.src, filepath.Join(plugins, tr.name), tr.name)
		if err != nil {
			t.Fatal(err)
		}
		findings = append(findings, r.Findings...)
	}
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	out, errOut, code := runExo(t, exe, t.TempDir(), home, "lint", "--dir", plugins, "--json")
	if code != 1 {
		t.Fatalf("lint exit %d, want 1\n%s\n%s", code, out, errOut)
	}
	rep := report(t, out)
	tests := []struct {
		seam   int
		plugin string
		file   string // in the Agent Zero tree
		line   int
		lint   string // the file lint names: in the plugin (a0/...) or the tree
		fix    string
	}{
		{1, "a0-seams", "extensions/python/tool_execute_after/_10_core_text.py", 6, "a0/extensions/python/tool_execute_after/_10_core_text.py", "typed signal"},
		{2, "a0-seams", "extensions/python/monologue_start/_10_gate_a.py", 6, "a0/extensions/python/monologue_start/_10_gate_a.py", "one file own the key"},
		{3, "a0-seams", "extensions/python/message_loop_start/_10_gate_b.py", 8, "a0/extensions/python/message_loop_start/_10_gate_b.py", `getattr(self.agent, "number", None)`},
		{4, "a0-fixture", "usr/extensions/python/message_loop_prompts_after/_50_second.py", 1, "a0/extensions/python/message_loop_prompts_after/_50_second.py", "own numeric prefix"},
		{7, "a0-fixture", "usr/extensions/python/message_loop_end/_10_late_inject.py", 9, "a0/extensions/python/message_loop_end/_10_late_inject.py", "message_loop_prompts_after"},
		{8, "a0-fixture", "usr/extensions/monologue_end/_10_no_python.py", 0, "testdata/a0tree/usr/extensions/monologue_end/_10_no_python.py", "extensions/python/monologue_end/"},
		{9, "a0-seams", "extensions/python/message_loop_start/_10_gate_b.py", 7, "a0/extensions/python/message_loop_start/_10_gate_b.py", "once_per_session"},
		{10, "a0-fixture", "usr/extensions/python/monologue_start/_10_old_import.py", 1, "a0/extensions/python/monologue_start/_10_old_import.py", "from helpers.extension import"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("seam %d", tt.seam), func(t *testing.T) {
			var fix string
			for _, f := range findings {
				if f.Seam == tt.seam && f.File == tt.file && f.Line == tt.line && strings.Contains(f.Fix, tt.fix) {
					fix = f.Fix
				}
			}
			if fix == "" {
				t.Fatalf("the port does not report seam %d at %s:%d with a fix naming %q: %v", tt.seam, tt.file, tt.line, tt.fix, findings)
			}
			loc := tt.lint
			if tt.line > 0 {
				loc = fmt.Sprintf("%s:%d", tt.lint, tt.line)
			}
			for _, l := range rep.Findings {
				if (l.Code == "EXO131" || l.Code == "EXO132") && l.Plugin == tt.plugin && strings.HasSuffix(l.File, loc) && l.Fix == fix &&
					strings.Contains(l.Message, fmt.Sprint("seam ", tt.seam)) == (tt.seam != 8) {
					return
				}
			}
			t.Errorf("lint does not report seam %d at %s with the fix %q:\n%s", tt.seam, loc, fix, out)
		})
	}
}
