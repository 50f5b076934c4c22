package tui

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/exocortex/exocortex/core/llm"
	"github.com/exocortex/exocortex/core/llm/scripted"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

func TestLineMode(t *testing.T) {
	e := newEnv(t)
	eng, _ := e.engine(t, "plain",
		reply("Running it", "shell_echo", `{"cmd":"rm -rf /"}`),
		answer("first answer"),
		scripted.Reply{Content: answerJSON("second answer"), ExpectContains: "two\nlines"})
	in := strings.NewReader("first\n\n/approval\ntwo\\\nlines\n!echo hi > hi.txt\n!echo read-only-ran\n/nosuch\n/quit\nnever sent\n")
	var out, errOut bytes.Buffer
	if err := LineMode(context.Background(), eng, in, &out, &errOut); err != nil {
		t.Fatal(err)
	}
	o, e2 := out.String(), errOut.String()
	for _, want := range []string{"first answer\n", "approval mode default", "second answer\n", "read-only-ran"} {
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

// lockedBuf is a buffer LineMode writes while the test reads it.
type lockedBuf struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuf) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuf) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestLineModeHotReload: a plugin installed while line mode waits for input
// is added, with a line on stderr.
func TestLineModeHotReload(t *testing.T) {
	e := newEnv(t)
	eng, _ := e.engine(t, "plainreload")
	in, feed := io.Pipe()
	var out bytes.Buffer
	errOut := &lockedBuf{}
	done := make(chan error, 1)
	go func() { done <- LineMode(context.Background(), eng, in, &out, errOut) }()
	end := time.Now().Add(deadline)
	for !strings.Contains(errOut.String(), "plugins: gate") {
		if time.Now().After(end) {
			t.Fatalf("line mode did not start:\n%s", errOut)
		}
		time.Sleep(20 * time.Millisecond)
	}
	bin := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/tui/testdata/optools")
	if err := os.Rename(bin, filepath.Join(e.plugins, "optools")); err != nil {
		t.Fatal(err)
	}
	for !strings.Contains(errOut.String(), "plugin optools added: version 1.0.0") {
		if time.Now().After(end) {
			t.Fatalf("no line for the added plugin:\n%s", errOut)
		}
		time.Sleep(20 * time.Millisecond)
	}
	feed.Close()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
