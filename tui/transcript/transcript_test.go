package transcript

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/signals"
)

var update = flag.Bool("update", false, "rewrite golden files")

var now = time.Date(2026, 11, 21, 15, 30, 0, 0, time.UTC)

func msg(id, role, sender, content string) *exocortexv1.Message {
	return &exocortexv1.Message{Id: id, Role: role, SenderId: sender, Content: content, TimestampUtc: now.Format(time.RFC3339Nano)}
}

// history is a session as the loop saves it: a turn with a tool call, a
// correction and an answer; a cohesion run; a second turn.
func history() []*exocortexv1.Message {
	misformat := msg("m5", "user", "exocortex", "Your reply was not valid JSON.")
	misformat.Signal = signals.Misformat
	tool := msg("m3", "tool", "hello_time", "It is 15:30.\nHave a nice day.")
	tool.ToolName = "hello_time"
	return []*exocortexv1.Message{
		msg("m1", "user", "operator", "What time is it?"),
		msg("m2", "assistant", "agent0", `{"thoughts":["I should ask the clock."],"headline":"Asking the clock","tool_name":"hello_time","tool_args":{"name":"op"}}`),
		tool,
		msg("m4", "assistant", "agent0", `I think it is 15:30`),
		misformat,
		msg("m6", "assistant", "agent0", `{"thoughts":["Answer now."],"headline":"Answering","tool_name":"response","tool_args":{"text":"It is **15:30**."}}`),
		msg("c1", "user", "operator", "Reflect on your current state."),
		msg("c2", "assistant", "agent0", `{"tool_name":"response","tool_args":{"text":"The operator cares about time."}}`),
		NewThought("c1", "The operator cares about time.", now),
		msg("m7", "user", "operator", "Thanks!"),
		msg("m8", "assistant", "agent0", "{\"tool_name\": \"response\", \"tool_args\": {\"text\": \"You're welcome.\"}}"),
	}
}

func TestBuild(t *testing.T) {
	turns, thoughts := Build(history())
	if len(turns) != 2 {
		t.Fatalf("%d turns, want 2 (the cohesion exchange is hidden): %+v", len(turns), turns)
	}
	first := turns[0]
	if first.Prompt.GetId() != "m1" || first.Answer != "It is **15:30**." {
		t.Fatalf("first turn: prompt %s, answer %q", first.Prompt.GetId(), first.Answer)
	}
	if len(first.Steps) != 4 {
		t.Fatalf("first turn has %d steps, want 4: %+v", len(first.Steps), first.Steps)
	}
	call := first.Steps[0]
	if call.Tool != "hello_time" || call.Args != `{"name":"op"}` || !call.HasResult || !strings.Contains(call.Result, "15:30") || call.Headline != "Asking the clock" {
		t.Errorf("tool step = %+v", call)
	}
	if first.Steps[1].Note != "I think it is 15:30" || first.Steps[1].Tool != "" {
		t.Errorf("prose reply step = %+v", first.Steps[1])
	}
	if first.Steps[2].Signal != signals.Misformat {
		t.Errorf("correction step = %+v", first.Steps[2])
	}
	if first.Steps[3].Headline != "Answering" {
		t.Errorf("answer step = %+v", first.Steps[3])
	}
	if turns[1].Answer != "You're welcome." {
		t.Errorf("second answer = %q", turns[1].Answer)
	}
	if len(thoughts) != 1 || thoughts[0].Text != "The operator cares about time." {
		t.Errorf("thoughts = %+v", thoughts)
	}
}

func TestMarkdownGolden(t *testing.T) {
	got := Markdown("demo", history(), now)
	golden := filepath.Join("testdata", "demo.md")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (run go test ./tui/transcript -update)", err)
	}
	if got != string(want) {
		t.Errorf("Markdown differs from %s (run with -update after checking):\n%s", golden, got)
	}
	if strings.Contains(got, "Reflect on your current state") {
		t.Error("the cohesion instruction shows as a turn")
	}
}

func TestJSONRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	in := history()
	if err := WriteJSON(&buf, "demo", "id-1", in, now); err != nil {
		t.Fatal(err)
	}
	ex, out, err := ReadJSON(&buf, "demo.json")
	if err != nil {
		t.Fatal(err)
	}
	if ex.Name != "demo" || ex.Format != Format || len(out) != len(in) {
		t.Fatalf("export %+v with %d messages", ex, len(out))
	}
	for i := range in {
		if !proto.Equal(in[i], out[i]) {
			t.Fatalf("message %d changed: %v != %v", i, in[i], out[i])
		}
	}
	if !IsThought(out[8]) {
		t.Error("the thought lost its metadata")
	}
}

func TestReadJSONErrors(t *testing.T) {
	tests := map[string]string{
		"plain text": "not JSON",
		`{"format":"x.v9","messages":[{"role":"user"}]}`: `format "x.v9"`,
		`[]`:                                "holds no messages",
		`[{"role":"user"},{"content":"x"}]`: "message 2 has no role",
		`[{"role":"user"},{"rolez":1}]`:     "message 2",
	}
	for in, want := range tests {
		_, _, err := ReadJSON(strings.NewReader(in), "f.json")
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "f.json") {
			t.Errorf("ReadJSON(%q) = %v, want an error naming f.json and %q", in, err, want)
		}
	}
	_, msgs, err := ReadJSON(strings.NewReader(`[{"role":"user","content":"hi"}]`), "bare.json")
	if err != nil || len(msgs) != 1 || msgs[0].GetId() == "" {
		t.Fatalf("a bare array: %v %v", msgs, err)
	}
}
