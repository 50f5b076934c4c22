package tui

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/core/llm"
	"github.com/exocortex/exocortex/core/llm/scripted"
)

func TestLineMode(t *testing.T) {
	e := newEnv(t)
	eng, _ := e.engine(t, "plain",
		reply("Running it", "shell_echo", `{"cmd":"rm -rf /"}`),
		answer("first answer"),
		scripted.Reply{Content: answerJSON("second answer"), ExpectContains: "two\nlines"})
	in := strings.NewReader("first\n\n/approval\ntwo\\\nlines\n!echo hi\n/nosuch\n/quit\nnever sent\n")
	var out, errOut bytes.Buffer
	if err := LineMode(context.Background(), eng, in, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	o, e2 := out.String(), errOut.String()
	for _, want := range []string{"first answer\n", "approval mode default", "second answer\n"} {
		if !strings.Contains(o, want) {
			t.Errorf("stdout lacks %q:\n%s", want, o)
		}
	}
	for _, want := range []string{
		"session plain", "answered", "plugins: gate (running)",
		"⚙ shell_echo", "approval deny: the approval failed: nobody can be asked here", // a held call
		"! not run", "--approval yolo", "unknown command /nosuch",
	} {
		if !strings.Contains(e2, want) {
			t.Errorf("stderr lacks %q:\n%s", want, e2)
		}
	}
	if strings.Contains(o+e2, "never sent") {
		t.Error("a line after /quit was read")
	}
}

// TestLineModeReasoning: --plain shows a reasoning reply's thinking folded
// to one stderr line, through either protocol, and answers without it.
func TestLineModeReasoning(t *testing.T) {
	for _, provider := range llm.Providers() {
		t.Run(provider, func(t *testing.T) {
			e := newEnv(t)
			eng, _ := e.engineOn(t, provider, "plain",
				scripted.Reply{Content: "<think>SECRETPLAN be brief</think>" + answerJSON("first answer"), ChunkSize: 3},
				scripted.Reply{Thinking: "SECRETPLAN again", Content: answerJSON("second answer")})
			var out, errOut bytes.Buffer
			if err := LineMode(context.Background(), eng, strings.NewReader("one\ntwo\n"), &out, &errOut); err != nil {
				t.Fatal(err)
			}
			o, e2 := out.String(), errOut.String()
			if o != "first answer\n"+answerSeparator+"\n\nsecond answer\n" {
				t.Errorf("stdout %q", o)
			}
			if strings.Count(e2, "✻ Thought for") != 2 || !strings.Contains(e2, "· 16 chars") || strings.Contains(o+e2, "SECRETPLAN") {
				t.Errorf("stderr:\n%s", e2)
			}
		})
	}
}
