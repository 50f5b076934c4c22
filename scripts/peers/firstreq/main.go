// Command firstreq measures, for exocortex and each installed peer agent, the
// time from exec to the first model request arriving at one scripted
// OpenAI-compatible server, the CPU the tool's process tree had used by then,
// and the tree's PSS at that moment, in interleaved rounds (each tool once a
// round, the order rotating), and prints medians and ratios to exocortex.
//
// It is a measuring script (make peers installs the peers), not a test.
//
//	go run ./scripts/peers/firstreq --help
package main

import (
	"bytes"
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
	"sync"
	"time"

	"github.com/exocortex/exocortex/core/llm/scripted"
	"github.com/exocortex/exocortex/internal/procstat"
	"github.com/exocortex/exocortex/scripts/peers/peer"
)

type options struct {
	rounds  int
	jsonOut bool
	paths   peer.Paths
	fresh   bool
	only    string
	timeout time.Duration
}

func main() {
	var o options
	flag.IntVar(&o.rounds, "rounds", 5, "interleaved rounds (each tool runs once a round)")
	flag.BoolVar(&o.jsonOut, "json", false, "print the results as JSON")
	flag.StringVar(&o.paths.Exocortex, "exocortex", "bin/exocortex", "the exocortex binary")
	flag.StringVar(&o.paths.Peers, "peers", ".tools/peers", "the npm prefix make peers installs opencode-ai and @openai/codex into")
	flag.StringVar(&o.paths.Crush, "crush", ".tools/bin/crush", "the crush binary make peers builds")
	flag.BoolVar(&o.fresh, "fresh", true, "run fresh copies of the exocortex and crush binaries, so both start from the same page-cache state (peer.FreshCopies)")
	flag.StringVar(&o.only, "tools", "", "comma-separated subset of exocortex,opencode,codex,crush (default: every one found)")
	flag.DurationVar(&o.timeout, "timeout", 60*time.Second, "a run's limit; a run past it is killed")
	flag.Usage = func() {
		fmt.Fprintf(flag.CommandLine.Output(), "usage: go run ./scripts/peers/firstreq [flags]\n\n"+
			"Time from exec to the first chat request at one scripted OpenAI-compatible server,\n"+
			"the process tree's CPU by then and its PSS, for `exocortex run -p hello` and each\n"+
			"installed peer's non-interactive mode (opencode run, codex exec, crush run), in\n"+
			"interleaved rounds; medians and ratios to exocortex. Install the peers with make peers.\n\n")
		flag.PrintDefaults()
	}
	flag.Parse()
	if err := run(context.Background(), o, os.Stdout); err != nil {
		slog.Error("firstreq", "err", err)
		os.Exit(1)
	}
}

// sample is one run's figures; err says why a run did not give them.
type sample struct {
	firstMS, cpuMS, pssMB, wallMS float64
	tokens                        int // the first main request's, o200k
	err                           error
}

type result struct {
	Tool        string   `json:"tool"`
	Runs        int      `json:"runs"`
	Failed      int      `json:"failed"`
	FirstMS     float64  `json:"first_request_ms"`
	Tokens      float64  `json:"first_main_request_tokens_o200k"`
	CPUMS       float64  `json:"cpu_to_first_ms"`
	PSSMB       float64  `json:"pss_mb"`
	WallMS      float64  `json:"wall_ms"`
	FirstRatio  float64  `json:"first_ratio_to_exocortex,omitempty"`
	CPURatio    float64  `json:"cpu_ratio_to_exocortex,omitempty"`
	PSSRatio    float64  `json:"pss_ratio_to_exocortex,omitempty"`
	Errors      []string `json:"errors,omitempty"`
	NotMeasured string   `json:"not_measured,omitempty"`
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
		done, err := peer.FreshCopies(&o.paths.Exocortex, &o.paths.Crush)
		if err != nil {
			return err
		}
		defer done()
	}
	for _, t := range peer.Select(peer.Tools(o.paths), o.only) {
		if abs, err := filepath.Abs(t.Exe); err == nil {
			t.Exe = abs // runs start in their home
		}
		order = append(order, t.Name)
		r := &result{Tool: t.Name}
		results[t.Name] = r
		if _, err := os.Stat(t.Exe); err != nil {
			r.NotMeasured = fmt.Sprintf("%s not found (make peers)", t.Exe)
			continue
		}
		active = append(active, t)
	}
	homes := map[string]string{}
	samples := map[string][]sample{}
	for _, t := range active {
		home, err := os.MkdirTemp("", "firstreq-"+t.Name+"-")
		if err != nil {
			return fmt.Errorf("home for %s: %w", t.Name, err)
		}
		defer os.RemoveAll(home)
		homes[t.Name] = home
		// Untimed: the page cache, the home's first files, a peer's first-run caches.
		if s := once(ctx, o, counter, t, home); s.err != nil {
			slog.Warn("warm-up run failed", "tool", t.Name, "err", s.err)
		}
	}
	for i := 0; i < o.rounds; i++ {
		for j := range active {
			t := active[(i+j)%len(active)]
			s := once(ctx, o, counter, t, homes[t.Name])
			samples[t.Name] = append(samples[t.Name], s)
		}
	}
	for _, t := range active {
		r := results[t.Name]
		var first, cpu, pssv, wall, tok []float64
		for _, s := range samples[t.Name] {
			r.Runs++
			if s.err != nil {
				r.Failed++
				r.Errors = peer.AppendOnce(r.Errors, s.err.Error())
				if s.firstMS == 0 {
					continue
				}
			}
			first, cpu, pssv, wall = append(first, s.firstMS), append(cpu, s.cpuMS), append(pssv, s.pssMB), append(wall, s.wallMS)
			if s.tokens > 0 {
				tok = append(tok, float64(s.tokens))
			}
		}
		r.FirstMS, r.CPUMS, r.PSSMB, r.WallMS = peer.Median(first), peer.Median(cpu), peer.Median(pssv), peer.Median(wall)
		r.Tokens = peer.Median(tok)
		if len(first) == 0 {
			r.NotMeasured = "no run reached the model: " + strings.Join(r.Errors, "; ")
		}
	}
	// Ratios are medians of per-round ratios to exocortex's run of the same round.
	if base, ok := samples["exocortex"]; ok {
		for _, t := range active {
			if t.Name == "exocortex" {
				continue
			}
			var fr, cr, pr []float64
			for i, s := range samples[t.Name] {
				b := base[i]
				if s.firstMS == 0 || b.firstMS == 0 {
					continue
				}
				fr = append(fr, s.firstMS/b.firstMS)
				if b.cpuMS > 0 {
					cr = append(cr, s.cpuMS/b.cpuMS)
				}
				if b.pssMB > 0 {
					pr = append(pr, s.pssMB/b.pssMB)
				}
			}
			r := results[t.Name]
			r.FirstRatio, r.CPURatio, r.PSSRatio = peer.Median(fr), peer.Median(cr), peer.Median(pr)
		}
	}
	out := make([]*result, 0, len(order))
	for _, n := range order {
		out = append(out, results[n])
	}
	if o.jsonOut {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"rounds": o.rounds, "results": out})
	}
	fmt.Fprintf(w, "%d interleaved rounds; medians; ratios are medians of per-round tool/exocortex\n", o.rounds)
	fmt.Fprintf(w, "%-10s %10s %10s %9s %9s %7s %7s %7s %7s  %s\n", "tool", "first-ms", "cpu-ms", "pss-MB", "wall-ms", "tokens", "×first", "×cpu", "×pss", "runs")
	for _, r := range out {
		if r.NotMeasured != "" {
			fmt.Fprintf(w, "%-10s not measured: %s\n", r.Tool, r.NotMeasured)
			continue
		}
		fmt.Fprintf(w, "%-10s %10.0f %10.0f %9.1f %9.0f %7.0f %7s %7s %7s  %d (%d failed)\n", r.Tool, r.FirstMS, r.CPUMS, r.PSSMB, r.WallMS, r.Tokens,
			peer.Ratio(r.FirstRatio), peer.Ratio(r.CPURatio), peer.Ratio(r.PSSRatio), r.Runs, r.Failed)
		for _, e := range r.Errors {
			fmt.Fprintf(w, "%-10s   error: %s\n", "", e)
		}
	}
	return nil
}

// once runs t against a fresh scripted server and measures it.
func once(ctx context.Context, o options, counter *peer.Counter, t peer.Tool, home string) sample {
	replies := make([]scripted.Reply, 8) // a peer may ask for a title too
	for i := range replies {
		replies[i] = t.Answer("Hello!")
	}
	srv, err := scripted.NewOpenAIServer(scripted.Script{Replies: replies})
	if err != nil {
		return sample{err: fmt.Errorf("scripted server: %w", err)}
	}
	defer srv.Close()
	target, err := url.Parse(srv.URL())
	if err != nil {
		return sample{err: fmt.Errorf("scripted server URL %q: %w", srv.URL(), err)}
	}
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: target.Scheme, Host: target.Host})
	proxy.ErrorLog = log.New(io.Discard, "", 0)
	var (
		first     sync.Once
		countOnce sync.Once
		pid       int
		pidReady  = make(chan struct{})
		s         sample
		t0        time.Time
	)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chat := strings.HasSuffix(r.URL.Path, "/chat/completions")
		resp := strings.HasSuffix(r.URL.Path, "/responses")
		if chat || resp {
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if req, ok := chatRequest(body, resp); ok {
				if _, main := t.Read(req, home, "hello.txt"); main {
					countOnce.Do(func() { s.tokens = counter.Request(req) })
				}
			}
			first.Do(func() {
				now := time.Now()
				<-pidReady
				s.firstMS = peer.MS(now.Sub(t0))
				cpu, pss := procstat.Tree(pid)
				s.cpuMS, s.pssMB = float64(cpu.Microseconds())/1e3, pss
			})
		}
		if resp {
			peer.ServeResponses(w, r, "Hello!")
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	defer front.Close()
	args, env, err := t.Setup(peer.Run{Home: home, BaseURL: front.URL + "/v1", Model: srv.Model(), Prompt: "hello"})
	if err != nil {
		return sample{err: fmt.Errorf("%s setup: %w", t.Name, err)}
	}
	p := peer.Start(ctx, t.Exe, args, env, home, o.timeout, func(p int, start time.Time) {
		pid, t0 = p, start
		close(pidReady)
	})
	if pid == 0 {
		close(pidReady)
	}
	s.wallMS = peer.MS(p.Wall)
	tail := peer.Tail(p.Output, 240)
	switch {
	case p.Err != nil:
		s.err = fmt.Errorf("%s: %w", t.Name, p.Err)
	case s.firstMS == 0:
		s.err = fmt.Errorf("%s: no model request reached the scripted server: %s", t.Name, tail)
	case !strings.Contains(p.Output, "Hello!"):
		s.err = fmt.Errorf("%s: the scripted answer is not in its output: %s", t.Name, tail)
	}
	return s
}

// chatRequest reads a request body as the chat request it is or (a Responses
// API request, resp) stands for.
func chatRequest(body []byte, resp bool) (scripted.OpenAIRequest, bool) {
	if resp {
		var rr peer.ResponsesRequest
		if json.Unmarshal(body, &rr) != nil {
			return scripted.OpenAIRequest{}, false
		}
		b, err := json.Marshal(peer.ToChat(rr))
		if err != nil {
			return scripted.OpenAIRequest{}, false
		}
		body = b
	}
	req, err := peer.DecodeChat(body)
	return req, err == nil
}
