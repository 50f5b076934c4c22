package main

import (
	"bufio"
	"encoding/json"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/core/loop"
)

// TestRepeatedPromptBlocksAreReported runs a real plugin that returns the same
// block twice for every request, over two iterations: a plain `run -p` has
// one stderr line naming the plugin, the extension, the block and the hook,
// and --json one notice with code repeated_block.
func TestRepeatedPromptBlocksAreReported(t *testing.T) {
	h := newPluginHome(t, "./testdata/repeater", "repeater", twoIterationScript)
	_, stderr := h.run(t)
	lines := linesWith(stderr, "same prompt block")
	if len(lines) != 1 {
		t.Fatalf("stderr has %d repeated-block lines, want 1 over two requests:\n%s", len(lines), stderr)
	}
	for _, want := range []string{"warning: plugin repeater, extension repeat_notes", `"notes"`, "2 times", "message_loop_prompts_after"} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("the line lacks %q: %s", want, lines[0])
		}
	}

	out, _ := h.run(t, "--json")
	n := 0
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<24)
	for sc.Scan() {
		var e loop.Event
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.Type == loop.EventNotice && e.Code == loop.NoticeRepeatedBlock {
			n++
			if e.Plugin != "repeater" || e.Extension != "repeat_notes" {
				t.Errorf("the notice names %s/%s, want repeater/repeat_notes", e.Plugin, e.Extension)
			}
		}
	}
	if n != 1 {
		t.Errorf("--json has %d repeated_block notices, want 1", n)
	}
}
