package tui

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/exocortex/exocortex/core/llm/scripted"
)

func TestTailSource(t *testing.T) {
	var b strings.Builder
	for i := range 40 {
		b.WriteString("para " + strings.Repeat("x", i) + "\n\n")
	}
	b.WriteString("```go\n")
	for range 30 {
		b.WriteString("code()\n")
	}
	src := b.String()
	tail := tailSource(src, 10)
	if !strings.HasPrefix(tail, "```go\n") {
		t.Fatalf("a cut inside a fence must reopen it; tail starts %q", tail[:20])
	}
	if n := strings.Count(tail, "\n"); n > 25 {
		t.Fatalf("tail has %d lines for 10 wanted", n)
	}
	short := "one\n\ntwo\n"
	if tailSource(short, 10) != short {
		t.Fatal("a short text was cut")
	}
	// Outside a fence the cut is at a paragraph break.
	prose := strings.Repeat("line\n\n", 50)
	if got := tailSource(prose, 5); !strings.HasPrefix(got, "line") {
		t.Fatalf("prose tail starts %q", got[:10])
	}
}

func TestParagraphEndIsIncremental(t *testing.T) {
	text := "a\n\n```\nx\n\ny\n```\n\nb\n\nopen"
	var l liveMarkdown
	// Fed piece by piece, the cut is what a scan of the whole text gives.
	for i := 1; i <= len(text); i++ {
		got := l.scan.end(text[:i])
		var fresh liveMarkdown
		if want := fresh.scan.end(text[:i]); got != want {
			t.Fatalf("at %d: incremental %d, whole %d", i, got, want)
		}
	}
	if got := l.scan.end(text); text[got:] != "open" {
		t.Fatalf("open part %q", text[got:])
	}
}

func TestTrimStyledRight(t *testing.T) {
	for in, want := range map[string]string{
		"abc":                                   "abc",
		"abc   ":                                "abc",
		"\x1b[1mabc\x1b[m\x1b[2m \x1b[m \x1b[m": "\x1b[1mabc\x1b[m",
		"\x1b[1mabc\x1b[m  x":                   "\x1b[1mabc\x1b[m  x",
	} {
		got := trimStyledRight(in)
		if !strings.HasPrefix(got, want) || strings.TrimSuffix(got, "\x1b[m") != strings.TrimSuffix(want, "\x1b[m") {
			t.Errorf("trimStyledRight(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestStreamingRedrawsOnlyWhatChanged streams an answer through the real
// program and renderer and reads what the terminal got: no screen clear,
// and on average far fewer bytes per chunk than one redraw of the live area.
func TestStreamingRedrawsOnlyWhatChanged(t *testing.T) {
	e := newEnv(t)
	text := strings.Repeat("A sentence of the streamed answer, long enough to wrap. ", 40)
	const chunk = 8
	eng, _ := e.engine(t, "fl", scripted.Reply{Content: answerJSON(text), ChunkSize: chunk, Delay: 2 * time.Millisecond})
	u := start(t, eng)
	_, _ = io.ReadAll(u.tm.Output())
	u.submit("stream")
	u.idle()
	u.waitPrinted("long enough to wrap.")
	out, _ := io.ReadAll(u.tm.Output())
	chunks := len(answerJSON(text)) / chunk
	if n := bytes.Count(out, []byte("\x1b[2J")); n > 0 {
		t.Fatalf("the screen was cleared %d times while streaming", n)
	}
	// The whole turn, final answer printed once included, against one full
	// redraw of a 100×30 screen per chunk.
	perChunk := len(out) / chunks
	full := 100 * 30
	t.Logf("%d bytes to the terminal for %d chunks: %d bytes per chunk (a full redraw is about %d)", len(out), chunks, perChunk, full)
	if perChunk >= full/2 {
		t.Fatalf("%d bytes per chunk: the renderer is redrawing most of the screen per chunk", perChunk)
	}
}
