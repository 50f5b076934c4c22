package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/exocortex/exocortex/core/discover"
	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/core/llm/scripted"
	"github.com/exocortex/exocortex/core/loop"
	"github.com/exocortex/exocortex/lint"
	"github.com/exocortex/exocortex/prompts"
	"github.com/exocortex/exocortex/scaffold/a0port"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// guardFile is an Agent Zero guard at tool_execute_before, written for this
// test, that fails in one way (raise: HandledException, as a rule enforcer
// raises it; crash: the process exits; hang: it never answers) for the two
// tools it guards, and lets the answer through; failOpen adds the class
// attribute that declares it a watcher.
func guardFile(mode string, failOpen bool) string {
	act := map[string]string{
		"raise": `raise HandledException(f"rule 9: {tool_name} is not allowed here")`,
		"crash": `os._exit(3)`,
		"hang":  `await asyncio.sleep(3600)`,
	}[mode]
	decl := ""
	if failOpen {
		decl = "    fail_open = True\n\n"
	}
	return "# Fixture written for Exocortex's tests.\nimport asyncio\nimport os\n\n" +
		"from helpers.extension import Extension\nfrom helpers.errors import HandledException\n\n\n" +
		"class Guard(Extension):\n" + decl +
		"    async def execute(self, tool_name: str = \"\", tool_args: dict = {}, **kwargs):\n" +
		"        if tool_name in (\"text_editor\", \"code_execution\"):\n            " + act + "\n"
}

// TestPortedGuardFailsClosed: a ported Agent Zero guard at
// tool_execute_before that raises, one whose process crashes and one that
// hangs past its deadline each stop a text_editor write and a shell command
// on the real host (the built-in agent-tools, the wiring check of start), and
// the model and the operator are told; the same guard declaring
// `fail_open = True` lets both through, and the report says it declares it.
func TestPortedGuardFailsClosed(t *testing.T) {
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	cases := []struct {
		mode string
		open bool
		why  string // in what the model reads
	}{
		{mode: "raise", why: "rule 9:"},
		{mode: "crash", why: "crashed"},
		// The host's deadline, or the Python SDK's own when it ends the call
		// first (a batch result carries text, not a code, so the host reports
		// the guard as having raised that error).
		{mode: "hang", why: "did not answer in time|deadline exceeded"},
		{mode: "raise", open: true},
		{mode: "crash", open: true},
		{mode: "hang", open: true},
	}
	for _, c := range cases {
		name := c.mode
		if c.open {
			name += "/fail_open"
		}
		t.Run(name, func(t *testing.T) {
			tree := t.TempDir()
			p := filepath.Join(tree, "extensions", "python", "tool_execute_before", "_10_guard.py")
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(p, []byte(guardFile(c.mode, c.open)), 0o644); err != nil {
				t.Fatal(err)
			}
			home, project := t.TempDir(), t.TempDir()
			r, err := a0port.Port(t.Context(), tree, filepath.Join(home, "plugins", "a0-guard"), "a0-guard")
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Files) != 1 || strings.Contains(strings.Join(r.Files[0].Notes, "\n"), "declares fail_open") != c.open {
				t.Errorf("the report's file %+v: want a note that it declares fail_open: %v", r.Files, c.open)
			}
			var plog sdktest.Buffer
			h, err := host.New(context.Background(), host.Options{
				Dirs:        []discover.Dir{{Path: filepath.Join(home, "plugins"), Source: discover.User}},
				Builtins:    []discover.Candidate{builtinCandidate(exe, "agent-tools")},
				PluginEnv:   pluginEnv(t, home, project),
				PluginLog:   &plog,
				WiringCheck: lint.HostCheck(prompts.Embedded()),
				// The hanging guard misses this deadline; the others answer well within it.
				Timeouts: map[string]time.Duration{"a0_guard": 4 * time.Second},
			})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(h.Close)
			var mu sync.Mutex
			var notices, all []string
			observe := func(e loop.Event) {
				mu.Lock()
				defer mu.Unlock()
				all = append(all, e.Type+" "+e.Tool+" "+e.Text+" "+e.Error+" "+e.Result)
				if (e.Type == loop.EventNotice || e.Type == loop.EventSignal) && (strings.Contains(e.Text, "was not run") || strings.Contains(e.Text, "call stopped")) {
					notices = append(notices, e.Text)
				}
			}
			answer := scripted.Reply{Content: `{"thoughts":["d"],"headline":"done","tool_name":"response","tool_args":{"text":"done"}}`, ChunkSize: 8, Delay: 40 * time.Millisecond}
			_, a := agentOn(t, h, observe, []scripted.Reply{
				{Content: `{"thoughts":["w"],"headline":"writing","tool_name":"text_editor","tool_args":{"action":"write","path":"edited.txt","content":"x"}}`},
				{Content: `{"thoughts":["r"],"headline":"running","tool_name":"code_execution","tool_args":{"runtime":"terminal","code":"echo ran > shell.txt"}}`},
				// The answer is guarded too: it meets the crashed plugin while it
				// restarts, and is stopped then; the model answers again, slowly
				// enough for the restart's back-off.
				answer, answer, answer, answer, answer,
			})
			res, err := a.Monologue(context.Background(), "write the file and run the command")
			if err != nil || res.Response != "done" {
				t.Fatalf("monologue: %v %+v\nplugin log:\n%s\nevents %q", err, res, plog.String(), all)
			}
			for _, f := range []string{"edited.txt", "shell.txt"} {
				_, err := os.Stat(filepath.Join(project, f))
				if done := err == nil; done != c.open {
					t.Errorf("%s written: %v, want %v (fail_open %v)", f, done, c.open, c.open)
				}
			}
			var told []string
			for _, m := range a.History() {
				for _, tool := range []string{"text_editor", "code_execution"} {
					if strings.Contains(m.GetContent(), `The call to "`+tool+`" was not run`) && names(m.GetContent(), c.why) {
						told = append(told, m.GetContent())
					}
				}
			}
			want := 2
			if c.open {
				want = 0
			}
			if len(told) != want {
				t.Errorf("the model was told %q, want %d stops naming %q; events %q", told, want, c.why, all)
			}
			mu.Lock()
			defer mu.Unlock()
			// The operator sees each stop as it happens: the signal message the
			// model gets, and for a guard that failed, a notice as well.
			seen := 0
			for _, tool := range []string{"text_editor", "code_execution"} {
				for _, n := range notices {
					if strings.Contains(n, tool) && names(n, c.why) {
						seen++
						break
					}
				}
			}
			if seen != want {
				t.Errorf("the operator was shown %d of the %d stops: %q", seen, want, notices)
			}
		})
	}
}

// names reports whether text names one of the |-separated reasons (any case).
func names(text, reasons string) bool {
	for _, r := range strings.Split(reasons, "|") {
		if strings.Contains(strings.ToLower(text), r) {
			return true
		}
	}
	return false
}
