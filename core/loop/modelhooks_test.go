package loop

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/exocortex/exocortex/core/discover"
	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/core/llm"
	"github.com/exocortex/exocortex/core/llm/scripted"
	"github.com/exocortex/exocortex/prompts"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// hookCall is one line of testdata/modelhooks' log.
type hookCall map[string]any

func (c hookCall) str(k string) string { s, _ := c[k].(string); return s }

// modelHooks starts an agent with testdata/modelhooks (a real plugin process)
// and the fixture plugins given, against script; opts are completed here.
func modelHooks(t *testing.T, script scripted.Script, opts Options, fixtures ...plugin) (*Agent, *recorder, func() []hookCall) {
	t.Helper()
	bin := sdktest.BuildPlugin(t, "./testdata/modelhooks")
	dir := t.TempDir()
	installPlugin(t, dir, "modelhooks", bin)
	for _, p := range fixtures {
		writePlugin(t, dir, p)
	}
	logPath := filepath.Join(t.TempDir(), "calls.jsonl")
	h, err := host.New(t.Context(), host.Options{Dirs: []discover.Dir{{Path: dir, Source: discover.User}},
		PluginEnv: []string{"MODELHOOKS_LOG=" + logPath, "MODELHOOKS_RESPONSE_TOOL=1"}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	script.Source = t.Name()
	srv, err := scripted.NewServer(script)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	c, _ := llm.New(srv.URL())
	rec := &recorder{}
	opts.Host, opts.LLM, opts.Prompts, opts.Model, opts.Observer = h, c, prompts.NewLoader(), srv.Model(), rec.observe
	a, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	read := func() []hookCall {
		f, err := os.Open(logPath)
		if errors.Is(err, os.ErrNotExist) {
			return nil
		} else if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		var out []hookCall
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var c hookCall
			if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
				t.Fatalf("log line %q: %v", sc.Text(), err)
			}
			out = append(out, c)
		}
		return out
	}
	return a, rec, read
}

func hooksOf(calls []hookCall) []string {
	var out []string
	for _, c := range calls {
		if n := len(out); n > 0 && out[n-1] == c.str("hook") {
			continue // a stream hook's repeated calls count once
		}
		out = append(out, c.str("hook"))
	}
	return out
}

func callsAt(calls []hookCall, hook string) []hookCall {
	var out []hookCall
	for _, c := range calls {
		if c.str("hook") == hook {
			out = append(out, c)
		}
	}
	return out
}

// TestModelHooksAroundTheChatCall: a reply with reasoning fires, in order,
// chat_model_call_before (with the prompt as sent), the reasoning hooks (its
// pieces and the reasoning so far), the response hooks (the reply so far),
// chat_model_call_after (the whole reply and reasoning; its rewrite is what is
// parsed and kept), reasoning_stream_end, and at the end process_chain_end.
func TestModelHooksAroundTheChatCall(t *testing.T) {
	thinking := "First I weigh the question.\nThen I settle on an answer that is short."
	a, rec, calls := modelHooks(t, scripted.Script{Replies: []scripted.Reply{{
		Thinking: thinking,
		Content:  `{"thoughts":["done"],"headline":"answer","tool_name":"response","tool_args":{"text":"the answer is REPLACE_ME"}}`,
	}}}, Options{MaxIterations: 3})
	res, err := a.Monologue(context.Background(), "What is it?")
	if err != nil {
		t.Fatal(err)
	}
	if res.Response != "the answer is replaced" {
		t.Errorf("final response %q: chat_model_call_after's rewrite did not reach the parsed reply", res.Response)
	}
	got := calls()
	wantOrder := "chat_model_call_before reasoning_stream_chunk reasoning_stream response_stream chat_model_call_after reasoning_stream_end process_chain_end"
	// The reasoning may go out in one piece or several (each a chunk, then the
	// reasoning so far); the reply's pieces all follow it.
	order := strings.Join(hooksOf(got), " ")
	const pair = "reasoning_stream_chunk reasoning_stream"
	for strings.Contains(order, pair+" "+pair) {
		order = strings.ReplaceAll(order, pair+" "+pair, pair)
	}
	if order != wantOrder {
		t.Fatalf("hooks fired %q, want %q", order, wantOrder)
	}

	before := callsAt(got, "chat_model_call_before")[0]
	if before.str("model") != a.opts.Model || before["prompt"].(float64) < 2 || !strings.Contains(before.str("last"), "What is it?") {
		t.Errorf("chat_model_call_before got %v: want the model and the prompt as sent, ending with the user's message", before)
	}
	// The reasoning pieces add up to the reasoning, and each carries the
	// reasoning so far.
	var pieces strings.Builder
	for _, c := range callsAt(got, "reasoning_stream_chunk") {
		pieces.WriteString(c.str("delta"))
		if c.str("text") != pieces.String() {
			t.Errorf("reasoning_stream_chunk text %q, want the reasoning so far %q", c.str("text"), pieces.String())
		}
	}
	if pieces.String() != thinking {
		t.Errorf("reasoning pieces %q, want %q", pieces.String(), thinking)
	}
	rs := callsAt(got, "reasoning_stream")
	if rs[len(rs)-1].str("text") != thinking {
		t.Errorf("last reasoning_stream text %q, want the whole reasoning", rs[len(rs)-1].str("text"))
	}
	resp := callsAt(got, "response_stream")
	if last := resp[len(resp)-1].str("text"); !strings.Contains(last, "REPLACE_ME") || !strings.HasPrefix(last, `{"thoughts"`) {
		t.Errorf("last response_stream text %q, want the raw reply so far", last)
	}
	after := callsAt(got, "chat_model_call_after")[0]
	if !strings.Contains(after.str("response"), "REPLACE_ME") || after.str("reasoning") != thinking {
		t.Errorf("chat_model_call_after got %v, want the raw reply and the reasoning", after)
	}
	if end := callsAt(got, "reasoning_stream_end")[0]; end.str("text") != thinking {
		t.Errorf("reasoning_stream_end text %q, want the reasoning", end.str("text"))
	}
	if chain := callsAt(got, "process_chain_end")[0]; chain.str("final_response") != "the answer is replaced" || chain["iterations"].(float64) != 1 {
		t.Errorf("process_chain_end got %v", chain)
	}
	// The history keeps the rewritten reply, never the reasoning.
	for _, m := range a.History() {
		if strings.Contains(m.GetContent(), "REPLACE_ME") || strings.Contains(m.GetContent(), "weigh the question") {
			t.Errorf("history keeps %q", m.GetContent())
		}
	}
	// The reasoning displays reach the observer: stars per piece, then the end's.
	var displays []string
	for _, e := range rec.events {
		if e.Type == EventReasoningDisplay {
			displays = append(displays, e.Text)
		}
	}
	if len(displays) < 2 || strings.Trim(displays[0], "*") != "" || displays[len(displays)-1] != fmt.Sprintf("thought %d bytes", len(thinking)) {
		t.Errorf("reasoning displays %q, want stars then the end's", displays)
	}
}

// TestMessageLoopException: an iteration whose model call fails fires
// message_loop_exception (stage "model") before message_loop_end; an error the
// extension handles lets the monologue go on, one it does not ends it, and
// then process_chain_end does not fire.
func TestMessageLoopException(t *testing.T) {
	done := scripted.Reply{Content: `{"thoughts":["ok"],"headline":"ok","tool_name":"response","tool_args":{"text":"recovered"}}`}
	tests := []struct {
		name      string
		errText   string
		wantErr   bool
		wantChain bool
	}{
		{"handled", "handle-me: the server hiccuped", false, true},
		{"not handled", "the server is down", true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, _, calls := modelHooks(t, scripted.Script{Replies: []scripted.Reply{{Error: tt.errText, Status: 400}, done}},
				Options{MaxIterations: 3},
				plugin{name: "ender", exts: []*exocortexv1.ExtensionSpec{ext("end_watch", exocortexv1.Hook_HOOK_MESSAGE_LOOP_END, 10)}})
			res, err := a.Monologue(context.Background(), "go")
			if (err != nil) != tt.wantErr {
				t.Fatalf("monologue error %v, want error: %v", err, tt.wantErr)
			}
			got := calls()
			ex := callsAt(got, "message_loop_exception")
			if len(ex) != 1 || ex[0].str("stage") != "model" || ex[0]["iteration"].(float64) != 1 || !strings.Contains(ex[0].str("error"), tt.errText) {
				t.Fatalf("message_loop_exception calls %v, want one for iteration 1's model error", ex)
			}
			if !tt.wantErr && res.Response != "recovered" {
				t.Errorf("response %q, want the next iteration's", res.Response)
			}
			if n := len(callsAt(got, "process_chain_end")); (n == 1) != tt.wantChain {
				t.Errorf("process_chain_end fired %d times, want fired: %v", n, tt.wantChain)
			}
			// chat_model_call_after does not fire for the failed call.
			if n := len(callsAt(got, "chat_model_call_after")); n != map[bool]int{true: 0, false: 1}[tt.wantErr] {
				t.Errorf("chat_model_call_after fired %d times", n)
			}
		})
	}
}

// TestUtilModelHooks: history compression's utility call fires
// util_model_call_before (its rewrite of the message reaches the utility
// model) and util_model_call_after (its rewrite is the summary kept), never
// touching the main model's calls.
func TestUtilModelHooks(t *testing.T) {
	const turns = 6
	var replies, summaries []scripted.Reply
	for i := 1; i <= turns; i++ {
		replies = append(replies, bigEcho(i, 1200))
		summaries = append(summaries, scripted.Reply{Content: "- the operator sent notes", ExpectContains: "UTILMARK"})
	}
	util, err := scripted.NewServer(scripted.Script{Model: "utility", Replies: summaries})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { util.Close() })
	uc, _ := llm.New(util.URL())
	a, rec, calls := modelHooks(t, scripted.Script{Replies: replies},
		Options{MaxIterations: 1, NumCtx: 2048, UtilityModel: "utility", UtilityLLM: uc, CompressTimeout: 30 * time.Second},
		plugin{name: "tools", tools: []string{"echo"}})
	runTurns(t, a, turns, 400)
	var cs []*Compression
	for _, e := range rec.events {
		if e.Type == EventCompression {
			cs = append(cs, e.Compression)
		}
	}
	if len(cs) == 0 {
		t.Fatal("no compression; the test needs one")
	}
	for i, c := range cs {
		if c.Method != "utility" || !strings.HasPrefix(c.Added, "- hooked: the operator sent notes") {
			t.Errorf("compression %d: method %q (fallback %q), part added %.80q; want util_model_call_after's rewrite", i+1, c.Method, c.Fallback, c.Added)
		}
	}
	got := calls()
	bs, as := callsAt(got, "util_model_call_before"), callsAt(got, "util_model_call_after")
	if len(bs) != len(cs) || len(as) != len(cs) {
		t.Fatalf("%d util_model_call_before and %d util_model_call_after for %d compressions", len(bs), len(as), len(cs))
	}
	if bs[0].str("purpose") != "compress_history" || bs[0].str("model") != "utility" || !strings.Contains(bs[0].str("system"), "Summarise") {
		t.Errorf("util_model_call_before got %v", bs[0])
	}
	if as[0]["message_marked"] != true || as[0].str("response") != "- the operator sent notes" {
		t.Errorf("util_model_call_after got %v, want the rewritten message and the raw answer", as[0])
	}
	// The main model never saw the utility call's marker.
	for _, c := range callsAt(got, "chat_model_call_before") {
		if strings.Contains(c.str("last"), "UTILMARK") {
			t.Errorf("the main call's prompt carries the utility call's change: %.80q", c.str("last"))
		}
	}
}
