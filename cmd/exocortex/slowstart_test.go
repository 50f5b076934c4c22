package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/core/host"
)

// TestSlowPluginStartIsReported: a plugin that takes 1.5 s to start gets one
// stderr line in a plain `run -p` naming it, its time and what to do, and
// `plugins status` shows every plugin's start time, the slow one marked.
func TestSlowPluginStartIsReported(t *testing.T) {
	h := newPluginHome(t, "./testdata/slowstart", "slowstart", oneReplyScript)
	_, stderr := h.run(t)
	lines := linesWith(stderr, "plugin slowstart took")
	if len(lines) != 1 {
		t.Fatalf("stderr has %d slow-start lines for slowstart, want 1:\n%s", len(lines), stderr)
	}
	for _, want := range []string{"warning: plugin slowstart took 1.", "more than 1s", "every run and session waits for it", "in the background"} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("the slow-start line lacks %q: %s", want, lines[0])
		}
	}

	out, _ := h.exo(t, "plugins", "status", "--json")
	var st []host.PluginStatus
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("plugins status --json: %v\n%s", err, out)
	}
	found := false
	for _, p := range st {
		if p.Name == "slowstart" {
			found = true
			if p.StartMS < 1500 {
				t.Errorf("slowstart's start_ms is %d, want at least 1500", p.StartMS)
			}
		}
	}
	if !found {
		t.Errorf("plugins status --json lacks slowstart:\n%s", out)
	}
	text, _ := h.exo(t, "plugins", "status")
	if !strings.Contains(text, "slow: more than 1s") {
		t.Errorf("plugins status does not mark the slow start:\n%s", text)
	}
	if n := strings.Count(text, "  start:"); n < 2 {
		t.Errorf("plugins status shows %d start times, want one per running plugin:\n%s", n, text)
	}
}
