package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/exocortex/exocortex/memory"
	"github.com/exocortex/exocortex/memory/embed"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// runPScript is the scripted model of BenchmarkRunPrompt: one answer.
const runPScript = `model: bench
replies:
  - content: '{"thoughts":["done"],"tool_name":"response","tool_args":{"text":"All done."}}'
`

// BenchmarkRunPrompt measures a one-shot `exocortex run -p` (the real binary,
// its real plugin processes, the scripted Ollama-protocol model server) in a
// home whose memory store is empty and in one whose store holds
// RUNP_BENCH_N (default 100,000) records, taking turns: the difference
// (added-ms) is what the store's size adds to a run, whose host owns the
// home's memory service and opens the store beside its start-up. With EXOCORTEX_GLOVE set, both runs use the offline GloVe embedder
// (as a new user's do); without it, no embedder (BM25 alone).
// RUNP_EMBEDDER names the embedder instead (e.g. glove:compact, the table
// built into the binary), for the store and the runs.
//
// The large store is built once and kept in os.TempDir (exocortex-bench-runp-N-
// followed by the embedder); remove it to build it afresh.
//
//	EXOCORTEX_GLOVE=/work/glove/glove-100d.bin go test ./cmd/exocortex -run '^$' -bench RunPrompt -benchtime 5x -timeout 60m
func BenchmarkRunPrompt(b *testing.B) {
	n := 100_000
	if s := os.Getenv("RUNP_BENCH_N"); s != "" {
		if v, err := strconv.Atoi(s); err == nil && v > 0 {
			n = v
		}
	}
	// RUNP_EXE runs another build (an older commit's, for a side-by-side
	// figure) on its own copy of the kept store, since builds may differ in
	// the store's file formats.
	exe := os.Getenv("RUNP_EXE")
	if exe == "" {
		exe = sdktest.BuildPlugin(b, "github.com/exocortex/exocortex/cmd/exocortex")
	}
	script := filepath.Join(b.TempDir(), "bench.yaml")
	if err := os.WriteFile(script, []byte(runPScript), 0o644); err != nil {
		b.Fatal(err)
	}
	env := []string{"EXOCORTEX_EMBEDDER=auto"}
	if os.Getenv(embed.GloVeEnv) == "" {
		env = []string{"EXOCORTEX_EMBEDDER=none"}
	}
	spec := embed.Spec("auto")
	if s := os.Getenv("RUNP_EMBEDDER"); s != "" {
		spec, env = embed.Spec(s), []string{"EXOCORTEX_EMBEDDER=" + s}
	}
	big := runPStore(b, n, spec)
	if other := os.Getenv("RUNP_EXE"); other != "" {
		big = copyStore(b, big, big+"-"+filepath.Base(other))
	}
	// The two homes take turns, run by run, so that a change in the machine's
	// load during the benchmark weighs on both alike; the figure is the
	// difference of the medians (added-ms) and their ratio.
	type home struct {
		name, dir    string
		walls, opens []time.Duration
	}
	homes := []*home{{name: "empty"}, {name: fmt.Sprintf("%dk", n/1000)}}
	for i, h := range homes {
		h.dir = b.TempDir()
		if i == 1 {
			// The home's store is a link to the kept one: the runs add a few
			// records to it, which the next open replays as a tail.
			if err := os.Symlink(big, filepath.Join(h.dir, "memory")); err != nil {
				b.Fatal(err)
			}
		}
		// One untimed run first: it brings files of another build's format
		// up to date and warms the page cache.
		runPrompt(b, exe, h.dir, script, env)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for _, h := range homes {
			wall, open := runPrompt(b, exe, h.dir, script, env)
			h.walls = append(h.walls, wall)
			h.opens = append(h.opens, open)
		}
	}
	empty, full := medianDur(homes[0].walls), medianDur(homes[1].walls)
	b.ReportMetric(empty.Seconds()*1000, "empty-wall-ms")
	b.ReportMetric(full.Seconds()*1000, homes[1].name+"-wall-ms")
	b.ReportMetric((full-empty).Seconds()*1000, "added-ms")
	b.ReportMetric(full.Seconds()/empty.Seconds(), "ratio")
	b.ReportMetric(medianDur(homes[0].opens).Seconds()*1000, "empty-hook-ms")
	b.ReportMetric(medianDur(homes[1].opens).Seconds()*1000, homes[1].name+"-hook-ms")
}

// copyStore copies the store in src to dst unless dst exists.
func copyStore(b *testing.B, src, dst string) string {
	if _, err := os.Stat(dst); err == nil {
		return dst
	}
	if out, err := exec.Command("cp", "-a", src, dst).CombinedOutput(); err != nil {
		b.Fatalf("copying the store: %v: %s", err, out)
	}
	return dst
}

func medianDur(ds []time.Duration) time.Duration {
	s := append([]time.Duration(nil), ds...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

// runPrompt runs one prompt and returns its wall time and the duration of the
// longest hook of the memory-tools plugin (the memory hooks' calls wait for
// the service's open of the store, and a recall or a pass over the session's
// records is longer on a larger store).
func runPrompt(b *testing.B, exe, home, script string, env []string) (time.Duration, time.Duration) {
	cmd := exec.Command(exe, "run", "-p", "What does the user drink in the morning?", "--json", "--model", "script:"+script, "--provider", "ollama")
	cmd.Dir = home
	cmd.Env = append(append(os.Environ(), "EXOCORTEX_HOME="+home), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	t0 := time.Now()
	out, err := cmd.Output()
	wall := time.Since(t0)
	if err != nil {
		b.Fatalf("exocortex run: %v\nstderr:\n%s", err, stderr.String())
	}
	if !bytes.Contains(out, []byte("All done.")) {
		b.Fatalf("no answer; output:\n%s", out)
	}
	var slowest time.Duration
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	for sc.Scan() {
		var e struct {
			Type     string `json:"type"`
			Plugin   string `json:"plugin"`
			Duration int64  `json:"duration_us"`
		}
		if json.Unmarshal(sc.Bytes(), &e) == nil && e.Type == "hook" && e.Plugin == "memory-tools" {
			slowest = max(slowest, time.Duration(e.Duration)*time.Microsecond)
		}
	}
	return wall, slowest
}

// runPStore returns the directory of a closed memory store of n generated
// records, built on first use with the embedder a run would use (spec).
func runPStore(b *testing.B, n int, spec embed.Spec) string {
	ctx := context.Background()
	e, err := embed.Open(ctx, spec, "")
	if err != nil {
		b.Fatal(err)
	}
	model := "none"
	if e != nil {
		model = e.ModelID()
	}
	slug := strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return unicode.ToLower(r)
		}
		return '-'
	}, model)
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("exocortex-bench-runp-%d-%.40s", n, slug))
	opts := memory.Options{Logger: slog.New(slog.DiscardHandler)}
	if e != nil {
		opts.Embedder = e
	}
	if _, err := os.Stat(filepath.Join(dir, memory.JournalFile)); err == nil {
		s, err := memory.Open(ctx, dir, opts)
		if err == nil {
			var st memory.Stats
			st, err = s.Stats(ctx)
			if cerr := s.Close(); err == nil {
				err = cerr
			}
			if err == nil && st.Records >= n {
				return dir
			}
		}
		b.Logf("benchmark store %s is unusable (%v): building it again", dir, err)
	}
	if err := os.RemoveAll(dir); err != nil {
		b.Fatal(err)
	}
	b.Logf("building a store of %d records in %s (embedder %s)", n, dir, model)
	s, err := memory.Open(ctx, dir, opts)
	if err != nil {
		b.Fatal(err)
	}
	vocab := runPVocab()
	rng := rand.New(rand.NewPCG(1, 7))
	zipf := rand.NewZipf(rand.New(rand.NewPCG(1, 8)), 1.07, 1, uint64(len(vocab)-1))
	areas := []string{memory.AreaMain, memory.AreaMain, memory.AreaMain, memory.AreaFragments, memory.AreaSolutions}
	for i := 0; i < n; i += 1000 {
		batch := make([]memory.Input, 0, 1000)
		for j := i; j < min(i+1000, n); j++ {
			words := make([]string, 8+rng.IntN(23))
			for k := range words {
				words[k] = vocab[zipf.Uint64()]
			}
			batch = append(batch, memory.Input{ID: fmt.Sprintf("r%07d", j), Area: areas[j%len(areas)], Text: strings.Join(words, " "), Tags: []string{vocab[j%50]}})
		}
		if _, err := s.PutBatch(ctx, batch, memory.Source{Source: "bench", Session: "bench"}); err != nil {
			b.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	return dir
}

// runPVocab is the GloVe vocabulary in frequency order (English word
// frequencies), or pseudo-words without it.
func runPVocab() []string {
	var out []string
	if p := os.Getenv(embed.GloVeEnv); p != "" {
		if wv, err := embed.ReadWordVectors(p); err == nil {
			for _, w := range wv.Words {
				if len(out) == 30_000 {
					break
				}
				if strings.IndexFunc(w, unicode.IsLetter) >= 0 {
					out = append(out, w)
				}
			}
			return out
		}
	}
	for i := range 30_000 {
		out = append(out, fmt.Sprintf("w%x", i*2654435761%1000003))
	}
	return out
}
