package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/exocortex/exocortex/core/llm/scripted"
	"github.com/exocortex/exocortex/core/loop"
	"github.com/exocortex/exocortex/extensions/builtin"
)

// BenchmarkFixedPrompt measures the fixed prompt (main prompt and tool
// documentation) with every built-in plugin loaded, tiered and in full, with
// a four-bytes-a-token tokenizer: by the model's count, the first request's
// system message (the fixed prompt and the system_prompt blocks) and the
// whole first request; as the loop counts them once calibrated (5 % margin),
// the fixed prompt and the tool documentation of the second request (which
// has the documentation of read_log, used in the first, in full).
//
//	go test -run '^$' -bench FixedPrompt -benchtime 1x ./cmd/exocortex/
func BenchmarkFixedPrompt(b *testing.B) {
	for _, full := range []bool{false, true} {
		name := "tiered"
		if full {
			name = "full"
		}
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				script := scripted.Script{Replies: []scripted.Reply{
					{Content: `{"thoughts":["a"],"headline":"a","tool_name":"read_log","tool_args":{"part":1}}`},
					{Content: `{"thoughts":["b"],"headline":"b","tool_name":"response","tool_args":{"text":"hi"}}`},
				}}
				a, _, srv, _, events := startSession(b, script, loop.Options{FullToolDocs: full}, nil, builtin.Names()...)
				if _, err := a.Monologue(context.Background(), "hello"); err != nil {
					b.Fatal(err)
				}
				var last *loop.Budget
				for _, e := range *events {
					if e.Type == loop.EventBudget {
						last = e.Budget
					}
				}
				if last == nil || !last.Calibrated {
					b.Fatalf("no calibrated budget: %+v", last)
				}
				b.ReportMetric(float64(last.System), "fixed_tokens")
				b.ReportMetric(float64(last.Tools), "tooldoc_tokens")
				b.ReportMetric(float64(srv.Log()[0].PromptTokens), "first_request_tokens")
				// The first request's system message by the model's count: the
				// fixed prompt and the system_prompt hooks' blocks.
				b.ReportMetric(float64(srv.CountTokens(srv.Requests()[0].Messages[:1])), "first_system_tokens")
			}
		})
	}
}

// BenchmarkLongSession runs TestLongSession's 60 turns and reports: the share
// of each request that repeats the previous one byte for byte from the start
// (what the server's KV cache reuses), as mean and median, and the share of
// requests at 95 % or more; beside it, token-weighted, the tokens repeated over
// the tokens sent in the whole session (the first request included: the KV
// cache work actually saved); where the repeat ends, by part of the previous
// request (a pinned message_loop_prompts_after message counts as history; a
// new one at the end as after_blocks; summary_append when a compression
// appended a part after the summary so far, summary_merge when it merged the
// parts; "appended" when the whole previous request is repeated), and the
// bytes of new after-blocks per request; the share of the previous request
// found again at the start of the next (reuse); the host time the budget adds
// per request, which is per iteration (counting, compression with the
// extractive summary, fitting, pinning; hook calls not included; mean and
// max); the compressions and how many of them merged the summary. Three
// sessions: "stress", TestLongSession's (4096-token window, 6 KB tool
// results: a compression nearly every turn, every new result a quarter of the
// window), "small-results" (the default 8192 window, 400-byte results, the
// every-day case) and "small-results-120", the same over 120 turns (the
// one-off costs of the session's start weigh half as much).
//
//	go test -run '^$' -bench LongSession -benchtime 1x ./cmd/exocortex/
func BenchmarkLongSession(b *testing.B) {
	for _, bc := range []struct {
		name   string
		numCtx int
		turns  int
		env    []string
	}{
		{"stress", 4096, longTurns, nil},
		{"small-results", 0, longTurns, []string{"BIGLOG_BYTES=400"}},
		{"small-results-120", 0, 120, []string{"BIGLOG_BYTES=400"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			for b.Loop() {
				a, _, srv, _, events := startSession(b, longSessionScriptOf(bc.turns), loop.Options{NumCtx: bc.numCtx}, bc.env, "agent-tools", "memory-tools")
				runLongSession(b, a, bc.turns)
				reportSession(b, srv.Requests(), *events)
			}
		})
	}
}

func runLongSession(b *testing.B, a *loop.Agent, turns int) {
	for i := 1; i <= turns; i++ {
		msg := fmt.Sprintf("Read part %d of the service log and tell me the slowest request.", i)
		switch i {
		case 1:
			msg = longFact
		case turns:
			msg = longQuestion
		}
		if _, err := a.Monologue(context.Background(), msg); err != nil {
			var stop *loop.StopError
			if !errors.As(err, &stop) {
				b.Fatal(err)
			}
		}
	}
}

func reportSession(b *testing.B, reqs []api.ChatRequest, events []loop.Event) {
	var shares, reuse []float64
	at95 := 0
	// repeated and sent are the bytes over the session, the first request
	// included: the share of the tokens sent that the KV cache already held
	// (the scripted tokenizer counts bytes, so bytes weigh as tokens).
	sent, repeated := float64(renderedLen(reqs[0].Messages)), 0.0
	// lost[part] sums, over the requests, the share of the request after the
	// common prefix, by the part of the previous request where it breaks.
	lost := map[string]float64{}
	// afterBytes: the message_loop_prompts_after blocks sent new (pinned.go).
	afterBytes := 0.0
	for i := 1; i < len(reqs); i++ {
		s, r := prefixShare(reqs[i-1].Messages, reqs[i].Messages)
		shares, reuse = append(shares, s), append(reuse, r)
		sent += float64(renderedLen(reqs[i].Messages))
		repeated += s * float64(renderedLen(reqs[i].Messages))
		if s >= 0.95 {
			at95++
		}
		lost[breakPart(reqs[i-1].Messages, reqs[i].Messages)] += 1 - s
		afterBytes += float64(len(reqs[i].Messages[len(reqs[i].Messages)-1].Content)) * boolTo(isAfterBlocks(reqs[i].Messages))
	}
	b.ReportMetric(afterBytes/float64(max(1, len(shares))), "after_blocks_bytes/request")
	lost["summary"] = lost["summary_merge"] + lost["summary_append"]
	for _, part := range []string{"system", "summary", "summary_merge", "summary_append", "before_blocks", "history", "after_blocks", "appended"} {
		b.ReportMetric(100*lost[part]/float64(max(1, len(shares))), "lost_at_"+part+"_%")
	}
	var hostUS []float64
	compressions, merges := 0, 0
	for _, e := range events {
		switch e.Type {
		case loop.EventBudget:
			hostUS = append(hostUS, float64(e.Budget.HostUS))

		case loop.EventCompression:
			compressions++
			if e.Compression.Merged {
				merges++
			}
		}
	}
	b.ReportMetric(100*mean(shares), "prefix_repeat_mean_%")
	b.ReportMetric(100*medianOf(shares), "prefix_repeat_median_%")
	b.ReportMetric(100*float64(at95)/float64(len(shares)), "requests_at_95%_%")
	b.ReportMetric(100*mean(reuse), "previous_reused_mean_%")
	b.ReportMetric(mean(hostUS), "budget_us/request")
	b.ReportMetric(maxOf(hostUS), "budget_max_us")
	b.ReportMetric(100*repeated/sent, "token_weighted_repeat_%")
	b.ReportMetric(float64(compressions), "compressions")
	b.ReportMetric(float64(merges), "summary_merges")
	b.ReportMetric(float64(len(reqs)), "requests")
}

// prefixShare is the share of cur's bytes, as the server renders a prompt,
// that repeat prev's from the start, and the share of prev's bytes found
// again at the start of cur.
func prefixShare(prev, cur []api.Message) (share, reuse float64) {
	p, c := renderPrompt(prev), renderPrompt(cur)
	n := 0
	for n < len(p) && n < len(c) && p[n] == c[n] {
		n++
	}
	return float64(n) / float64(len(c)), float64(n) / float64(len(p))
}

// breakPart names the part of prev where cur stops repeating it: the fixed
// system prompt, the summary of compressed turns (summary_merge: a part of
// prev's summary was rewritten; summary_append: prev's summary is repeated
// whole and a new part follows it), the
// message_loop_prompts_before blocks, the verbatim history, the
// message_loop_prompts_after blocks (the last user message, when it is a
// block), or "appended" when cur repeats all of prev.
func breakPart(prev, cur []api.Message) string {
	k := 0
	for k < len(prev) && k < len(cur) && prev[k].Role == cur[k].Role && prev[k].Content == cur[k].Content {
		k++
	}
	switch {
	case k == len(prev):
		return "appended"
	case k == 0:
		return "system"
	case isSummary(prev[k]):
		return "summary_merge"
	case isSummary(cur[k]):
		return "summary_append"
	case prev[k].Role == "system":
		return "before_blocks"
	case k == len(prev)-1 && isAfterBlocks(prev):
		return "after_blocks"
	}
	return "history"
}

// isSummary says whether m is a part of the summary of compressed turns.
func isSummary(m api.Message) bool {
	return m.Role == "system" && strings.HasPrefix(m.Content, "[Summary of the earlier conversation")
}

// isAfterBlocks says whether the last message of ms is the
// message_loop_prompts_after blocks.
func isAfterBlocks(ms []api.Message) bool {
	l := ms[len(ms)-1]
	return len(ms) > 1 && l.Role == "user" && strings.HasPrefix(l.Content, "[")
}

// renderPrompt renders messages as a server's chat template would, in
// essence.
func renderPrompt(ms []api.Message) string {
	var b strings.Builder
	for _, m := range ms {
		b.WriteString("<|" + m.Role + "|>" + m.Content + "<|end|>")
	}
	return b.String()
}

func renderedLen(ms []api.Message) int { return len(renderPrompt(ms)) }

func boolTo(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func medianOf(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}

func maxOf(xs []float64) float64 {
	m := 0.0
	for _, x := range xs {
		m = max(m, x)
	}
	return m
}
