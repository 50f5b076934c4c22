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
	"context"
	"encoding/json"
	"errors"
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
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/exocortex/exocortex/core/llm/scripted"
	"github.com/exocortex/exocortex/internal/procstat"
)

type options struct {
	rounds    int
	jsonOut   bool
	exocortex string
	peers     string
	crush     string
	only      string
	timeout   time.Duration
}

func main() {
	var o options
	flag.IntVar(&o.rounds, "rounds", 5, "interleaved rounds (each tool runs once a round)")
	flag.BoolVar(&o.jsonOut, "json", false, "print the results as JSON")
	flag.StringVar(&o.exocortex, "exocortex", "bin/exocortex", "the exocortex binary")
	flag.StringVar(&o.peers, "peers", ".tools/peers", "the npm prefix make peers installs opencode-ai and @openai/codex into")
	flag.StringVar(&o.crush, "crush", ".tools/bin/crush", "the crush binary make peers builds")
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
	err                           error
}

type result struct {
	Tool        string   `json:"tool"`
	Runs        int      `json:"runs"`
	Failed      int      `json:"failed"`
	FirstMS     float64  `json:"first_request_ms"`
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
	all := tools(o)
	var (
		active  []tool
		results = map[string]*result{}
		order   []string
	)
	want := map[string]bool{}
	for _, n := range strings.Split(o.only, ",") {
		if n = strings.TrimSpace(n); n != "" {
			want[n] = true
		}
	}
	for _, t := range all {
		if len(want) > 0 && !want[t.name] {
			continue
		}
		if abs, err := filepath.Abs(t.exe); err == nil {
			t.exe = abs // runs start in their home
		}
		order = append(order, t.name)
		r := &result{Tool: t.name}
		results[t.name] = r
		if _, err := os.Stat(t.exe); err != nil {
			r.NotMeasured = fmt.Sprintf("%s not found (make peers)", t.exe)
			continue
		}
		active = append(active, t)
	}
	homes := map[string]string{}
	samples := map[string][]sample{}
	for _, t := range active {
		home, err := os.MkdirTemp("", "firstreq-"+t.name+"-")
		if err != nil {
			return fmt.Errorf("home for %s: %w", t.name, err)
		}
		defer os.RemoveAll(home)
		homes[t.name] = home
		// Untimed: the page cache, the home's first files, a peer's first-run caches.
		if s := once(ctx, o, t, home); s.err != nil {
			slog.Warn("warm-up run failed", "tool", t.name, "err", s.err)
		}
	}
	for i := 0; i < o.rounds; i++ {
		for j := range active {
			t := active[(i+j)%len(active)]
			s := once(ctx, o, t, homes[t.name])
			samples[t.name] = append(samples[t.name], s)
		}
	}
	for _, t := range active {
		r := results[t.name]
		var first, cpu, pssv, wall []float64
		for _, s := range samples[t.name] {
			r.Runs++
			if s.err != nil {
				r.Failed++
				r.Errors = appendOnce(r.Errors, s.err.Error())
				if s.firstMS == 0 {
					continue
				}
			}
			first, cpu, pssv, wall = append(first, s.firstMS), append(cpu, s.cpuMS), append(pssv, s.pssMB), append(wall, s.wallMS)
		}
		r.FirstMS, r.CPUMS, r.PSSMB, r.WallMS = median(first), median(cpu), median(pssv), median(wall)
		if len(first) == 0 {
			r.NotMeasured = "no run reached the model: " + strings.Join(r.Errors, "; ")
		}
	}
	// Ratios are medians of per-round ratios to exocortex's run of the same round.
	if base, ok := samples["exocortex"]; ok {
		for _, t := range active {
			if t.name == "exocortex" {
				continue
			}
			var fr, cr, pr []float64
			for i, s := range samples[t.name] {
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
			r := results[t.name]
			r.FirstRatio, r.CPURatio, r.PSSRatio = median(fr), median(cr), median(pr)
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
	fmt.Fprintf(w, "%-10s %10s %10s %9s %9s %7s %7s %7s  %s\n", "tool", "first-ms", "cpu-ms", "pss-MB", "wall-ms", "×first", "×cpu", "×pss", "runs")
	for _, r := range out {
		if r.NotMeasured != "" {
			fmt.Fprintf(w, "%-10s not measured: %s\n", r.Tool, r.NotMeasured)
			continue
		}
		fmt.Fprintf(w, "%-10s %10.0f %10.0f %9.1f %9.0f %7s %7s %7s  %d (%d failed)\n", r.Tool, r.FirstMS, r.CPUMS, r.PSSMB, r.WallMS,
			ratio(r.FirstRatio), ratio(r.CPURatio), ratio(r.PSSRatio), r.Runs, r.Failed)
		for _, e := range r.Errors {
			fmt.Fprintf(w, "%-10s   error: %s\n", "", e)
		}
	}
	return nil
}

func ratio(x float64) string {
	if x == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", x)
}

func appendOnce(xs []string, s string) []string {
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	for _, x := range xs {
		if x == s {
			return xs
		}
	}
	return append(xs, s)
}

// once runs t against a fresh scripted server and measures it.
func once(ctx context.Context, o options, t tool, home string) sample {
	replies := make([]scripted.Reply, 8) // a peer may ask for a title too
	for i := range replies {
		replies[i] = scripted.Reply{Content: t.reply}
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
		first    sync.Once
		pid      int
		pidReady = make(chan struct{})
		s        sample
		t0       time.Time
	)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		chat := strings.HasSuffix(r.URL.Path, "/chat/completions")
		resp := strings.HasSuffix(r.URL.Path, "/responses")
		if chat || resp {
			first.Do(func() {
				s.firstMS = float64(time.Since(t0).Microseconds()) / 1e3
				<-pidReady
				cpu, pss := procstat.Tree(pid)
				s.cpuMS, s.pssMB = float64(cpu.Microseconds())/1e3, pss
			})
		}
		if resp {
			serveResponses(w, r, "Hello!")
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	defer front.Close()
	args, env, err := t.setup(home, front.URL+"/v1", srv.Model())
	if err != nil {
		return sample{err: fmt.Errorf("%s setup: %w", t.name, err)}
	}
	ctx, cancel := context.WithTimeout(ctx, o.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, t.exe, args...)
	cmd.Dir = home
	cmd.Env = append(os.Environ(), env...)
	// Its own process group, so a run past the timeout is killed with every
	// process under it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	t0 = time.Now()
	if err := cmd.Start(); err != nil {
		close(pidReady)
		return sample{err: fmt.Errorf("start %s: %w", t.exe, err)}
	}
	pid = cmd.Process.Pid
	close(pidReady)
	werr := cmd.Wait()
	s.wallMS = float64(time.Since(t0).Microseconds()) / 1e3
	tail := strings.TrimSpace(out.String())
	if len(tail) > 240 {
		tail = tail[len(tail)-240:]
	}
	switch {
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		s.err = fmt.Errorf("%s: killed after %s: %s", t.name, o.timeout, tail)
	case werr != nil:
		s.err = fmt.Errorf("%s: %w: %s", t.name, werr, tail)
	case s.firstMS == 0:
		s.err = fmt.Errorf("%s: no model request reached the scripted server: %s", t.name, tail)
	case !strings.Contains(out.String(), "Hello!"):
		s.err = fmt.Errorf("%s: the scripted answer is not in its output: %s", t.name, tail)
	}
	return s
}

// median of xs, 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	return s[len(s)/2]
}

// peerBin is the path of an npm-installed command under prefix.
func peerBin(prefix, name string) string { return filepath.Join(prefix, "node_modules", ".bin", name) }
