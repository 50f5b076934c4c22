package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunReportsHookErrorsOnStderr runs a plain `run -p` (no --json) with a
// plugin whose extensions change their request and read a key they did not
// declare, over two iterations: each refusal gets one stderr line naming the
// plugin, the extension, the hook and what to do, and the answer still
// reaches stdout.
func TestRunReportsHookErrorsOnStderr(t *testing.T) {
	h := newPluginHome(t, "./testdata/misbehave", "misbehave", twoIterationScript)
	_, stderr := h.run(t)
	for _, tc := range []struct {
		extension string
		wants     []string
	}{
		{"misbehave_mutator", []string{"plugin misbehave", "message_loop_end", "changed its request's reply", "MessageLoopEndResponse.intervention", "the call was skipped"}},
		{"misbehave_peeker", []string{"plugin misbehave", "message_loop_end", `state key "failure_tracker"`, "Reads", "the call was skipped"}},
	} {
		lines := linesWith(stderr, "warning: plugin misbehave, extension "+tc.extension)
		if len(lines) != 1 {
			t.Errorf("stderr has %d lines for %s, want 1:\n%s", len(lines), tc.extension, stderr)
			continue
		}
		for _, w := range tc.wants {
			if !strings.Contains(lines[0], w) {
				t.Errorf("the line for %s lacks %q: %s", tc.extension, w, lines[0])
			}
		}
	}
}

// TestRunReportsLateStateWrite: a state change a plugin makes from a goroutine
// after its hook call returned is refused, and a plain `run -p` says so once on
// stderr, naming the plugin, the extension, the hook and the key.
func TestRunReportsLateStateWrite(t *testing.T) {
	h := newPluginHome(t, "./testdata/latewrite", "latewrite", oneReplyScript)
	_, stderr := h.run(t)
	lines := linesWith(stderr, "after its call")
	if len(lines) != 1 {
		t.Fatalf("stderr has %d late-write lines, want 1:\n%s", len(lines), stderr)
	}
	for _, want := range []string{"plugin latewrite", "extension late_writer", `"latewrite_note"`, "monologue_start", "refused", "before the method returns"} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("the late-write line lacks %q: %s", want, lines[0])
		}
	}
	events, err := os.ReadFile(filepath.Join(h.home, "logs", "events.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(events), `"kind":"late_state_write","plugin":"latewrite","extension":"late_writer"`) {
		t.Errorf("events.jsonl has no late_state_write event:\n%s", events)
	}
}
