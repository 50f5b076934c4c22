package loop

import (
	"context"
	"fmt"
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

// TestMonologueThroughEitherProvider runs the same three-iteration monologue
// through Ollama's protocol and the OpenAI-compatible one: a native tool call
// whose arguments stream in pieces, a reply that thinks in a <think> block
// before its JSON, and the response. The tool calls, the answer and the hook
// trace must be the same. The reasoning (a reasoning field with the first
// reply, the <think> block of the second) arrives as reasoning events, and
// neither the parsed reply nor the history holds it.
func TestMonologueThroughEitherProvider(t *testing.T) {
	bin := sdktest.BuildPlugin(t, "./testdata/batchplugin")
	replies := []scripted.Reply{
		{Thinking: "I should call x first.", ChunkSize: 2, ToolCalls: []scripted.ToolCall{{Name: "x", Arguments: []byte(`{"n":1,"note":"streamed in pieces"}`)}}},
		{Content: "<think>\nShould I call {\"tool_name\": \"x\"} again? No, y.\n</think>\n" + `{"thoughts":["y"],"headline":"y","tool_name":"y","tool_args":{"n":2}}`},
		{Content: `{"thoughts":["done"],"headline":"done","tool_name":"response","tool_args":{"text":"done"}}`},
	}
	traces := map[string]string{}
	for _, name := range llm.Providers() {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			installPlugin(t, dir, "batchy", bin)
			h, err := host.New(t.Context(), host.Options{Dirs: []discover.Dir{{Path: dir, Source: discover.User}}})
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			srv, err := scripted.Start(name, scripted.Script{Replies: replies})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			p, err := llm.Open(llm.Config{Provider: name, BaseURL: srv.URL(), MaxRetryDelay: time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			rec := &recorder{}
			a, err := New(Options{Host: h, LLM: p, Prompts: prompts.NewLoader(), Model: srv.Model(), MaxIterations: 5,
				Observer: rec.observe, NativeTools: true})
			if err != nil {
				t.Fatal(err)
			}
			res, err := a.Monologue(context.Background(), "run the tools")
			// batchplugin serves every tool, "response" too, and answers with what it ran.
			if err != nil || res.Response != `response ran with {"text":"done"}` || res.Iterations != 3 {
				t.Fatalf("result %+v, %v", res, err)
			}
			if f := srv.Failures(); len(f) > 0 || srv.Remaining() != 0 {
				t.Fatalf("script: failures %v, %d replies left", f, srv.Remaining())
			}
			var calls []string
			var trace strings.Builder
			for _, e := range rec.events {
				switch e.Type {
				case EventToolCall:
					calls = append(calls, e.Tool+string(e.Args))
				case EventHook:
					fmt.Fprintf(&trace, "%d %s %s %s\n", e.Iteration, e.Hook, e.Extension, e.Error)
				}
				if e.Type == EventToolCall || e.Type == EventSignal || e.Type == EventResponse {
					fmt.Fprintf(&trace, "%d %s %s %s\n", e.Iteration, e.Type, e.Tool, e.Signal)
				}
			}
			reasoning := map[int]string{}
			for _, e := range rec.events {
				switch e.Type {
				case EventReasoning:
					reasoning[e.Iteration] += e.Text
				case EventLLMReply, EventLLMChunk:
					if strings.Contains(e.Text, "think") || strings.Contains(e.Text, "again?") {
						t.Errorf("%s event carries the reasoning: %q", e.Type, e.Text)
					}
				}
			}
			if reasoning[1] != "I should call x first." || reasoning[2] != "\nShould I call {\"tool_name\": \"x\"} again? No, y.\n" || len(reasoning) != 2 {
				t.Errorf("reasoning events %v", reasoning)
			}
			for _, m := range a.history {
				if strings.Contains(m.GetContent(), "first.") || strings.Contains(m.GetContent(), "again?") {
					t.Errorf("the history keeps the reasoning: %s %q", m.GetRole(), m.GetContent())
				}
			}
			want := []string{`x{"n":1,"note":"streamed in pieces"}`, `y{"n":2}`, `response{"text":"done"}`}
			if strings.Join(calls, " ") != strings.Join(want, " ") {
				t.Errorf("tool calls %q, want %q", calls, want)
			}
			if u := p.LastUsage(); u.PromptTokens <= 0 {
				t.Errorf("last usage %+v", u)
			}
			traces[name] = trace.String()
		})
	}
	if o, ai := traces[llm.ProviderOllama], traces[llm.ProviderOpenAI]; o == "" || o != ai {
		t.Errorf("hook traces differ:\nollama:\n%s\nopenai:\n%s", o, ai)
	}
}
