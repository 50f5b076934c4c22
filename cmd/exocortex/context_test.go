package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/exocortex/exocortex/core/discover"
	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/core/llm"
	"github.com/exocortex/exocortex/core/llm/scripted"
	"github.com/exocortex/exocortex/core/loop"
	"github.com/exocortex/exocortex/extensions/recall"
	"github.com/exocortex/exocortex/memory"
	"github.com/exocortex/exocortex/prompts"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// The turn-1 fact of the long session, and the turn-60 question about it.
const (
	longFact     = "Remember this for later: the staging database password hint is blue-falcon-42."
	longQuestion = "What was the staging database password hint I gave you at the start?"
	longTurns    = 60
)

// longSessionScript is the model's side of the long session: turn 1 notes the
// fact; turns 2 to 59 each read a large part of the log and answer; turn 60
// must see the fact in its prompt (expect_contains on the last user-side
// message, where the recall block goes) and answers with it.
func longSessionScript() scripted.Script { return longSessionScriptOf(longTurns) }

// longSessionScriptOf is longSessionScript with turns user turns.
func longSessionScriptOf(turns int) scripted.Script {
	reply := func(tool, args string) scripted.Reply {
		return scripted.Reply{Content: fmt.Sprintf(`{"thoughts":["working"],"headline":"%s","tool_name":%q,"tool_args":%s}`, tool, tool, args)}
	}
	s := scripted.Script{BytesPerToken: 3.5, ContextLength: 32768}
	s.Replies = append(s.Replies, reply("response", `{"text":"Noted."}`))
	for i := 2; i < turns; i++ {
		s.Replies = append(s.Replies,
			reply("read_log", fmt.Sprintf(`{"part":%d}`, i)),
			reply("response", fmt.Sprintf(`{"text":"Part %d read; the slowest request was req-%d-7."}`, i, i)))
	}
	last := reply("response", `{"text":"The hint was blue-falcon-42."}`)
	last.ExpectContains = "blue-falcon-42"
	s.Replies = append(s.Replies, last)
	return s
}

// startLongSession starts the host (the built-in agent-tools and memory-tools
// plugins, served by the exocortex binary, and the biglog test plugin) and the
// agent on the scripted model with a window of numCtx.
func startLongSession(tb testing.TB, numCtx int) (*loop.Agent, *host.Host, *scripted.Server, string, *[]loop.Event) {
	return startSession(tb, longSessionScript(), loop.Options{NumCtx: numCtx}, nil, "agent-tools", "memory-tools")
}

// startSession starts the named built-in plugins and biglog (env added to the
// plugins' environment), and an agent with opts on the scripted model.
func startSession(tb testing.TB, script scripted.Script, opts loop.Options, env []string, names ...string) (*loop.Agent, *host.Host, *scripted.Server, string, *[]loop.Event) {
	tb.Helper()
	exe := sdktest.BuildPlugin(tb, "github.com/exocortex/exocortex/cmd/exocortex")
	home := tb.TempDir()
	plugins := filepath.Join(home, "plugins")
	if err := os.MkdirAll(plugins, 0o755); err != nil {
		tb.Fatal(err)
	}
	if err := os.Rename(sdktest.BuildPlugin(tb, "./testdata/biglog"), filepath.Join(plugins, "biglog")); err != nil {
		tb.Fatal(err)
	}
	var builtins []discover.Candidate
	for _, name := range names {
		builtins = append(builtins, builtinCandidate(exe, name))
	}
	h, err := host.New(context.Background(), host.Options{
		Dirs: []discover.Dir{{Path: plugins, Source: discover.User}}, Builtins: builtins,
		PluginEnv: pluginEnv(tb, home, tb.TempDir(), env...),
		Memory:    homeMemory(home, "auto", slog.New(slog.DiscardHandler)),
	})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(h.Close)
	srv, err := scripted.NewServer(script)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { srv.Close() })
	c, err := llm.New(srv.URL())
	if err != nil {
		tb.Fatal(err)
	}
	var events []loop.Event
	opts.Host, opts.LLM, opts.Prompts, opts.Model = h, c, prompts.NewLoader(), srv.Model()
	opts.Observer = func(e loop.Event) { events = append(events, e) }
	a, err := loop.New(opts)
	if err != nil {
		tb.Fatal(err)
	}
	return a, h, srv, home, &events
}

// TestLongSession is issue 14's check: 60 user turns with large tool outputs
// in a 4096-token window. The scripted server's log proves no request exceeded
// the window by the model's count; the turn-1 fact is in long-term memory with
// its provenance and reaches the prompt of turn 60 when asked about; the
// summary is in the ACP context object.
func TestLongSession(t *testing.T) {
	if testing.Short() {
		t.Skip("a 60-turn session")
	}
	a, h, srv, home, events := startLongSession(t, 4096)
	ctx := context.Background()
	for i := 1; i <= longTurns; i++ {
		msg := fmt.Sprintf("Read part %d of the service log and tell me the slowest request.", i)
		switch i {
		case 1:
			msg = longFact
		case longTurns:
			msg = longQuestion
		}
		res, err := a.Monologue(ctx, msg)
		var stop *loop.StopError
		if err != nil && !errors.As(err, &stop) {
			t.Fatalf("turn %d: %v", i, err)
		}
		if err != nil {
			t.Fatalf("turn %d stopped: %v (%+v)", i, err, res)
		}
	}
	if f := srv.Failures(); len(f) > 0 {
		t.Fatalf("the script saw unexpected requests: %v", f)
	}

	// 1. No request exceeded the window, by the model's own count.
	maxFill := 0.0
	for i, l := range srv.Log() {
		if l.NumCtx != 4096 || l.Overflow() {
			t.Errorf("request %d: %d tokens for a window of %d", i+1, l.PromptTokens, l.NumCtx)
		}
		maxFill = max(maxFill, float64(l.PromptTokens)/float64(l.NumCtx))
	}
	t.Logf("%d requests, the fullest at %.0f%% of the window", len(srv.Log()), 100*maxFill)

	// 2. The fact reached turn 60's prompt, in the recall block right after
	// the question (where it stays, pinned, for the turn's later requests).
	reqs := srv.Requests()
	last := reqs[len(reqs)-1].Messages
	q := slices.IndexFunc(last, func(m api.Message) bool { return m.Role == "user" && m.Content == longQuestion })
	if q < 0 || q+1 >= len(last) {
		t.Fatalf("turn 60's request has no question followed by a block: %d messages", len(last))
	}
	if blk := last[q+1].Content; !strings.Contains(blk, "MEMORY RECALL") || !strings.Contains(blk, "blue-falcon-42") {
		t.Errorf("the message after turn 60's question has no recalled fact:\n%s", blk)
	}
	for i, m := range last {
		if i != q+1 && m.Role != "system" && strings.Contains(m.Content, "blue-falcon-42") {
			t.Errorf("the turn-1 message is still verbatim in turn 60: the test proves nothing")
		}
	}

	// 3. The summary is in the ACP context object.
	rep := a.Context()
	if rep.Summary == "" || rep.Compressions == 0 {
		t.Fatalf("no compression: %+v", rep)
	}
	if got := a.LastContext().GetInteractionHistory().GetPreviousExchangeSummary(); got != rep.Summary {
		t.Errorf("previous_exchange_summary = %q, want the summary %q", got, rep.Summary)
	}
	compressions := 0
	for _, e := range *events {
		if e.Type == loop.EventCompression {
			compressions++
		}
	}
	if compressions != rep.Compressions || rep.PendingArchive != 0 {
		t.Errorf("%d compression events, report %+v (nothing may wait for the archive)", compressions, rep)
	}

	// 4. The turn-1 fact is in long-term memory with its provenance.
	first := a.History()[0]
	h.Close() // the memory-tools plugin releases the store
	st, err := memory.Open(ctx, filepath.Join(home, "memory"), memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var rec *memory.Record
	recs, err := st.Records(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.ID == recall.FragmentID(first.GetId()) {
			rec = r
		}
	}
	switch {
	case rec == nil:
		t.Fatalf("the turn-1 message %s is not in long-term memory", first.GetId())
	case rec.Area != memory.AreaFragments || !strings.Contains(rec.Text, "blue-falcon-42"):
		t.Errorf("record %+v: want the fact in fragments", rec)
	case rec.Provenance.Session != a.SessionID() || rec.Provenance.Message != first.GetId() || fmt.Sprint(rec.Metadata["position"]) != "0":
		t.Errorf("provenance %+v, metadata %v: want session %s, message %s, position 0", rec.Provenance, rec.Metadata, a.SessionID(), first.GetId())
	}
}
