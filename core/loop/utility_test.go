package loop

import (
	"context"
	"os"
	"path/filepath"
	"slices"
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

// TestPluginCallsTheUtilityModel runs a real plugin (testdata/utilplugin) that
// calls the host's utility model at message_loop_prompts_after and puts the
// answer into a prompt block, through Ollama's protocol and the
// OpenAI-compatible one: the utility hooks fire around the call, in order,
// with the asking call's context and the purpose "plugin:utilplugin", and
// change its message and answer; the model's text streams to the plugin; the
// block reaches the main model. The host's refusals (no declaration, a prompt
// over the limit, the deadline) reach the plugin as errors that say what to do.
func TestPluginCallsTheUtilityModel(t *testing.T) {
	bin := sdktest.BuildPlugin(t, "./testdata/utilplugin")
	answer := `{"thoughts":["done"],"headline":"done","tool_name":"response","tool_args":{"text":"done"}}`
	tests := []struct {
		name    string
		env     []string
		limits  host.UtilityLimits
		replies []scripted.Reply
		// block is what the prompt block the main model gets must hold.
		block string
		// hooks are the utility hooks' calls the plugin saw, in order: hook,
		// purpose, and the hook its context names.
		hooks []string
	}{
		{
			name: "answer",
			replies: []scripted.Reply{
				{Content: "banana", ChunkSize: 2, ExpectContains: "UMARK MAIN-ASK name a fruit"},
			},
			block: "utility answer: banana [after] (streamed 3 pieces: banana)",
			hooks: []string{
				"util_model_call_before plugin:utilplugin util_model_call_before",
				"util_model_call_after plugin:utilplugin util_model_call_after",
			},
		},
		{
			name:  "undeclared",
			env:   []string{"UTILPLUGIN_UNDECLARED=1"},
			block: "plugin utilplugin called the utility model, but its manifest does not declare uses_utility_model: declare it",
		},
		{
			name:   "prompt over the limit",
			env:    []string{"UTILPLUGIN_PROMPT_BYTES=2000"},
			limits: host.UtilityLimits{MaxPromptBytes: 1000},
			block:  "the utility-model prompt is 2019 bytes (system 19, message 2000), over the host's limit of 1000",
		},
		{
			name:    "deadline",
			limits:  host.UtilityLimits{Timeout: 700 * time.Millisecond},
			replies: []scripted.Reply{{Content: "slowly", ChunkSize: 1, Delay: time.Second}},
			block:   "no utility-model answer within 700ms (utility_calls.timeout in config.yaml)",
			hooks:   []string{"util_model_call_before plugin:utilplugin util_model_call_before"},
		},
	}
	for _, provider := range llm.Providers() {
		for _, tt := range tests {
			t.Run(provider+"/"+tt.name, func(t *testing.T) {
				dir := t.TempDir()
				installPlugin(t, dir, "utilplugin", bin)
				logPath := filepath.Join(t.TempDir(), "util.log")
				h, err := host.New(t.Context(), host.Options{Dirs: []discover.Dir{{Path: dir, Source: discover.User}},
					PluginEnv: append([]string{"UTILPLUGIN_LOG=" + logPath}, tt.env...), Utility: tt.limits})
				if err != nil {
					t.Fatal(err)
				}
				defer h.Close()
				replies := append(slices.Clone(tt.replies), scripted.Reply{Content: answer, ExpectContains: tt.block})
				srv, err := scripted.Start(provider, scripted.Script{Replies: replies})
				if err != nil {
					t.Fatal(err)
				}
				defer srv.Close()
				p, err := llm.Open(llm.Config{Provider: provider, BaseURL: srv.URL(), MaxRetryDelay: time.Millisecond})
				if err != nil {
					t.Fatal(err)
				}
				rec := &recorder{}
				a, err := New(Options{Host: h, LLM: p, Prompts: prompts.NewLoader(), Model: srv.Model(), MaxIterations: 3, Observer: rec.observe})
				if err != nil {
					t.Fatal(err)
				}
				h.Services().SetUtilityRunner(a.CallUtility)
				res, err := a.Monologue(context.Background(), "name a fruit")
				if err != nil || res.Response != "done" {
					t.Fatalf("result %+v, %v; script failures %v", res, err, srv.Failures())
				}
				if f := srv.Failures(); len(f) > 0 || srv.Remaining() != 0 {
					t.Fatalf("script: failures %v, %d replies left", f, srv.Remaining())
				}
				// The hooks' context is the asking call's: its request id.
				raw, _ := os.ReadFile(logPath)
				var got []string
				ids := map[string]bool{}
				for _, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
					if f := strings.Fields(l); len(f) == 4 {
						got, ids[f[3]] = append(got, strings.Join(f[:3], " ")), true
					}
				}
				if !slices.Equal(got, tt.hooks) || len(got) > 0 && (len(ids) != 1 || ids[""]) {
					t.Errorf("utility hooks called %q, want %q, all with the asking request's id", raw, tt.hooks)
				}
				// The hooks' events come before the asking extension's, which
				// settles when its call (and the utility call in it) is over.
				var order []string
				for _, e := range rec.events {
					if e.Type == EventHook && (strings.HasPrefix(e.Hook, "util_model") || e.Extension == "util_ask") {
						order = append(order, e.Hook+" "+e.Extension)
					}
				}
				want := []string{}
				for _, hk := range tt.hooks {
					want = append(want, strings.Fields(hk)[0]+" util_watch")
				}
				want = append(want, "message_loop_prompts_after util_ask")
				if !slices.Equal(order, want) {
					t.Errorf("hook events %q, want %q", order, want)
				}
			})
		}
	}
}
