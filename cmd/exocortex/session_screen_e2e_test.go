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
