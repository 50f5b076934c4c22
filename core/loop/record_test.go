package loop

import (
	"context"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/core/llm/scripted"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// TestRecordRequests checks what a replay is built from: a request event
// per iteration (the base system prompt, every message by part), and a
// tool_executed event with what the tool returned; and that a
// ToolExecutor's result stands in for the tool.
func TestRecordRequests(t *testing.T) {
	var asked []string
	a, rec, _ := newAgent(t, setup{
		plugins: []plugin{{name: "tools", tools: []string{"probe", "response"}}},
		replies: []scripted.Reply{toolReply("probe"), {Content: `{"thoughts":["t"],"tool_name":"response","tool_args":{"text":"done"}}`}},
		opts: Options{RecordRequests: true, ToolExecutor: func(_ context.Context, iteration int, tc *exocortexv1.ToolCall) (*exocortexv1.ToolResult, error) {
			asked = append(asked, tc.GetName())
			if tc.GetName() == "probe" {
				return &exocortexv1.ToolResult{Content: "RECORDED-RESULT"}, nil
			}
			return &exocortexv1.ToolResult{Content: "done", BreakLoop: true}, nil
		}},
	})
	if _, err := a.Monologue(context.Background(), "hello there"); err != nil {
		t.Fatal(err)
	}
	var reqs []*Request
	var executed []Event
	for _, e := range rec.events {
		switch e.Type {
		case EventRequest:
			reqs = append(reqs, e.Request)
		case EventToolExecuted:
			executed = append(executed, e)
		}
	}
	if len(reqs) != 2 {
		t.Fatalf("%d request events, want one per iteration (2)", len(reqs))
	}
	for i, r := range reqs {
		if r.System == "" || r.Messages[0].Part != PartSystem || !strings.HasPrefix(r.Messages[0].Content, r.System) {
			t.Errorf("request %d: the system message does not start with the base system prompt", i+1)
		}
		var hist []string
		for _, m := range r.Messages {
			if m.Part == PartHistory {
				hist = append(hist, m.Content)
			}
		}
		if len(hist) == 0 || hist[0] != "hello there" {
			t.Errorf("request %d: history %q, want the user message first", i+1, hist)
		}
	}
	if last := reqs[1].Messages[len(reqs[1].Messages)-1].Content; !strings.Contains(last, "RECORDED-RESULT") {
		t.Errorf("the second request ends with %q, want the executor's result (the tool was not run)", last)
	}
	if len(executed) != 2 || executed[0].Tool != "probe" || executed[0].Result != "RECORDED-RESULT" || !executed[1].BreakLoop {
		t.Errorf("tool_executed events %+v", executed)
	}
	if strings.Join(asked, ",") != "probe,response" {
		t.Errorf("the executor was asked for %v", asked)
	}
}
