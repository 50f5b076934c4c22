package loop

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/exocortex/exocortex/core/llm"
	"github.com/exocortex/exocortex/core/llm/scripted"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// bigEcho is a reply calling the fixture tool echo with n bytes of argument
// (the fixture echoes its arguments, so the result is as large).
func bigEcho(turn, n int) scripted.Reply {
	word := fmt.Sprintf("w%d ", turn)
	return scripted.Reply{Content: fmt.Sprintf(`{"thoughts":["turn %d"],"headline":"echo %d","tool_name":"echo","tool_args":{"data":%q}}`,
		turn, turn, strings.Repeat(word, n/len(word)))}
}

// runTurns runs turns monologues of one iteration each (the fixture tools
// never end one), with a user message of userBytes.
func runTurns(t *testing.T, a *Agent, turns, userBytes int) {
	t.Helper()
	for i := 1; i <= turns; i++ {
		runTurn(t, a, i, userBytes)
	}
}

// runTurn runs turn i of runTurns.
func runTurn(t *testing.T, a *Agent, i, userBytes int) {
	t.Helper()
	msg := fmt.Sprintf("Turn %d. ", i) + strings.Repeat(fmt.Sprintf("note%d ", i), userBytes/7)
	_, err := a.Monologue(context.Background(), msg)
	var stop *StopError
	if err != nil && !errors.As(err, &stop) {
		t.Fatalf("turn %d: %v", i, err)
	}
}

// TestWindowNeverExceeded: a session far larger than a small window; by the
// scripted model's own tokenizer (finer than the loop's first guess), no
// request is larger than the window; compressions and clipped messages are
// reported; the summary is in the ACP context.
func TestWindowNeverExceeded(t *testing.T) {
	tests := []struct {
		name          string
		numCtx        int
		bytesPerToken float64
		resultBytes   int
	}{
		{"2048, coarse tokenizer", 2048, 4, 1500},
		{"2048, fine tokenizer", 2048, 3, 1500},
		{"4096, results larger than the history share", 4096, 3.5, 9000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Two iterations a turn: the second shows the first's result.
			const turns = 14
			var replies []scripted.Reply
			for i := 1; i <= 2*turns; i++ {
				replies = append(replies, bigEcho(i, tt.resultBytes))
			}
			a, rec, srv := newAgentScript(t, setup{
				plugins: []plugin{{name: "tools", tools: []string{"echo"},
					exts: []*exocortexv1.ExtensionSpec{ext("watch", exocortexv1.Hook_HOOK_MESSAGE_LOOP_END, 10)}}},
				opts: Options{MaxIterations: 2, NumCtx: tt.numCtx},
			}, scripted.Script{Replies: replies, BytesPerToken: tt.bytesPerToken})
			runTurns(t, a, turns, 600)

			log := srv.Log()
			if len(log) != 2*turns {
				t.Fatalf("%d requests, want %d", len(log), 2*turns)
			}
			for i, l := range log {
				if l.NumCtx != tt.numCtx || l.Overflow() {
					t.Errorf("request %d: %d tokens by the model's count for a window of %d", i+1, l.PromptTokens, l.NumCtx)
				}
			}
			var budgets, compressions, clipped int
			for _, e := range rec.events {
				switch e.Type {
				case EventBudget:
					budgets++
					if e.Budget.Tokens > e.Budget.Limit {
						t.Errorf("budget event over its limit: %+v", e.Budget)
					}
					for _, l := range e.Budget.LeftOut {
						if l.Kind == "message" {
							clipped++
						}
					}
				case EventCompression:
					compressions++
					if e.Compression.Method != "extractive" || e.Compression.Summary == "" || e.Compression.Messages == 0 {
						t.Errorf("compression %+v", e.Compression)
					}
				}
			}
			if budgets != 2*turns || compressions == 0 {
				t.Fatalf("%d budget events, %d compressions; want %d and some", budgets, compressions, 2*turns)
			}
			if tt.resultBytes > 4000 && clipped == 0 {
				t.Errorf("no clipped message reported although results exceed the history share")
			}
			rep := a.Context()
			sum := a.LastContext().GetInteractionHistory().GetPreviousExchangeSummary()
			if rep.Summary == "" || sum != rep.Summary {
				t.Errorf("the ACP context's previous_exchange_summary = %q, want the summary %q", sum, rep.Summary)
			}
			if !strings.Contains(rep.String(), "compressions") || rep.Compressed == 0 || rep.PendingArchive == 0 {
				t.Errorf("context report: %+v (no archiver is loaded, so messages wait)", rep)
			}
			// The last request shows the summary and the newest turn verbatim.
			last := srv.Requests()[2*turns-1].Messages
			if !strings.Contains(last[1].Content, "Summary of the earlier conversation") {
				t.Errorf("the summary is not the second message: %q", last[1].Content)
			}
			if !strings.Contains(last[len(last)-1].Content, "Result of tool echo") {
				t.Errorf("the newest message is not last: %.80q", last[len(last)-1].Content)
			}
		})
	}
}

// TestCompressionFallback: a utility model that never answers; every
// compression completes by its deadline with the extractive summary, and
// says why.
func TestCompressionFallback(t *testing.T) {
	const turns = 8
	var replies, hangs []scripted.Reply
	for i := 1; i <= turns; i++ {
		replies = append(replies, bigEcho(i, 1200))
		hangs = append(hangs, scripted.Reply{Hang: true})
	}
	util, err := scripted.NewServer(scripted.Script{Model: "utility", Replies: hangs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { util.Close() })
	uc, _ := llm.New(util.URL())
	const deadline = 300 * time.Millisecond
	a, rec, srv := newAgentScript(t, setup{
		plugins: []plugin{{name: "tools", tools: []string{"echo"}}},
		opts:    Options{MaxIterations: 1, NumCtx: 2048, UtilityModel: "utility", UtilityLLM: uc, CompressTimeout: deadline},
	}, scripted.Script{Replies: replies})
	runTurns(t, a, turns, 400)

	var cs []*Compression
	for _, e := range rec.events {
		if e.Type == EventCompression {
			cs = append(cs, e.Compression)
		}
	}
	if len(cs) == 0 || len(util.Log()) != len(cs) {
		t.Fatalf("%d compressions, %d utility requests; want some, one each", len(cs), len(util.Log()))
	}
	for _, c := range cs {
		if c.Method != "extractive" || !strings.Contains(c.Fallback, "within") || c.Summary == "" {
			t.Errorf("compression %+v: want the extractive summary, saying the utility model was late", c)
		}
		if time.Duration(c.DurationMS)*time.Millisecond > deadline+2*time.Second {
			t.Errorf("compression took %dms, past its deadline of %s", c.DurationMS, deadline)
		}
	}
	if len(srv.Log()) != turns {
		t.Errorf("%d main requests, want %d: a turn did not complete", len(srv.Log()), turns)
	}
}

// TestTieredToolDocs: one line per tool until the tool is used or asked for
// ({"help": true}), then its full documentation instead of the line.
func TestTieredToolDocs(t *testing.T) {
	a, _, srv := newAgentScript(t, setup{
		plugins: []plugin{{name: "tools", tools: []string{"alpha", "beta"}}},
		opts:    Options{MaxIterations: 3},
	}, scripted.Script{Replies: []scripted.Reply{
		{Content: `{"thoughts":["t"],"headline":"h","tool_name":"beta","tool_args":{"help":true}}`},
		{Content: `{"thoughts":["t"],"headline":"h","tool_name":"alpha","tool_args":{"x":1}}`},
		{Content: `{"thoughts":["t"],"headline":"h","tool_name":"alpha","tool_args":{"x":2}}`},
	}})
	_, _ = a.Monologue(context.Background(), "go")
	reqs := srv.Requests()
	tests := []struct {
		request              int
		lines, full          []string
		wantLinesNotInSystem []string
	}{
		{0, []string{"- alpha(): a fixture tool", "- beta(): a fixture tool"}, nil, nil},
		{1, []string{"- alpha(): a fixture tool"}, []string{"### beta"}, []string{"- beta()"}},
		{2, nil, []string{"### alpha", "### beta"}, []string{"- alpha()", "- beta()"}},
	}
	for _, tt := range tests {
		sys := reqs[tt.request].Messages[0].Content
		for _, l := range append(tt.lines, tt.full...) {
			if !strings.Contains(sys, l) {
				t.Errorf("request %d: the system prompt lacks %q", tt.request+1, l)
			}
		}
		for _, l := range tt.wantLinesNotInSystem {
			if strings.Contains(sys, l) {
				t.Errorf("request %d: %q is still there beside the full documentation", tt.request+1, l)
			}
		}
	}
	if got := srv.Log(); len(got) != 3 {
		t.Fatalf("%d requests", len(got))
	}
	// The help call ran nothing: the history has no tool result for beta.
	for _, m := range a.History() {
		if m.GetRole() == "tool" && m.GetToolName() == "beta" {
			t.Errorf("beta ran on a help request: %q", m.GetContent())
		}
	}
}

// TestFinishToolInFull: the tool that ends every task (response) has its full
// documentation from the first request, never its line; the other tools wait
// for their first use.
func TestFinishToolInFull(t *testing.T) {
	a, _, srv := newAgentScript(t, setup{
		plugins: []plugin{{name: "tools", tools: []string{"alpha", "response"}}},
		opts:    Options{MaxIterations: 1},
	}, scripted.Script{Replies: []scripted.Reply{
		{Content: `{"thoughts":["t"],"headline":"h","tool_name":"alpha","tool_args":{}}`},
	}})
	_, _ = a.Monologue(context.Background(), "go")
	sys := srv.Requests()[0].Messages[0].Content
	if !strings.Contains(sys, "### response") || strings.Contains(sys, "- response(") || !strings.Contains(sys, "- alpha(") {
		t.Errorf("the first request's tools: want response in full and alpha's line:\n%s", sys)
	}
}

// TestFitBlocks: the lowest priority is shortened first, then dropped; the
// extension learns the characters that fitted.
func TestFitBlocks(t *testing.T) {
	blk := func(src string, prio int32, n int) *exocortexv1.PromptBlock {
		return &exocortexv1.PromptBlock{Title: src, Source: src, Priority: prio, Content: strings.Repeat("word ", n/5)}
	}
	tests := []struct {
		name    string
		budget  int
		blocks  []*exocortexv1.PromptBlock
		dropped []string
		short   []string
	}{
		{"fits", 1000, []*exocortexv1.PromptBlock{blk("a", 0, 300), blk("b", 1, 300)}, nil, nil},
		{"low shortened", 300, []*exocortexv1.PromptBlock{blk("low", 0, 600), blk("high", 5, 300)}, nil, []string{"low"}},
		{"low dropped", 160, []*exocortexv1.PromptBlock{blk("low", 0, 300), blk("high", 5, 450)}, []string{"low"}, nil},
		{"both cut", 100, []*exocortexv1.PromptBlock{blk("low", 0, 300), blk("high", 5, 600)}, []string{"low"}, []string{"high"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := &Agent{tokens: newTokenCounter(), blockLimit: map[string]int{}}
			var pbs []*promptBlock
			for i, b := range tt.blocks {
				pbs = append(pbs, &promptBlock{PromptBlock: b, seq: i})
			}
			cuts := a.fitBlocks(pbs, tt.budget)
			total := 0
			for _, b := range pbs {
				if b.GetContent() != "" {
					total += a.tokens.text(b.GetTitle()) + a.tokens.text(b.GetContent()) + 2
				}
			}
			if total > tt.budget {
				t.Errorf("blocks take %d tokens, budget %d", total, tt.budget)
			}
			var dropped, short []string
			for _, c := range cuts {
				if c.Kept == 0 {
					dropped = append(dropped, c.Source)
				} else {
					short = append(short, c.Source)
				}
				if _, ok := a.blockLimit[c.Source]; !ok {
					t.Errorf("%s was cut but is not told its limit", c.Source)
				}
			}
			if fmt.Sprint(dropped) != fmt.Sprint(tt.dropped) || fmt.Sprint(short) != fmt.Sprint(tt.short) {
				t.Errorf("dropped %v, shortened %v; want %v, %v", dropped, short, tt.dropped, tt.short)
			}
		})
	}
}

// TestCalibration: the count follows the server's, with a margin; counts
// at the window or far below (a cached prefix) are not taken.
func TestCalibration(t *testing.T) {
	msgs := []llm.Message{{Role: "user", Content: strings.Repeat("x", 4000)}}
	tests := []struct {
		name     string
		reported []int
		numCtx   int
		want     float64 // tokens a byte, before the margin; 0: uncalibrated
	}{
		{"none", nil, 8192, 0},
		{"four bytes a token", []int{1006}, 8192, 0.25},
		{"the highest is kept", []int{1006, 1206}, 8192, 0.30},
		{"cut at the window is ignored", []int{2048}, 2048, 0},
		{"cached prefix is ignored", []int{1006, 200}, 8192, 0.25},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newTokenCounter()
			for _, r := range tt.reported {
				c.observe(msgs, r, tt.numCtx)
			}
			f, cal := c.state()
			if tt.want == 0 {
				if cal || f != initialTokensPerByte {
					t.Fatalf("factor %v calibrated %v, want the initial estimate", f, cal)
				}
				return
			}
			if want := tt.want * calibrationMargin; !cal || f < want-1e-9 || f > want+1e-9 {
				t.Fatalf("factor %v, want %v", f, want)
			}
		})
	}
}

// TestFitWindow: the welcome card's check warns when the window cannot hold
// the fixed prompt.
func TestFitWindow(t *testing.T) {
	tests := []struct {
		numCtx int
		warn   bool
	}{{8192, false}, {1024, true}}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.numCtx), func(t *testing.T) {
			a, _, _ := newAgent(t, setup{plugins: []plugin{{name: "tools", tools: []string{"alpha"}}}, opts: Options{NumCtx: tt.numCtx}})
			fit, err := a.FitWindow(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if fit.Window != tt.numCtx || fit.Fixed == 0 || (fit.Warning() != "") != tt.warn {
				t.Fatalf("fit %+v, warning %q", fit, fit.Warning())
			}
		})
	}
}

// TestCompressionUtilitySummary: a utility model that answers; each
// compression sends it the messages leaving the verbatim window (and the
// summary so far), and its answer is the summary: in the compression event,
// in the ACP context's previous_exchange_summary and in the next request's
// prompt, right after the fixed prompt.
func TestCompressionUtilitySummary(t *testing.T) {
	const turns = 8
	var replies, summaries []scripted.Reply
	for i := 1; i <= turns; i++ {
		replies = append(replies, bigEcho(i, 1200))
		summaries = append(summaries, scripted.Reply{Content: fmt.Sprintf("- utility summary %d: the operator sent notes and the agent echoed them", i)})
	}
	util, err := scripted.NewServer(scripted.Script{Model: "utility", Replies: summaries})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { util.Close() })
	uc, _ := llm.New(util.URL())
	a, rec, srv := newAgentScript(t, setup{
		// watch receives the ACP context at every message_loop_end.
		plugins: []plugin{{name: "tools", tools: []string{"echo"},
			exts: []*exocortexv1.ExtensionSpec{ext("watch", exocortexv1.Hook_HOOK_MESSAGE_LOOP_END, 10)}}},
		opts: Options{MaxIterations: 1, NumCtx: 2048, UtilityModel: "utility", UtilityLLM: uc, CompressTimeout: 30 * time.Second},
	}, scripted.Script{Replies: replies})

	// After each turn: the compressions so far, and the summary the context
	// object carries into the next turn.
	var cs []*Compression
	seen := 0
	for i := 1; i <= turns; i++ {
		runTurn(t, a, i, 400)
		for _, e := range rec.events[seen:] {
			if e.Type == EventCompression {
				cs = append(cs, e.Compression)
			}
		}
		seen = len(rec.events)
		if len(cs) == 0 {
			continue
		}
		want := fmt.Sprintf("utility summary %d:", len(cs))
		if got := a.LastContext().GetInteractionHistory().GetPreviousExchangeSummary(); !strings.Contains(got, want) {
			t.Errorf("turn %d: previous_exchange_summary = %q, want the utility model's answer %q", i, got, want)
		}
	}
	if len(cs) < 2 {
		t.Fatalf("%d compressions; want at least two (the second sends the summary so far)", len(cs))
	}
	ureqs := util.Requests()
	if len(ureqs) != len(cs) {
		t.Fatalf("%d utility requests for %d compressions; want one each", len(ureqs), len(cs))
	}
	for i, c := range cs {
		want := fmt.Sprintf("- utility summary %d:", i+1)
		if c.Method != "utility" || c.Fallback != "" || !strings.HasPrefix(c.Added, want) || !strings.Contains(c.Summary, want) {
			t.Errorf("compression %d: method %q, fallback %q, part added %q, summary %q; want the utility model's %q", i+1, c.Method, c.Fallback, c.Added, c.Summary, want)
		}
		msgs := ureqs[i].Messages
		if ureqs[i].Model != "utility" || len(msgs) != 2 || !strings.Contains(msgs[0].Content, "Summarise") {
			t.Fatalf("utility request %d: model %q, %d messages", i+1, ureqs[i].Model, len(msgs))
		}
		// The first compression sends turn 1's messages; later ones the
		// summary so far too, as context for the part to add.
		if i == 0 && !strings.Contains(msgs[1].Content, "operator: Turn 1.") {
			t.Errorf("utility request 1 lacks the operator's first message: %.200q", msgs[1].Content)
		}
		if i > 0 && !strings.Contains(msgs[1].Content, "Summary so far (it stays as it is; do not repeat it):\n"+cs[i-1].Summary) {
			t.Errorf("utility request %d lacks the summary so far: %.200q", i+1, msgs[1].Content)
		}
	}
	// The request after the last compression shows the summary right after
	// the fixed prompt, the utility model's part last.
	last := srv.Requests()[len(srv.Requests())-1].Messages
	c := cs[len(cs)-1]
	if !strings.Contains(last[1].Content, "Summary of the earlier conversation") || !strings.Contains(last[c.Parts].Content, c.Added) {
		t.Errorf("the last request's summary messages do not end with the utility model's part %q: %.200q", c.Added, last[c.Parts].Content)
	}
}

// TestAppendOnlySummary: each compression appends its summary as a message
// of its own after the earlier parts, which the request repeats byte for
// byte (the server's KV cache keeps the fixed prompt and the summary so
// far); when the parts exceed the summary's share they are merged into one
// within it. The ACP context carries the whole summary, every part.
func TestAppendOnlySummary(t *testing.T) {
	const turns = 40
	var replies []scripted.Reply
	for i := 1; i <= turns; i++ {
		replies = append(replies, bigEcho(i, 1200))
	}
	a, rec, srv := newAgentScript(t, setup{
		plugins: []plugin{{name: "tools", tools: []string{"echo"},
			exts: []*exocortexv1.ExtensionSpec{ext("watch", exocortexv1.Hook_HOOK_MESSAGE_LOOP_END, 10)}}},
		opts: Options{MaxIterations: 1, NumCtx: 4096},
	}, scripted.Script{Replies: replies})
	runTurns(t, a, turns, 400)

	// One request a turn; the compression before request k comes before its
	// budget event.
	reqs := srv.Requests()
	request := 0
	appended, merged := 0, 0
	parts := 0
	for _, e := range rec.events {
		switch e.Type {
		case EventBudget:
			if e.Budget.Summary > int(float64(e.Budget.HistoryBudget)*summaryShare) {
				t.Errorf("request %d: a summary of %d tokens, over its share of %d", request+1, e.Budget.Summary, e.Budget.HistoryBudget)
			}
			request++
		case EventCompression:
			c, k := e.Compression, request
			cur := reqs[k].Messages
			var got []string
			for _, m := range cur[1:] {
				if m.Role != "system" || !strings.HasPrefix(m.Content, "[Summary of the earlier conversation") {
					break
				}
				got = append(got, m.Content[strings.Index(m.Content, "\n")+1:])
			}
			if len(got) != c.Parts || strings.Join(got, "\n") != c.Summary || got[len(got)-1] != c.Added && !c.Merged {
				t.Fatalf("request %d: summary messages %q; want the %d parts of %q, the last %q", k+1, got, c.Parts, c.Summary, c.Added)
			}
			switch {
			case c.Merged:
				merged++
				if c.Parts != 1 {
					t.Errorf("request %d: merged into %d parts", k+1, c.Parts)
				}
			case parts > 0:
				appended++
				if c.Parts != parts+1 {
					t.Errorf("request %d: %d parts after %d and one added", k+1, c.Parts, parts)
				}
				prev := reqs[k-1].Messages
				for i := 0; i <= parts; i++ {
					if prev[i].Role != cur[i].Role || prev[i].Content != cur[i].Content {
						t.Errorf("request %d: message %d (%.60q) is not the previous request's (%.60q): the prefix broke before the new part", k+1, i, cur[i].Content, prev[i].Content)
					}
				}
			}
			parts = c.Parts
		}
	}
	t.Logf("%d compressions appended a part, %d merged", appended, merged)
	if appended == 0 || merged == 0 {
		t.Fatalf("%d parts appended to a summary, %d merges; want some of each", appended, merged)
	}
	rep := a.Context()
	if got := a.LastContext().GetInteractionHistory().GetPreviousExchangeSummary(); got != rep.Summary || rep.SummaryParts != parts {
		t.Errorf("previous_exchange_summary = %q, want the whole summary %q (%d parts)", got, rep.Summary, rep.SummaryParts)
	}
}

// TestSummaryLines: the extractive summary has a line per step, the agent's
// tool call and its result on one line.
func TestSummaryLines(t *testing.T) {
	msg := func(role, content string) *exocortexv1.Message {
		m := &exocortexv1.Message{Role: role, Content: content}
		if role == "user" {
			m.SenderId = "operator"
		}
		return m
	}
	tool := func(name, content string) *exocortexv1.Message {
		return &exocortexv1.Message{Role: "tool", ToolName: name, Content: content}
	}
	call := func(headline, tool, args string) *exocortexv1.Message {
		return msg("assistant", fmt.Sprintf(`{"thoughts":["x"],"headline":%q,"tool_name":%q,"tool_args":%s}`, headline, tool, args))
	}
	tests := []struct {
		name string
		msgs []*exocortexv1.Message
		want []string
	}{
		{"call and result on one line", []*exocortexv1.Message{
			msg("user", "Read part 5 of the log. Then answer."),
			call("read_log", "read_log", `{"part": 5}`),
			tool("read_log", "line 0: request req-5-0 served in 45 ms. line 1"),
			call("Answering", "response", `{"text":"The slowest was req-5-7. Done."}`),
		}, []string{
			"- operator: Read part 5 of the log.",
			`- agent called read_log {"part":5} → line 0: request req-5-0 served in 45 ms.`,
			"- agent answered: The slowest was req-5-7.",
		}},
		{"headline kept, a result of another tool alone", []*exocortexv1.Message{
			call("Counting lines", "code_execution", `{"code":"wc -l notes"}`),
			tool("memory_load", "nothing found"),
		}, []string{
			`- agent called code_execution (Counting lines) {"code":"wc -l notes"}`,
			"- tool memory_load: nothing found",
		}},
		{"a correction of the core is left out", []*exocortexv1.Message{
			{Role: "user", SenderId: "exocortex", Signal: "fw.msg_misformat", Content: "Your reply was not JSON."},
			msg("assistant", "plain words. More."),
		}, []string{"- agent: plain words."}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := summaryLines(tt.msgs); !slices.Equal(got, tt.want) {
				t.Errorf("summaryLines =\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}
