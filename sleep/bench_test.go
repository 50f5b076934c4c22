package sleep

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/exocortex/exocortex/internal/procstat"
	"github.com/exocortex/exocortex/memory"
	"github.com/exocortex/exocortex/memory/embed"
	"github.com/exocortex/exocortex/staging"
)

// BenchmarkSleep measures a full run (all six phases) on stores of 10k, 30k and
// 100k records with 100-d vectors, each in a child process (this test binary,
// re-executed) so that its peak resident memory (VmHWM) is its own. The store
// is built once per size and cached under $TMPDIR/exocortex-sleep-bench; every
// iteration runs on a fresh copy. docs/perf/sleep.md has the figures.
//
//	go test ./sleep -run '^$' -bench Sleep -benchtime 1x -timeout 60m
//
// SLEEP_BENCH_N=10000,30000 chooses the sizes. The vectors are the offline GloVe
// ones (data/glove-100d.bin or EXOCORTEX_GLOVE), else a 100-d hashed
// bag-of-words, and the benchmark says which.
//
// The corpus: a third templated facts with their labelled duplicates and hard
// negatives (the generator of the dedup test), half sentences of 8 to 30 words
// drawn by Zipf's law from the 30,000 most frequent words (a tenth of them with
// a duplicate or a copy with a typo), 4 % old unimportant records, 0.5 %
// loop-period records, 300 entities with variants, 200 staging entries.

const (
	envBenchChild = "SLEEP_BENCH_CHILD"
	benchVersion  = "v1"
)

type benchResult struct {
	Seconds    float64            `json:"seconds"`     // the run, from Run to its return
	Second     float64            `json:"second"`      // a second run right after: nothing to do
	Total      float64            `json:"total"`       // the process, including loading the word vectors
	CPU        float64            `json:"cpu_seconds"` // user + system of the process
	PeakRSSKiB int64              `json:"peak_rss_kib"`
	Records    int                `json:"records"`
	Changes    int                `json:"changes"`
	Phases     map[string]float64 `json:"phases"`
	Counts     map[string]int     `json:"counts"`
}

func benchSizes() []int {
	s := os.Getenv("SLEEP_BENCH_N")
	if s == "" {
		return []int{10_000, 30_000, 100_000}
	}
	var out []int
	for _, x := range strings.Split(s, ",") {
		if n, err := strconv.Atoi(strings.TrimSpace(x)); err == nil && n > 0 {
			out = append(out, n)
		}
	}
	return out
}

// benchEmbedder is GloVe when its file is there, else a hashed embedder.
func benchEmbedder() (memory.Embedder, string) {
	if g := gloveEmbedder(); g != nil {
		return g, "glove"
	}
	return testEmbedder{dims: 100}, "hash100"
}

// benchVocab is the 30,000 most frequent GloVe words, or pseudo-words.
func benchVocab() []string {
	path := os.Getenv("EXOCORTEX_GLOVE")
	if path == "" {
		path = filepath.Join("..", "data", "glove-100d.bin")
	}
	var vocab []string
	if wv, err := embed.ReadWordVectors(path); err == nil {
		for _, w := range wv.Words {
			if len(vocab) == 30_000 {
				break
			}
			if strings.IndexFunc(w, unicode.IsLetter) >= 0 {
				vocab = append(vocab, w)
			}
		}
		return vocab
	}
	cons, vow := []string{"b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z"}, []string{"a", "e", "i", "o", "u"}
	for i := 0; len(vocab) < 30_000; i++ {
		var b strings.Builder
		for x := i; ; x /= len(cons) * len(vow) {
			b.WriteString(cons[x%len(cons)] + vow[(x/len(cons))%len(vow)])
			if x < len(cons)*len(vow) {
				break
			}
		}
		vocab = append(vocab, b.String())
	}
	return vocab
}

// benchInputs builds a corpus of about n records.
func benchInputs(n int) []memory.Input {
	g := generate(genConfig{seed: 77, facts: n * 17 / 100, dupRate: 0.3, negRate: 0.3, fillers: n * 2 / 100, stale: n * 4 / 100,
		loops: n / 200, now: testNow, areaSplit: true})
	ins := g.inputs()
	vocab := benchVocab()
	rng := rand.New(rand.NewPCG(78, 79))
	zipf := rand.NewZipf(rand.New(rand.NewPCG(80, 81)), 1.07, 1, uint64(len(vocab)-1))
	areas := []string{memory.AreaMain, memory.AreaMain, memory.AreaMain, memory.AreaFragments, memory.AreaSolutions}
	imp := func(x float64) *float64 { return &x }
	for i := 0; len(ins) < n-300; i++ {
		words := make([]string, 8+rng.IntN(23))
		for j := range words {
			words[j] = vocab[zipf.Uint64()]
		}
		text := strings.Join(words, " ")
		created := testNow.Add(-time.Duration(rng.IntN(200*24)) * time.Hour)
		in := memory.Input{ID: fmt.Sprintf("z%07d", i), Area: areas[i%len(areas)], Text: text, Created: &created, Importance: imp(0.3 + 0.1*float64(rng.IntN(6)))}
		ins = append(ins, in)
		if rng.IntN(10) == 0 {
			dup := in
			dup.ID += "d"
			if rng.IntN(2) == 0 {
				dup.Text = typoIn(text, rng)
			}
			ins = append(ins, dup)
		}
	}
	for i := range 60 {
		for _, e := range entities() {
			e.ID = fmt.Sprintf("%s-%02d", e.ID, i)
			e.Key = fmt.Sprintf("%s %02d", e.Key, i)
			ins = append(ins, e)
		}
	}
	return ins[:min(len(ins), n)]
}

// benchStore returns a cached store of about n records, building it if needed.
func benchStore(b *testing.B, n int) (string, memory.Embedder) {
	e, name := benchEmbedder()
	dir := filepath.Join(os.TempDir(), "exocortex-sleep-bench", fmt.Sprintf("%d-%s-%s", n, name, benchVersion))
	if _, err := os.Stat(filepath.Join(dir, "ready")); err == nil {
		return dir, e
	}
	os.RemoveAll(dir)
	start := time.Now()
	ins := benchInputs(n)
	home := fixtureAt(dir)
	makeStore(b, home.store, e, ins)
	ctx := context.Background()
	writeLog := func(path string, entries []staging.Entry) {
		l, err := staging.Open(ctx, path, staging.Options{Logger: quiet()})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := l.AppendBatch(ctx, entries); err != nil {
			b.Fatal(err)
		}
		l.Close()
	}
	var notes, rels []staging.Entry
	for i := range 200 {
		notes = append(notes, staging.Entry{Kind: StagingNote, Session: "bench", Payload: map[string]any{
			"text": fmt.Sprintf("Staged note %d: the nightly job %d moved to runner %d.", i, i%37, i%11)}})
	}
	for i := range 60 {
		rels = append(rels, staging.Entry{Kind: KindRelationship, Session: "bench", Payload: relationship{
			From: fmt.Sprintf("Exocortex %02d", i), Rel: "uses", To: fmt.Sprintf("Kubernetis %02d", i)}})
	}
	writeLog(home.staging, notes)
	writeLog(home.rels, rels)
	b.Logf("built a store of %d records (%s vectors) in %s", len(ins), name, time.Since(start).Round(time.Second))
	os.WriteFile(filepath.Join(dir, "ready"), nil, 0o600)
	return dir, e
}

func BenchmarkSleep(b *testing.B) {
	var results []benchResult
	for _, n := range benchSizes() {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			cached, _ := benchStore(b, n)
			_, name := benchEmbedder()
			for range b.N {
				b.StopTimer()
				home := b.TempDir()
				if _, err := copyTree(cached, home); err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				cmd := exec.Command(os.Args[0], "-test.run=^$", "-test.bench=^$")
				cmd.Env = append(os.Environ(), envBenchChild+"="+home)
				var out, errb bytes.Buffer
				cmd.Stdout, cmd.Stderr = &out, &errb
				if err := cmd.Run(); err != nil {
					b.Fatalf("child: %v\n%s", err, errb.String())
				}
				var r benchResult
				if err := json.Unmarshal(out.Bytes(), &r); err != nil {
					b.Fatalf("child output %q: %v", out.String(), err)
				}
				b.ReportMetric(r.Seconds, "s/run")
				b.ReportMetric(r.CPU, "cpu-s/op")
				b.ReportMetric(float64(r.PeakRSSKiB)/1024, "MiB-peak")
				b.Logf("%d records (%s): run %.1fs (process %.1fs, CPU %.1fs for both runs), peak RSS %.0f MiB, %d changes; a second run %.1fs; phases %v; counts %v",
					r.Records, name, r.Seconds, r.Total, r.CPU, float64(r.PeakRSSKiB)/1024, r.Changes, r.Second, r.Phases, r.Counts)
				results = append(results, r)
			}
		})
	}
	if len(results) >= 2 {
		a, z := results[0], results[len(results)-1]
		ratio := z.Seconds / a.Seconds
		nlogn := float64(z.Records) * logf(z.Records) / (float64(a.Records) * logf(a.Records))
		b.Logf("growth %d -> %d records: run time ×%.1f, CPU ×%.1f; n log n predicts ×%.1f, n ×%.1f",
			a.Records, z.Records, ratio, z.CPU/a.CPU, nlogn, float64(z.Records)/float64(a.Records))
	}
}

func logf(n int) float64 { return math.Log2(float64(n)) }

// benchChild runs the consolidation on home and prints a benchResult.
func benchChild(home string) int {
	start := time.Now()
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(MemoryLimit) // as exocortex sleep does
	}
	e, _ := benchEmbedder()
	fx := fixtureAt(home)
	cfg := fx.config(e)
	cfg.ReportDir = filepath.Join(home, "reports")
	t0 := time.Now()
	rep, err := Run(context.Background(), cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench child:", err)
		return 1
	}
	r := benchResult{Seconds: time.Since(t0).Seconds(), Total: time.Since(start).Seconds(), Records: rep.Before.Records,
		Changes: rep.Changes, Phases: map[string]float64{}, Counts: map[string]int{}}
	t1 := time.Now()
	again, err := Run(context.Background(), cfg)
	if err != nil || again.Written != 0 {
		fmt.Fprintln(os.Stderr, "bench child: the second run:", err, again.Written)
		return 1
	}
	r.Second = time.Since(t1).Seconds()
	for _, p := range rep.Phases {
		r.Phases[p.Phase.String()] = float64(int(p.Seconds*10)) / 10
		for _, k := range []string{"ingested", "merged", "summaries", "archived", "quarantined", "corroborated", "pairs_checked"} {
			if v := p.Counts[k]; v > 0 {
				r.Counts[p.Phase.String()+"."+k] = v
			}
		}
	}
	r.CPU = procstat.CPUTime().Seconds()
	if b, err := os.ReadFile("/proc/self/status"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "VmHWM:"); ok {
				r.PeakRSSKiB, _ = strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			}
		}
	}
	json.NewEncoder(os.Stdout).Encode(r)
	return 0
}
