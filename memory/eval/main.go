// Command eval measures the retrieval quality of the memory store on two sets, side
// by side, for BM25 alone, vectors alone and the default (hybrid):
//
//   - real conversations: LoCoMo (Maharana et al., ACL 2024), read from -data
//     (default ../shared/data/locomo-dev/locomo-dev.json, never copied into the
//     repository: its licence is non-commercial). One store per conversation,
//     each turn one memory as ../shared/tools/locomo_recall.py imports it, and
//     turn-level recall@k of each question's evidence turns, per category. When
//     the file is absent this part is skipped, saying so.
//
//   - a generated set: facts about invented people (ten relations each, such as
//     "Chiara Brandt is allergic to sesame.") plus distractor notes, and one
//     paraphrased question per fact ("Which ingredient makes Chiara Brandt
//     sick?"); recall@k and mean reciprocal rank.
//
//     go run ./memory/eval                       # offline GloVe from data/glove-100d.bin
//     go run ./memory/eval -data FILE -embedder ollama:nomic-embed-text
//     go run ./memory/eval -glove PATH -people 200 -k 1,3,5,10
//     go run ./memory/eval -write DIR            # also write facts.jsonl and queries.txt
//
// The word vectors come from scripts/fetch-glove.sh. Without them the evaluation
// uses the compact table built into the binary, as the CLI's default embedder
// (auto) does and as ../shared/tools/locomo_recall.py measures it; -embedder none
// runs BM25 alone.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/exocortex/exocortex/memory"
	"github.com/exocortex/exocortex/memory/embed"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "eval:", err)
		os.Exit(1)
	}
}

type row struct {
	Mode    memory.Mode     `json:"mode"`
	Recall  map[int]float64 `json:"recall"`
	MRR     float64         `json:"mrr"`
	Queries int             `json:"queries"`
	P50ms   float64         `json:"p50_ms"`
}

func run() error {
	glove := flag.String("glove", envOr("EXOCORTEX_GLOVE", "data/glove-100d.bin"), "GloVe word-vector file (scripts/fetch-glove.sh); -embedder overrides it")
	embedder := flag.String("embedder", "", `embedder: "glove:PATH", "glove:compact" (the table built into the binary), "ollama:MODEL" or "none" (default: glove at -glove, else glove:compact, as the CLI's auto)`)
	data := flag.String("data", "../shared/data/locomo-dev/locomo-dev.json", "LoCoMo conversations (JSON); skipped, saying so, when absent")
	sets := flag.String("sets", "locomo,generated", "which sets to measure: locomo, generated or both")
	people := flag.Int("people", 120, "people in the generated set (ten facts each)")
	seed := flag.Uint64("seed", 1, "generated set seed")
	ks := flag.String("k", "1,3,5,10", "cut-offs for recall@k on the generated set")
	lks := flag.String("locomo-k", "1,5,10,20", "cut-offs for recall@k on LoCoMo")
	rrfK := flag.Float64("rrf-k", 60, "reciprocal rank fusion constant (with -fusion rrf)")
	fusion := flag.String("fusion", "", "fusion of the legs: score (default) or rrf")
	wb := flag.Float64("bm25-weight", 0, "BM25 weight in the fusion (0: the default)")
	wv := flag.Float64("vector-weight", 0, "vector weight in the fusion (0: the embedder's default)")
	ctxw := flag.Float64("context", 0, "share of the neighbouring records' scores (0: the default, negative: none)")
	gloveKind := flag.String("glove-weights", "sif", "GloVe sentence vectors: sif (weighted, common component removed), sif-pc0 (weighted), mean (plain mean), mean-pc1")
	cwin := flag.Int("context-window", 0, "records on each side that count (0: the default)")
	only := flag.String("conversations", "", "LoCoMo conversations to measure, by sample_id, separated by commas (default: all; for tuning on one half and checking on the other)")
	spk := flag.Float64("speaker-boost", 0, "boost records spoken (\"Name: ...\") by someone the question names by this share (0: none)")
	sprior := flag.Float64("speaker-prior", 0, "share of the best score added to records spoken by someone the question names, after the fusion (0: the default, negative: none)")
	slead := flag.Float64("speaker-lead", 0, "share of the best score the speaker prior rises to when the best hit is the named speaker's own and the question does not ask when (0: the default, negative: none)")
	qpen := flag.Float64("question-penalty", 0, "share of the best score taken from conversation records that ask a question, after the fusion (0: the default, negative: none)")
	cdecay := flag.Float64("context-decay", 0, "the share of the nearer record's weight each further one gets (0: the default)")
	mmr := flag.Float64("mmr", 0, "re-rank for diversity by maximal marginal relevance with this lambda (0: none, the default)")
	creply := flag.Float64("context-reply", 0, "how much more a question counts for the record right after it (0: the default, negative: none)")
	fb := flag.Int("feedback", 0, "pseudo-relevance feedback documents (0: the default, negative: none)")
	fbt := flag.Int("feedback-terms", 0, "pseudo-relevance feedback terms (0: the default)")
	fbb := flag.Float64("feedback-boost", 0, "weight of a feedback term (0: the default)")
	maxDF := flag.Float64("max-df", 0, "drop query words in more than this share of the records (0: the default, 1: none)")
	expand := flag.Int("expand", 0, "similar words added to the BM25 query per query word (0 or negative: none, the default)")
	expandSim := flag.Float64("expand-min-sim", 0, "least cosine similarity of an added word (0: the default)")
	expandBoost := flag.Float64("expand-boost", 0, "weight of an added word, times its similarity (0: the default)")
	soft := flag.Float64("soft-match", 0, "weight of the re-rank by word similarity (0: the default, negative: none)")
	softFloor := flag.Float64("soft-match-floor", 0, "least word similarity the re-rank counts (0: the default)")
	cands := flag.Int("candidates", 0, "candidates per leg (0: the default)")
	noDate := flag.Bool("no-date", false, "leave the session date out of the LoCoMo records' metadata (to measure what it adds)")
	onlyModes := flag.String("modes", "", "modes to measure, separated by commas: bm25, vector, hybrid (default: all the embedder allows)")
	asJSON := flag.Bool("json", false, "print JSON")
	write := flag.String("write", "", "also write the generated set (facts.jsonl, queries.txt, labels.jsonl) to this directory")
	flag.Parse()

	parseK := func(name, v string) ([]int, error) {
		var cut []int
		for _, s := range strings.Split(v, ",") {
			k, err := strconv.Atoi(strings.TrimSpace(s))
			if err != nil || k <= 0 {
				return nil, fmt.Errorf("-%s %q: want positive integers separated by commas", name, v)
			}
			cut = append(cut, k)
		}
		return cut, nil
	}
	cut, err := parseK("k", *ks)
	if err != nil {
		return err
	}
	lcut, err := parseK("locomo-k", *lks)
	if err != nil {
		return err
	}
	tune := func(o *memory.SearchOptions) {
		o.Fusion, o.RRFK, o.BM25Weight, o.VectorWeight, o.Context = memory.Fusion(*fusion), *rrfK, *wb, *wv, *ctxw
		o.Feedback, o.FeedbackTerms, o.FeedbackBoost = *fb, *fbt, *fbb
		o.MaxDF, o.ContextWindow, o.ContextDecay, o.ContextReply = *maxDF, *cwin, *cdecay, *creply
		o.SpeakerBoost, o.SpeakerPrior, o.SpeakerLead, o.QuestionPenalty = *spk, *sprior, *slead, *qpen
		o.MMRLambda = *mmr
		o.SoftMatch, o.SoftMatchFloor = *soft, *softFloor
		o.Expand, o.ExpandMinSim, o.ExpandBoost = *expand, *expandSim, *expandBoost
		if *cands > 0 {
			o.Candidates = *cands
		}
	}
	ctx := context.Background()

	var emb memory.Embedder
	modes := []memory.Mode{memory.ModeBM25}
	spec := *embedder
	if spec == "" {
		// As the CLI's default (auto): the full file when it is there, else the
		// table built into the binary, so the two measure the same store.
		spec = "glove:" + *glove
		if _, err := os.Stat(*glove); errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(os.Stderr, "eval: no word vectors at %s (scripts/fetch-glove.sh makes them): the built-in table (glove:compact), as the CLI's default uses without them\n", *glove)
			spec = "glove:" + embed.CompactSpec
		}
	}
	e, err := embed.Open(ctx, embed.Spec(spec), "")
	if g, ok := e.(*embed.GloVe); ok && *gloveKind != "sif" {
		e = embed.NewGloVe(g.Vectors(), embed.GloVeConfig{PlainMean: strings.HasPrefix(*gloveKind, "mean"), KeepCommonComponent: !strings.HasSuffix(*gloveKind, "pc1")})
	}
	switch {
	case err == nil && e != nil:
		emb = e
		modes = append(modes, memory.ModeVector, memory.ModeHybrid)
	case err == nil:
	case strings.HasPrefix(spec, "glove:"):
		fmt.Fprintf(os.Stderr, "eval: %v: BM25 only\n", err)
	default:
		return err
	}

	if *onlyModes != "" {
		var keep []memory.Mode
		for _, m := range modes {
			if contains(strings.Split(*onlyModes, ","), string(m)) {
				keep = append(keep, m)
			}
		}
		if len(keep) == 0 {
			return fmt.Errorf("-modes %q: none of them available (have %v; vector and hybrid need an embedder)", *onlyModes, modes)
		}
		modes = keep
	}
	out := map[string]any{"embedder": modelOf(emb)}
	if strings.Contains(*sets, "locomo") {
		convs, err := loadLocomo(*data)
		if err == nil && *only != "" {
			convs, err = pickConversations(convs, *only)
		}
		if *noDate {
			for _, c := range convs {
				for _, in := range c.Inputs {
					delete(in.Metadata, "when")
				}
			}
		}
		switch {
		case errors.Is(err, fs.ErrNotExist):
			fmt.Fprintf(os.Stderr, "eval: no LoCoMo data at %s (see ../shared/data/locomo-dev/README.md): skipping the real-conversation set\n", *data)
		case err != nil:
			return err
		default:
			rows, err := runLocomo(ctx, convs, emb, modes, lcut, tune)
			if err != nil {
				return err
			}
			out["locomo"] = map[string]any{"data": *data, "conversations": len(convs), "rows": rows}
			if !*asJSON {
				fmt.Printf("LoCoMo %s: %d conversations, turn-level recall@k; embedder: %s\n\n", *data, len(convs), modelOf(emb))
				printLocomo(os.Stdout, rows, lcut)
				fmt.Println()
			}
		}
	}
	if strings.Contains(*sets, "generated") {
		rows, n, err := runGenerated(ctx, *people, *seed, *write, emb, modes, cut, tune)
		if err != nil {
			return err
		}
		out["generated"] = map[string]any{"facts": n, "rows": rows}
		if !*asJSON {
			printGenerated(rows, cut, *people, n, emb)
		}
	}
	if *asJSON {
		enc := json.NewEncoder(os.Stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(out)
	}
	return nil
}

// runGenerated measures the generated set.
func runGenerated(ctx context.Context, people int, seed uint64, write string, emb memory.Embedder, modes []memory.Mode, cut []int, tune func(*memory.SearchOptions)) ([]row, int, error) {
	maxK := 0
	for _, k := range cut {
		maxK = max(maxK, k)
	}
	facts, queries := dataset(people, seed)
	if write != "" {
		if err := writeDataset(write, facts, queries); err != nil {
			return nil, 0, err
		}
	}
	dir, err := os.MkdirTemp("", "exocortex-eval-")
	if err != nil {
		return nil, 0, err
	}
	defer os.RemoveAll(dir)
	s, err := memory.Open(ctx, dir, memory.Options{Embedder: emb, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return nil, 0, err
	}
	defer s.Close()
	ins := make([]memory.Input, len(facts))
	for i, f := range facts {
		ins[i] = memory.Input{ID: f.ID, Area: f.Area, Text: f.Text}
	}
	if _, err := s.PutBatch(ctx, ins, memory.Source{Source: "eval"}); err != nil {
		return nil, 0, err
	}

	var rows []row
	for _, mode := range modes {
		r := row{Mode: mode, Recall: map[int]float64{}, Queries: len(queries)}
		var lat []time.Duration
		for _, q := range queries {
			t0 := time.Now()
			o := memory.SearchOptions{Limit: maxK, Mode: mode}
			tune(&o)
			res, err := s.Search(ctx, q.Text, o)
			lat = append(lat, time.Since(t0))
			if err != nil {
				return nil, 0, fmt.Errorf("%s search %q: %w", mode, q.Text, err)
			}
			for rank, h := range res.Hits {
				if h.Record.ID == q.Want {
					r.MRR += 1 / float64(rank+1)
					for _, k := range cut {
						if rank < k {
							r.Recall[k]++
						}
					}
					break
				}
			}
		}
		for _, k := range cut {
			r.Recall[k] /= float64(len(queries))
		}
		r.MRR /= float64(len(queries))
		r.P50ms = median(lat)
		rows = append(rows, r)
	}

	return rows, len(facts), nil
}

func printGenerated(rows []row, cut []int, people, facts int, emb memory.Embedder) {
	fmt.Printf("generated set: %d facts (%d people x %d relations + %d distractors), %d questions; embedder: %s\n\n",
		facts, people, len(relations), facts-people*len(relations), rows[0].Queries, modelOf(emb))
	fmt.Printf("%-8s", "mode")
	for _, k := range cut {
		fmt.Printf("  recall@%-3d", k)
	}
	fmt.Printf("  MRR     p50\n")
	for _, r := range rows {
		fmt.Printf("%-8s", r.Mode)
		for _, k := range cut {
			fmt.Printf("  %-10.3f", r.Recall[k])
		}
		fmt.Printf("  %.3f  %.2f ms\n", r.MRR, r.P50ms)
	}
}

func modelOf(e memory.Embedder) string {
	if e == nil {
		return "none"
	}
	return e.ModelID()
}

func median(d []time.Duration) float64 {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
	return float64(s[len(s)/2].Microseconds()) / 1000
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

// writeDataset writes facts.jsonl (importable with `exocortex memory import`),
// queries.txt (for `exocortex memory search --queries`) and labels.jsonl.
func writeDataset(dir string, facts []fact, queries []query) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var f, q, l strings.Builder
	for _, x := range facts {
		b, _ := json.Marshal(x)
		f.Write(b)
		f.WriteByte('\n')
	}
	for i, x := range queries {
		q.WriteString(x.Text + "\n")
		b, _ := json.Marshal(map[string]any{"line": i + 1, "query": x.Text, "want": x.Want})
		l.Write(b)
		l.WriteByte('\n')
	}
	for name, body := range map[string]string{"facts.jsonl": f.String(), "queries.txt": q.String(), "labels.jsonl": l.String()} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// pickConversations keeps the conversations whose ids the comma-separated list
// names, in the file's order.
func pickConversations(convs []locomoSet, list string) ([]locomoSet, error) {
	want := map[string]bool{}
	for _, id := range strings.Split(list, ",") {
		if id = strings.TrimSpace(id); id != "" {
			want[id] = true
		}
	}
	var out []locomoSet
	for _, c := range convs {
		if want[c.ID] {
			out = append(out, c)
			delete(want, c.ID)
		}
	}
	if len(want) > 0 {
		var ids []string
		for _, c := range convs {
			ids = append(ids, c.ID)
		}
		var missing []string
		for id := range want {
			missing = append(missing, id)
		}
		return nil, fmt.Errorf("-conversations: %s not in the data (it has %s)", strings.Join(missing, ", "), strings.Join(ids, ", "))
	}
	return out, nil
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if strings.TrimSpace(y) == x {
			return true
		}
	}
	return false
}
