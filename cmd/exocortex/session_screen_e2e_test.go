package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/exocortex/exocortex/sdk/sdktest"
)

// TestInlineStartKeepsTheScreen: lines a command printed before the session
// started (seq 1 60) stay on the screen and in the scrollback, in order,
// above the welcome card.
func TestInlineStartKeepsTheScreen(t *testing.T) {
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	home, work := t.TempDir(), t.TempDir()
	tm := newTmux(t)
	script := writeScript(t, 16, time.Millisecond, map[string]any{"tool_name": "response", "tool_args": map[string]any{"text": "Kept."}})
	dir := t.TempDir()
	pidFile, run := filepath.Join(dir, "pid"), filepath.Join(dir, "run.sh")
	body := "#!/bin/sh\necho $$ > " + pidFile + "\ncd " + work + "\nexport EXOCORTEX_HOME=" + home + "\nseq 1 60\nexec " + exe + ` "$@"` + "\n"
	if err := os.WriteFile(run, []byte(body), 0o755); err != nil {
		t.Fatal(err)
	}
	tm.run("new-session", "-d", "-s", "s", "-x", "100", "-y", "30", "sh "+run+" --model script:"+script)
	tm.track(pidFile)
	tm.waitFor("s", "✓ answered", "memory ")
	tm.typeLine("s", "hello")
	scr := tm.waitFor("s", "Kept.")
	lines := strings.Split(scr, "\n")
	if len(lines) < 60 {
		t.Fatalf("the pane has %d lines:\n%s", len(lines), scr)
	}
	for i := 1; i <= 60; i++ {
		if got := strings.TrimSpace(lines[i-1]); got != fmt.Sprint(i) {
			t.Fatalf("line %d of the scrollback is %q, want %d (the lines printed before the session were written over):\n%s", i, got, i, scr)
		}
	}
	card := strings.Index(scr, "◆ Exocortex")
	if card < strings.Index(scr, "\n60\n") {
		t.Errorf("the welcome card is not below the printed lines:\n%s", scr)
	}
}

// TestCardCountsTheMemoryAfterResume: memories saved by the agent in one
// session are counted on the next session's welcome card exactly as
// `exocortex memory stats` counts them.
func TestCardCountsTheMemoryAfterResume(t *testing.T) {
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	home, work := t.TempDir(), t.TempDir()
	tm := newTmux(t)
	save := func(key, value string) map[string]any {
		return map[string]any{"headline": "Saving", "tool_name": "memory_save", "tool_args": map[string]any{"key": key, "value": value}}
	}
	first := writeScript(t, 32, time.Millisecond,
		save("colour", "The operator's favourite colour is teal."),
		save("editor", "The operator edits with helix."),
		save("shell", "The operator's shell is fish."),
		map[string]any{"tool_name": "response", "tool_args": map[string]any{"text": "SAVED-THREE"}},
	)
	run, pidFile := runner(t, exe, home, work)
	tm.run("new-session", "-d", "-s", "a", "-x", "120", "-y", "40", "sh "+run+" --model script:"+first+" --approval yolo")
	tm.track(pidFile)
	tm.waitFor("a", "✓ answered", "memory ")
	tm.typeLine("a", "remember three things")
	tm.waitFor("a", "SAVED-THREE")
	tm.keys("a", "C-d")
	if status := tm.paneDead("a"); status != 0 {
		t.Fatalf("exit status %d; the pane:\n%s", status, tm.screen("a"))
	}

	stats := exec.Command(exe, "memory", "stats", "--json")
	stats.Env = append(os.Environ(), "EXOCORTEX_HOME="+home)
	out, err := stats.Output()
	if err != nil {
		t.Fatalf("memory stats: %v\n%s", err, out)
	}
	var st struct{ Records int }
	if err := json.Unmarshal(out, &st); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if st.Records < 3 {
		t.Fatalf("memory stats counts %d records after three saves", st.Records)
	}

	os.Remove(pidFile)
	second := writeScript(t, 32, time.Millisecond, map[string]any{"tool_name": "response", "tool_args": map[string]any{"text": "Back."}})
	tm.run("new-session", "-d", "-s", "b", "-x", "120", "-y", "40", "sh "+run+" -c --model script:"+second)
	tm.track(pidFile)
	scr := tm.waitFor("b", "resumed session", "✓ answered", " records · ")
	want := fmt.Sprintf("memory   %d records · ", st.Records)
	if !strings.Contains(scr, want) {
		t.Fatalf("the card does not say %q (memory stats' count):\n%s", want, scr)
	}
}

// e2eMarkdown is a long Markdown answer: headings, lists, code blocks, a
// table and a quote, ending in a marker line.
func e2eMarkdown() string {
	var b strings.Builder
	for i := 1; i <= 6; i++ {
		fmt.Fprintf(&b, "## Section %d\n\nParagraph %d of the answer, long enough to wrap once at a hundred columns of the terminal, so wrapping is compared too.\n\n", i, i)
		b.WriteString("- a point\n- another point with `code`\n\n")
		if i%2 == 0 {
			fmt.Fprintf(&b, "```go\nfunc section%d() {\n\tfmt.Println(%d)\n}\n```\n\n", i, i)
		}
	}
	b.WriteString("| key | value |\n|---|---|\n| a | 1 |\n\n> A closing quote.\n\nENDMARK the last line.")
	return b.String()
}

// paneAnswer is the pane's lines from the answer's headline to its last
// line, trailing spaces dropped.
func paneAnswer(t *testing.T, screen string) []string {
	t.Helper()
	lines := strings.Split(screen, "\n")
	from, to := -1, -1
	for i, l := range lines {
		if from < 0 && strings.Contains(l, "● Writing at length") {
			from = i
		}
		if strings.Contains(l, "ENDMARK") {
			to = i
		}
	}
	if from < 0 || to < from {
		t.Fatalf("no whole answer on the pane:\n%s", screen)
	}
	out := lines[from : to+1]
	for i := range out {
		out[i] = strings.TrimRight(out[i], " ")
	}
	return out
}

// TestLiveAndReplayedAnswerInTmux: a long Markdown answer streamed in small
// chunks leaves the same lines in the terminal as the same answer replayed
// when the session is resumed.
func TestLiveAndReplayedAnswerInTmux(t *testing.T) {
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	home, work := t.TempDir(), t.TempDir()
	tm := newTmux(t)
	script := writeScript(t, 12, 3*time.Millisecond, map[string]any{"headline": "Writing at length", "tool_name": "response", "tool_args": map[string]any{"text": e2eMarkdown()}})
	run, pidFile := runner(t, exe, home, work)
	tm.run("new-session", "-d", "-s", "live", "-x", "100", "-y", "40", "sh "+run+" --model script:"+script)
	tm.track(pidFile)
	tm.waitFor("live", "✓ answered", "memory   empty")
	tm.typeLine("live", "write at length")
	tm.waitFor("live", "ENDMARK", "tok/s")
	time.Sleep(300 * time.Millisecond) // the footer is printed after the answer
	live := paneAnswer(t, tm.screen("live"))
	tm.keys("live", "C-d")
	tm.paneDead("live")

	os.Remove(pidFile)
	tm.run("new-session", "-d", "-s", "again", "-x", "100", "-y", "40", "sh "+run+" -c --model script:"+script)
	tm.track(pidFile)
	tm.waitFor("again", "resumed session", "ENDMARK")
	replayed := paneAnswer(t, tm.screen("again"))
	if strings.Join(live, "\n") != strings.Join(replayed, "\n") {
		for i := 0; i < max(len(live), len(replayed)); i++ {
			var a, b string
			if i < len(live) {
				a = live[i]
			}
			if i < len(replayed) {
				b = replayed[i]
			}
			if a != b {
				t.Fatalf("line %d differs:\nlive:     %q\nreplayed: %q\n--- live ---\n%s\n--- replayed ---\n%s", i+1, a, b, strings.Join(live, "\n"), strings.Join(replayed, "\n"))
			}
		}
	}
	for i := 0; i+1 < len(live); i++ {
		if live[i] == "" && live[i+1] == "" {
			t.Fatalf("two blank lines in a row at line %d of the answer:\n%s", i+1, strings.Join(live, "\n"))
		}
	}
}
