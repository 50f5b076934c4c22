// Command task20 runs issue 36's 20-turn task with exocortex and each
// installed peer agent against one scripted OpenAI-compatible server, in
// interleaved rounds, and prints medians and ratios to exocortex.
//
// The task: the run's directory holds part01.txt … part20.txt, about 2 KB
// each; the scripted model answers each main request (one offering the
// agent's own tools) with a native call to the agent's read or shell tool for
// the next file, and the request after the 20th result with the final answer.
// Side requests (a title, a summary) get a short text. Each agent is given a
// 4,096-token window where it can be configured (peer.Tool.WindowHow).
//
// Measured per run: wall time, the process tree's CPU (wait4's rusage, every
// descendant waited for) in total and per main request, the tree's PSS at its
// largest (sampled at every request and every 200 ms) and at the final
// answer, the first request's tokens (o200k, peer.Counter) and how many main
// requests were over the window.
//
//	go run ./scripts/peers/task20 --help
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/exocortex/exocortex/scripts/peers/peer"
)

type options struct {
	rounds, turns, window, outputBytes int
	jsonOut, fresh                     bool
	paths                              peer.Paths
	only, dump, old                    string
	timeout                            time.Duration
}

func main() {
	var o options
	flag.IntVar(&o.rounds, "rounds", 3, "interleaved rounds (each tool runs once a round)")
	flag.IntVar(&o.turns, "turns", 20, "tool rounds before the final answer")
	flag.IntVar(&o.window, "window", 4096, "the context window configured for each agent, in tokens (0: each agent's default)")
	flag.IntVar(&o.outputBytes, "output-bytes", 2048, "the size of each file the agent reads")
	flag.BoolVar(&o.jsonOut, "json", false, "print the results as JSON")
	flag.StringVar(&o.paths.Exocortex, "exocortex", "bin/exocortex", "the exocortex binary")
	flag.StringVar(&o.paths.Peers, "peers", ".tools/peers", "the npm prefix make peers installs opencode-ai and @openai/codex into")
	flag.StringVar(&o.paths.Crush, "crush", ".tools/bin/crush", "the crush binary make peers builds")
	flag.BoolVar(&o.fresh, "fresh", true, "run fresh copies of the exocortex and crush binaries, so both start from the same page-cache state (peer.FreshCopies)")
	flag.StringVar(&o.old, "old-exocortex", "", "another exocortex build, run as the tool exocortex-old in the same rounds (new/old in turns)")
	flag.StringVar(&o.only, "tools", "", "comma-separated subset of exocortex,opencode,codex,crush (default: every one found; exocortex-old comes with -old-exocortex)")
	flag.StringVar(&o.dump, "dump", "", "write every chat request of every run into this directory (TOOL-RUN-N.json)")
	flag.DurationVar(&o.timeout, "timeout", 5*time.Minute, "a run's limit; a run past it is killed")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: go run ./scripts/peers/task20 [flags]\n\n"+
			"Issue 36's 20-turn task (a native read/shell call a turn, ~2 KB results, a 4,096 window)\n"+
			"for exocortex and each installed peer (make peers), interleaved rounds: wall time, the\n"+
			"process tree's CPU in total and per main request, PSS (max, at the end), the first\n"+
			"request's o200k tokens, main requests over the window; medians and ratios to exocortex.\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if err := run(context.Background(), o, os.Stdout); err != nil {
		slog.Error("task20", "err", err)
		os.Exit(1)
	}
}

type result struct {
	Tool          string   `json:"tool"`
	Window        string   `json:"window_configured_by"`
	Runs          int      `json:"runs"`
	Failed        int      `json:"failed"`
	WallMS        float64  `json:"wall_ms"`
	CPUMS         float64  `json:"cpu_ms"`
	CPUPerReqMS   float64  `json:"cpu_per_main_request_ms"`
	CPUFirstMS    float64  `json:"cpu_to_first_request_ms"`
	CPUPerIterMS  float64  `json:"cpu_per_iteration_after_first_request_ms"`
	MainRequests  float64  `json:"main_requests"`
	SideRequests  float64  `json:"side_requests"`
	PSSMaxMB      float64  `json:"pss_max_mb"`
	PSSEndMB      float64  `json:"pss_end_mb"`
	FirstTokens   float64  `json:"first_request_tokens_o200k"`
	MaxTokens     float64  `json:"max_request_tokens_o200k"`
	OverWindow    float64  `json:"main_requests_over_window"`
	WallRatio     float64  `json:"wall_ratio_to_exocortex,omitempty"`
	CPURatio      float64  `json:"cpu_ratio_to_exocortex,omitempty"`
	CPUPerReqRat  float64  `json:"cpu_per_request_ratio_to_exocortex,omitempty"`
	CPUPerIterRat float64  `json:"cpu_per_iteration_ratio_to_exocortex,omitempty"`
	PSSMaxRatio   float64  `json:"pss_max_ratio_to_exocortex,omitempty"`
	Errors        []string `json:"errors,omitempty"`
	NotMeasured   string   `json:"not_measured,omitempty"`
}

func run(ctx context.Context, o options, w io.Writer) error {
	counter, err := peer.NewCounter()
	if err != nil {
		return err
	}
	var (
		active  []peer.Tool
		results = map[string]*result{}
		order   []string
	)
	if o.fresh {
		done, err := peer.FreshCopies(&o.paths.Exocortex, &o.paths.Crush, &o.old)
		if err != nil {
			return err
		}
		defer done()
	}
	all := peer.Tools(o.paths)
	if o.old != "" {
		old := all[0] // exocortex's, another binary
		old.Name, old.Exe = "exocortex-old", o.old
		all = append([]peer.Tool{all[0], old}, all[1:]...)
	}
	only := o.only
	if o.old != "" && only != "" {
		only += ",exocortex-old"
	}
	for _, t := range peer.Select(all, only) {
		if abs, err := filepath.Abs(t.Exe); err == nil {
			t.Exe = abs // runs start in their home
		}
		order = append(order, t.Name)
		results[t.Name] = &result{Tool: t.Name, Window: t.WindowHow}
		if _, err := os.Stat(t.Exe); err != nil {
			results[t.Name].NotMeasured = fmt.Sprintf("%s not found (make peers)", t.Exe)
			continue
		}
		active = append(active, t)
	}
	if o.dump != "" {
		if err := os.MkdirAll(o.dump, 0o755); err != nil {
			return fmt.Errorf("dump directory %s: %w", o.dump, err)
		}
	}
	caches := map[string]string{}
	samples := map[string][]sample{}
	for _, t := range active {
		cache, err := os.MkdirTemp("", "task20-"+t.Name+"-cache-")
		if err != nil {
			return fmt.Errorf("cache for %s: %w", t.Name, err)
		}
		defer os.RemoveAll(cache)
		caches[t.Name] = cache
		// Untimed: the page cache, a peer's first-run caches (opencode's
		// provider package).
		if s := once(ctx, o, counter, t, cache, "warmup"); s.err != nil {
			slog.Warn("warm-up run failed", "tool", t.Name, "err", s.err)
		}
	}
	for i := 0; i < o.rounds; i++ {
		for j := range active {
			t := active[(i+j)%len(active)]
			s := once(ctx, o, counter, t, caches[t.Name], fmt.Sprint(i+1))
			slog.Info("run", "tool", t.Name, "round", i+1, "wall_ms", s.wallMS, "cpu_ms", s.cpuMS, "main", s.main, "side", s.side,
				"first_tokens", s.firstTokens, "over_window", s.over, "err", s.err)
			samples[t.Name] = append(samples[t.Name], s)
		}
	}
	for _, t := range active {
		summarise(results[t.Name], samples[t.Name])
	}
	if base, ok := samples["exocortex"]; ok {
		for _, t := range active {
			if t.Name != "exocortex" {
				ratios(results[t.Name], samples[t.Name], base)
			}
		}
	}
	out := make([]*result, 0, len(order))
	for _, n := range order {
		out = append(out, results[n])
	}
	if o.jsonOut {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"rounds": o.rounds, "turns": o.turns, "window": o.window, "output_bytes": o.outputBytes, "results": out})
	}
	fmt.Fprintf(w, "%d interleaved rounds, %d turns, window %d, %d-byte results; medians; ratios are medians of per-round tool/exocortex\n",
		o.rounds, o.turns, o.window, o.outputBytes)
	fmt.Fprintf(w, "%-13s %8s %8s %8s %8s %8s %5s %5s %8s %8s %7s %7s %5s %6s %6s %6s %6s %6s  %s\n", "tool", "wall-ms", "cpu-ms", "cpu/req", "cpu1st", "cpu/it",
		"main", "side", "pssmax", "pssend", "tok1", "tokmax", "over", "×wall", "×cpu", "×c/req", "×c/it", "×pss", "runs")
	for _, r := range out {
		if r.NotMeasured != "" {
			fmt.Fprintf(w, "%-13s not measured: %s\n", r.Tool, r.NotMeasured)
			continue
		}
		fmt.Fprintf(w, "%-13s %8.0f %8.0f %8.1f %8.0f %8.1f %5.0f %5.0f %8.1f %8.1f %7.0f %7.0f %5.0f %6s %6s %6s %6s %6s  %d (%d failed)\n",
			r.Tool, r.WallMS, r.CPUMS, r.CPUPerReqMS, r.CPUFirstMS, r.CPUPerIterMS, r.MainRequests, r.SideRequests, r.PSSMaxMB, r.PSSEndMB, r.FirstTokens, r.MaxTokens, r.OverWindow,
			peer.Ratio(r.WallRatio), peer.Ratio(r.CPURatio), peer.Ratio(r.CPUPerReqRat), peer.Ratio(r.CPUPerIterRat), peer.Ratio(r.PSSMaxRatio), r.Runs, r.Failed)
		for _, e := range r.Errors {
			fmt.Fprintf(w, "%-13s   error: %s\n", "", e)
		}
	}
	for _, r := range out {
		fmt.Fprintf(w, "%-13s window: %s\n", r.Tool, r.Window)
	}
	return nil
}

func summarise(r *result, ss []sample) {
	var first, iter []float64
	var wall, cpu, per, mainN, sideN, pmax, pend, tok1, tokmax, over []float64
	for _, s := range ss {
		r.Runs++
		if s.err != nil {
			r.Failed++
			r.Errors = peer.AppendOnce(r.Errors, s.err.Error())
			continue
		}
		wall, cpu, per = append(wall, s.wallMS), append(cpu, s.cpuMS), append(per, s.cpuMS/float64(s.main))
		first, iter = append(first, s.cpuFirstMS), append(iter, (s.cpuMS-s.cpuFirstMS)/float64(s.main))
		mainN, sideN = append(mainN, float64(s.main)), append(sideN, float64(s.side))
		pmax, pend = append(pmax, s.pssMax), append(pend, s.pssEnd)
		tok1, tokmax, over = append(tok1, float64(s.firstTokens)), append(tokmax, float64(s.maxTokens)), append(over, float64(s.over))
	}
	if len(wall) == 0 {
		r.NotMeasured = "no run finished the task: " + strings.Join(r.Errors, "; ")
		return
	}
	r.WallMS, r.CPUMS, r.CPUPerReqMS = peer.Median(wall), peer.Median(cpu), peer.Median(per)
	r.CPUFirstMS, r.CPUPerIterMS = peer.Median(first), peer.Median(iter)
	r.MainRequests, r.SideRequests = peer.Median(mainN), peer.Median(sideN)
	r.PSSMaxMB, r.PSSEndMB = peer.Median(pmax), peer.Median(pend)
	r.FirstTokens, r.MaxTokens, r.OverWindow = peer.Median(tok1), peer.Median(tokmax), peer.Median(over)
}

// ratios are medians of per-round ratios to exocortex's run of the same round.
func ratios(r *result, ss, base []sample) {
	var wr, cr, pr, mr, ir []float64
	for i, s := range ss {
		if i >= len(base) || s.err != nil || base[i].err != nil {
			continue
		}
		b := base[i]
		wr = append(wr, s.wallMS/b.wallMS)
		cr = append(cr, s.cpuMS/b.cpuMS)
		pr = append(pr, (s.cpuMS/float64(s.main))/(b.cpuMS/float64(b.main)))
		ir = append(ir, ((s.cpuMS-s.cpuFirstMS)/float64(s.main))/((b.cpuMS-b.cpuFirstMS)/float64(b.main)))
		if b.pssMax > 0 {
			mr = append(mr, s.pssMax/b.pssMax)
		}
	}
	r.WallRatio, r.CPURatio, r.CPUPerReqRat, r.PSSMaxRatio = peer.Median(wr), peer.Median(cr), peer.Median(pr), peer.Median(mr)
	r.CPUPerIterRat = peer.Median(ir)
}

// writeParts writes part01.txt … partNN.txt of about size bytes each into dir.
func writeParts(dir string, n, size int) error {
	for i := 1; i <= n; i++ {
		var b strings.Builder
		for line := 1; b.Len() < size; line++ {
			fmt.Fprintf(&b, "part %02d line %03d: the quick brown fox jumps over the lazy dog; checksum %08x\n", i, line, uint32(i*7919+line*104729))
		}
		name := filepath.Join(dir, partName(i))
		if err := os.WriteFile(name, []byte(b.String()[:size]), 0o644); err != nil {
			return fmt.Errorf("task file %s: %w", name, err)
		}
	}
	return nil
}

func partName(i int) string { return fmt.Sprintf("part%02d.txt", i) }

// front is the server the agent talks to: chat completions go to the
// scripted server unchanged, the Responses API through peer.Bridge.
func front(target string) (*httptest.Server, error) {
	u, err := url.Parse(target)
	if err != nil {
		return nil, fmt.Errorf("scripted server URL %q: %w", target, err)
	}
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host})
	proxy.ErrorLog = log.New(io.Discard, "", 0)
	chat := strings.TrimSuffix(target, "/") + "/chat/completions"
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasSuffix(r.URL.Path, "/responses") {
			peer.Bridge(w, r, chat, nil)
			return
		}
		proxy.ServeHTTP(w, r)
	})), nil
}
