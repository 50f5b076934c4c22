package main

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/exocortex/exocortex/core/discover"
	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/core/llm"
	"github.com/exocortex/exocortex/core/llm/scripted"
	"github.com/exocortex/exocortex/core/loop"
	"github.com/exocortex/exocortex/prompts"
	"github.com/exocortex/exocortex/scaffold/a0port"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// a0Utility is an Agent Zero-style tree of our own whose file at
// message_loop_prompts_after calls self.agent.call_utility_model (with a stream
// callback, and in the background) and shows the answers to the main model,
// with a file at util_model_call_before and one at util_model_call_after.
const a0Utility = "testdata/a0utility"

// TestPortedFileCallsTheUtilityModel ports the tree and runs it in a real
// host, through Ollama's protocol and the OpenAI-compatible one: the port
// calls the call adapted and declares uses_utility_model; each call reaches
// the utility model with the util_model_call_before file's mark, its answer
// comes back with the util_model_call_after file's tag, the callback gets the
// streamed pieces, and the answers reach the main model in the file's prompt
// block; the utility hooks' events come before the asking file's.
func TestPortedFileCallsTheUtilityModel(t *testing.T) {
	home := t.TempDir()
	plugin := filepath.Join(home, "plugins", "a0-util")
	r, err := a0port.Port(t.Context(), a0Utility, plugin, "a0-util")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range r.Files {
		if f.Status == "needs a hand" {
			t.Errorf("%s needs a hand, want adapted: %v", f.Source, f.Notes)
		}
		if strings.HasSuffix(f.Source, "_50_ask_utility.py") && !strings.Contains(strings.Join(f.Notes, "\n"), "call_utility_model -> the host's utility model") {
			t.Errorf("%s: notes %v, want call_utility_model adapted", f.Source, f.Notes)
		}
	}
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	tools := discover.Candidate{Name: "agent-tools", Path: exe + " plugin serve agent-tools",
		Command: []string{exe, "plugin", "serve", "agent-tools"}, WorkDir: filepath.Dir(exe),
		Dir: discover.Dir{Path: "(built in)", Source: discover.Builtin}}
	for _, provider := range llm.Providers() {
		t.Run(provider, func(t *testing.T) {
			var plog sdktest.Buffer
			h, err := host.New(context.Background(), host.Options{
				Dirs:      []discover.Dir{{Path: filepath.Join(home, "plugins"), Source: discover.User}},
				Builtins:  []discover.Candidate{tools},
				PluginEnv: pluginEnv(t, home, t.TempDir()),
				PluginLog: &plog,
			})
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			i := slices.IndexFunc(h.Plugins(), func(p *host.Plugin) bool { return p.Name() == "a0-util" })
			if i < 0 || !h.Plugins()[i].Manifest().GetUsesUtilityModel() {
				t.Fatalf("the ported plugin is not loaded, or does not declare uses_utility_model (index %d)\nplugin log:\n%s", i, plog.String())
			}
			srv, err := scripted.Start(provider, scripted.Script{Replies: []scripted.Reply{
				{Content: "blue", ChunkSize: 2, ExpectContains: "A0MARK A0-ASK what colour is the sky"},
				{Content: "yes", ExpectContains: "A0MARK A0-QUIET"},
				{Content: `{"thoughts":["done"],"headline":"answering","tool_name":"response","tool_args":{"text":"done"}}`,
					ExpectContains: "A0-UTIL answer=blue+tagged pieces=2 joined=blue quiet=yes+tagged"},
			}})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			c, err := llm.Open(llm.Config{Provider: provider, BaseURL: srv.URL(), MaxRetryDelay: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			var events []string
			a, err := loop.New(loop.Options{Host: h, LLM: c, Prompts: prompts.NewLoader(), Model: srv.Model(), MaxIterations: 3,
				Observer: func(e loop.Event) {
					if e.Type == loop.EventHook && (strings.HasPrefix(e.Hook, "util_model") || e.Extension == "a0_ask_utility") {
						events = append(events, e.Hook+" "+e.Extension+" "+e.Error)
					}
				}})
			if err != nil {
				t.Fatal(err)
			}
			h.Services().SetUtilityRunner(a.CallUtility)
			res, err := a.Monologue(context.Background(), "what colour is the sky?")
			if err != nil || res.Response != "done" {
				t.Fatalf("result %+v, %v; script failures %v\nplugin log:\n%s", res, err, srv.Failures(), plog.String())
			}
			if f := srv.Failures(); len(f) > 0 || srv.Remaining() != 0 {
				t.Fatalf("script: failures %v, %d replies left\nplugin log:\n%s", f, srv.Remaining(), plog.String())
			}
			want := []string{
				"util_model_call_before a0_mark ", "util_model_call_after a0_tag ",
				"util_model_call_before a0_mark ", "util_model_call_after a0_tag ",
				"message_loop_prompts_after a0_ask_utility ",
			}
			if !slices.Equal(events, want) {
				t.Errorf("hook events %q, want %q", events, want)
			}
		})
	}
}

// agentWithUtility is agentOn with a utility model of its own (utility_model
// on a second scripted server, as a configured utility model on another
// server is) plugged into the host for the plugins' calls; usrv records what
// the plugins asked it.
func agentWithUtility(t *testing.T, h *host.Host, observer func(loop.Event), utility, replies []scripted.Reply) (srv, usrv *scripted.Server, a *loop.Agent) {
	t.Helper()
	var err error
	if srv, err = scripted.NewServer(scripted.Script{Replies: replies}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	if usrv, err = scripted.NewServer(scripted.Script{Replies: utility}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { usrv.Close() })
	c, err := llm.New(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	uc, err := llm.New(usrv.URL())
	if err != nil {
		t.Fatal(err)
	}
	a, err = loop.New(loop.Options{Host: h, LLM: c, Prompts: prompts.NewLoader(), Model: srv.Model(), Observer: observer,
		UtilityModel: usrv.Model(), UtilityLLM: uc})
	if err != nil {
		t.Fatal(err)
	}
	h.Services().SetUtilityRunner(a.CallUtility)
	return srv, usrv, a
}
