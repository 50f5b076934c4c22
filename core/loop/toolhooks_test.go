package loop

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/core/discover"
	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/core/llm"
	"github.com/exocortex/exocortex/core/llm/scripted"
	"github.com/exocortex/exocortex/prompts"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

func toolCallReply(tool string, args map[string]any) scripted.Reply {
	b, _ := json.Marshal(map[string]any{"thoughts": []string{"go"}, "headline": tool, "tool_name": tool, "tool_args": args})
	return scripted.Reply{Content: string(b)}
}

// TestToolHooks runs testdata/toolhooks (a real plugin process with its own
// text_editor and a streaming tool) through a monologue and checks that each
// tool-side hook fires where documented, with the call's data, and that what
// its extension returns takes effect: a changed content lands on disk, a
// refusal keeps the file from being written, a changed replacement is what the
// patch puts in, a changed read is what the model sees, the stored tool result
// is the changed text, the operator sees the masked output, and a reported
// embedding model change reaches embedding_model_changed.
func TestToolHooks(t *testing.T) {
	bin := sdktest.BuildPlugin(t, "./testdata/toolhooks")
	dir := t.TempDir()
	installPlugin(t, dir, "toolhooks", bin)
	files := t.TempDir()
	logPath := filepath.Join(t.TempDir(), "calls.jsonl")
	h, err := host.New(t.Context(), host.Options{Dirs: []discover.Dir{{Path: dir, Source: discover.User}},
		PluginEnv: []string{"TOOLHOOKS_LOG=" + logPath, "TOOLHOOKS_DIR=" + files}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	srv, err := scripted.NewServer(scripted.Script{Source: t.Name(), Replies: []scripted.Reply{
		toolCallReply("text_editor", map[string]any{"action": "write", "path": "a.txt", "content": "hello"}),
		toolCallReply("text_editor", map[string]any{"action": "create", "path": "forbidden.txt", "content": "x"}),
		toolCallReply("text_editor", map[string]any{"action": "patch", "path": "a.txt", "old_text": "HELLO", "new_text": "bye"}),
		toolCallReply("text_editor", map[string]any{"action": "read", "path": "a.txt", "line_from": 1, "line_to": "1"}),
		toolCallReply("stream", map[string]any{}),
		toolCallReply("response", map[string]any{"text": "done"}),
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	c, _ := llm.New(srv.URL())
	rec := &recorder{}
	a, err := New(Options{Host: h, LLM: c, Prompts: prompts.NewLoader(), Model: srv.Model(), Observer: rec.observe, MaxIterations: 8, FullToolDocs: true})
	if err != nil {
		t.Fatal(err)
	}
	h.Services().SetEmbeddingSink(a.ReportEmbeddingChange)
	res, err := a.Monologue(context.Background(), "Edit the file.")
	if err != nil {
		for _, m := range a.History() {
			t.Logf("%s: %.200s", m.GetRole(), m.GetContent())
		}
		t.Fatal(err)
	}
	if res.Response != "done" {
		t.Fatalf("response %q", res.Response)
	}

	// What the extensions changed took effect.
	if b, err := os.ReadFile(filepath.Join(files, "a.txt")); err != nil || string(b) != "BYE" {
		t.Errorf("a.txt holds %q (%v), want BYE: write_before's upper-cased content, then patch_before's upper-cased replacement", b, err)
	}
	if _, err := os.Stat(filepath.Join(files, "forbidden.txt")); !os.IsNotExist(err) {
		t.Errorf("forbidden.txt was written although write_before refused it (%v)", err)
	}
	var tools []string
	for _, m := range a.History() {
		if m.GetRole() == "tool" {
			tools = append(tools, m.GetContent())
		}
	}
	want := []string{
		"wrote a.txt [stored]",
		"Error: refused by tool_watch at text_editor_write_before: forbidden.txt is off limits [stored]",
		"patched a.txt [stored]",
		"[seen] 1: BYE [stored]",
		"streamed; shown: one  | one ******  | one ****** three [stored]",
	}
	if strings.Join(tools, "\n") != strings.Join(want, "\n") {
		t.Errorf("tool results in the history:\n%s\nwant:\n%s", strings.Join(tools, "\n"), strings.Join(want, "\n"))
	}
	var shown []string
	for _, e := range rec.events {
		if e.Type == EventToolOutput {
			shown = append(shown, e.Tool+": "+e.Text)
		}
	}
	if got := strings.Join(shown, "|"); got != "stream: one |stream: one ****** |stream: one ****** three" {
		t.Errorf("the operator was shown %q", got)
	}

	// Where each fired, with what data.
	f, err := os.Open(logPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var order []string
	var calls []map[string]any
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var c map[string]any
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			t.Fatal(err)
		}
		calls = append(calls, c)
		order = append(order, c["hook"].(string))
	}
	wantOrder := []string{
		"text_editor_write_before", "text_editor_write_after", "tool_execute_after", "hist_add_tool_result",
		"text_editor_write_before", "tool_execute_after", "hist_add_tool_result",
		"text_editor_patch_before", "text_editor_patch_after", "tool_execute_after", "hist_add_tool_result",
		"text_editor_read_after", "tool_execute_after", "hist_add_tool_result",
		"tool_output_update", "tool_output_update", "tool_output_update", "embedding_model_changed", "tool_execute_after", "hist_add_tool_result",
		"tool_execute_after",
	}
	if strings.Join(order, " ") != strings.Join(wantOrder, " ") {
		t.Fatalf("hooks fired:\n%s\nwant:\n%s", strings.Join(order, " "), strings.Join(wantOrder, " "))
	}
	checks := []struct {
		i     int
		key   string
		value any
	}{
		{0, "content", "hello"}, {0, "path", "a.txt"},
		{1, "content", "HELLO"}, {1, "result", "wrote a.txt"},
		{3, "text", "wrote a.txt"},
		{7, "old_text", "HELLO"}, {7, "new_text", "bye"},
		{8, "new_text", "BYE"}, {8, "result", "patched a.txt"},
		{11, "content", "1: BYE"}, {11, "line_from", float64(1)}, {11, "line_to", float64(1)},
		{14, "delta", "one "}, {15, "output", "one secret "}, {16, "delta", "three"},
		{17, "old", "glove-100d"}, {17, "new", "nomic-embed-text"}, {17, "old_dims", float64(100)}, {17, "new_dims", float64(768)},
	}
	for _, c := range checks {
		if got := calls[c.i][c.key]; got != c.value {
			t.Errorf("call %d (%s): %s = %v, want %v", c.i, order[c.i], c.key, got, c.value)
		}
	}
}
