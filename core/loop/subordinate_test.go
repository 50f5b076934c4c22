package loop

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/core/discover"
	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/core/llm"
	"github.com/exocortex/exocortex/core/llm/scripted"
	"github.com/exocortex/exocortex/prompts"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// TestSubordinate runs call-back delegation end to end: a plugin's tool asks the
// host, through go-plugin's broker, to run a child agent, whose answer comes back
// as the tool result.
func TestSubordinate(t *testing.T) {
	dir := t.TempDir()
	bin := sdktest.BuildPlugin(t, "./testdata/delegator")
	if err := os.Rename(bin, filepath.Join(dir, "delegator")); err != nil {
		t.Fatal(err)
	}
	h, err := host.New(context.Background(), host.Options{Dirs: []discover.Dir{{Path: dir, Source: discover.User}}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	srv, err := scripted.NewServer(scripted.Script{Replies: []scripted.Reply{
		{Content: `{"tool_name":"delegate","tool_args":{"task":"count the files"}}`},
		{Content: `{"tool_name":"response","tool_args":{"text":"there are 3 files"}}`, ExpectContains: "count the files"},
		{Content: `{"tool_name":"response","tool_args":{"text":"done"}}`, ExpectContains: "subordinate answered: there are 3 files"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	c, _ := llm.New(srv.URL())
	rec := &recorder{}
	a, err := New(Options{Host: h, LLM: c, Prompts: prompts.NewLoader(), Model: srv.Model(), Observer: rec.observe})
	if err != nil {
		t.Fatal(err)
	}
	h.Services().SetSubordinateRunner(a.RunSubordinate)
	res, err := a.Monologue(context.Background(), "how many files?")
	if err != nil {
		t.Fatal(err)
	}
	if res.Response != "done" {
		t.Fatalf("response = %q", res.Response)
	}
	if f := srv.Failures(); len(f) > 0 {
		t.Fatalf("the model did not see what it should have: %v", f)
	}
	var childEvents int
	for _, e := range rec.events {
		if e.Agent == "subordinate#1" {
			childEvents++
		}
		if e.Type == EventToolResult && e.Tool == "delegate" && !strings.Contains(e.Result, "there are 3 files") {
			b, _ := json.Marshal(e)
			t.Fatalf("delegate result: %s", b)
		}
	}
	if childEvents == 0 {
		t.Fatal("no events were tagged as the subordinate's")
	}
	if len(a.History()) != 4 { // user, reply, tool result, final reply
		t.Fatalf("the child's messages leaked into the parent's history: %d messages", len(a.History()))
	}
}
