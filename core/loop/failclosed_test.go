package loop

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/exocortex/exocortex/core/discover"
	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/core/llm"
	"github.com/exocortex/exocortex/core/llm/scripted"
	"github.com/exocortex/exocortex/prompts"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// TestGuardFailsClosed runs a guard (testdata/guardplugin, a real plugin
// process apart from the one with the tools) that fails in each way a guard
// can, at tool_execute_before and at text_editor_write_before, in front of a
// text_editor write and a shell command: each failure stops the action, the
// model reads which guard failed and why, and the operator gets a notice. The
// same guard declaring fail_open lets the action through.
func TestGuardFailsClosed(t *testing.T) {
	bin := sdktest.BuildPlugin(t, "./testdata/guardplugin")
	cases := []struct {
		mode, hook string
		open       bool
		why        string // in what the model reads
	}{
		{mode: "error", hook: "tool_execute_before", why: "raised an error"},
		{mode: "panic", hook: "tool_execute_before", why: "raised an error"},
		{mode: "crash", hook: "tool_execute_before", why: "crashed"},
		{mode: "hang", hook: "tool_execute_before", why: "did not answer in time"},
		{mode: "error", hook: "text_editor_write_before", why: "raised an error"},
		{mode: "crash", hook: "text_editor_write_before", why: "crashed"},
		{mode: "hang", hook: "text_editor_write_before", why: "did not answer in time"},
		{mode: "error", hook: "tool_execute_before", open: true},
		{mode: "hang", hook: "tool_execute_before", open: true},
		{mode: "crash", hook: "text_editor_write_before", open: true},
	}
	for _, c := range cases {
		name := c.hook + "/" + c.mode
		if c.open {
			name += "/fail_open"
		}
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			installPlugin(t, dir, "guardtools", bin, "tools")
			installPlugin(t, dir, "guard", bin, "guard")
			files := t.TempDir()
			env := []string{"GUARD_DIR=" + files, "GUARD_MODE=" + c.mode, "GUARD_HOOK=" + c.hook}
			if c.open {
				env = append(env, "GUARD_FAIL_OPEN=1")
			}
			h, err := host.New(t.Context(), host.Options{Dirs: []discover.Dir{{Path: dir, Source: discover.User}},
				PluginEnv: env, Timeouts: map[string]time.Duration{"guard": 300 * time.Millisecond}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(h.Close)
			srv, err := scripted.NewServer(scripted.Script{Source: t.Name(), Replies: []scripted.Reply{
				toolCallReply("text_editor", map[string]any{"action": "write", "path": "edited.txt", "content": "x"}),
				toolCallReply("shell", map[string]any{"command": "echo ran > shell.txt"}),
				toolCallReply("response", map[string]any{"text": "done"}),
			}})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { srv.Close() })
			cl, _ := llm.New(srv.URL())
			rec := &recorder{}
			a, err := New(Options{Host: h, LLM: cl, Prompts: prompts.NewLoader(), Model: srv.Model(), Observer: rec.observe, MaxIterations: 5, FullToolDocs: true})
			if err != nil {
				t.Fatal(err)
			}
			if res, err := a.Monologue(t.Context(), "Write the file and run the command."); err != nil || res.Response != "done" {
				t.Fatalf("monologue: %v %+v", err, res)
			}
			_, editErr := os.Stat(filepath.Join(files, "edited.txt"))
			_, shellErr := os.Stat(filepath.Join(files, "shell.txt"))
			edited, shelled := editErr == nil, shellErr == nil
			// The shell command passes text_editor_write_before's guard: it
			// guards writes only.
			wantShell := c.open || c.hook == "text_editor_write_before"
			if edited != c.open {
				t.Errorf("text_editor wrote the file: %v, want %v", edited, c.open)
			}
			if shelled != wantShell {
				t.Errorf("the shell command ran: %v, want %v", shelled, wantShell)
			}
			var told, notices []string
			for _, m := range a.History() {
				if strings.Contains(m.GetContent(), "the guard guard (plugin guard)") {
					told = append(told, m.GetContent())
				}
			}
			for _, e := range rec.events {
				if e.Type == EventNotice && strings.Contains(e.Text, "guards fail closed") {
					notices = append(notices, e.Text)
				}
			}
			want := 0
			if !c.open {
				want = 1
				if c.hook == "tool_execute_before" {
					want = 2
				}
			}
			if len(notices) != want {
				t.Errorf("%d notices for the operator, want %d: %q", len(notices), want, notices)
			}
			if want > 0 && (len(told) == 0 || !strings.Contains(told[0], c.why) || !strings.Contains(told[0], c.hook)) {
				t.Errorf("the model was told %q, want the guard, %q and the hook", told, c.why)
			}
			if c.open && len(told) > 0 {
				t.Errorf("a fail-open guard's failure reached the model as a stop: %q", told)
			}
		})
	}
}
