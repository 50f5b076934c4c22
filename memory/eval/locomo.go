package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/exocortex/exocortex/memory"
)

// A LoCoMo conversation (snap-research/LoCoMo, data/locomo10.json), as far as the
// evaluation reads it.
type locomoConv struct {
	SampleID     string                     `json:"sample_id"`
	Conversation map[string]json.RawMessage `json:"conversation"`
	QA           []locomoQA                 `json:"qa"`
}

type locomoQA struct {
	Question string   `json:"question"`
	Evidence []string `json:"evidence"`
	Category int      `json:"category"`
}

type locomoTurn struct {
	Speaker     string `json:"speaker"`
	DiaID       string `json:"dia_id"`
	Text        string `json:"text"`
	BlipCaption string `json:"blip_caption"`
}

// locomoSet is one conversation made ready for a store: its turns as inputs (in
// session and turn order) and its answerable questions.
type locomoSet struct {
	ID        string
	Inputs    []memory.Input
	Questions []locomoQuestion
}

type locomoQuestion struct {
	Text     string
	Evidence []string // dia_ids that exist in the conversation
	Category int
}

var sessionKey = regexp.MustCompile(`^session_(\d+)$`)

// loadLocomo reads a LoCoMo file. Each turn becomes one memory exactly as
// ../shared/tools/locomo_recall.py imports it: "Speaker: text", the image caption
// appended as " [image: caption]", the dia_id as its key, and the session and its
// date in the metadata.
func loadLocomo(path string) ([]locomoSet, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var convs []locomoConv
	if err := json.Unmarshal(b, &convs); err != nil {
		return nil, fmt.Errorf("%s is not a LoCoMo file (a JSON list of conversations): %w", path, err)
	}
	var out []locomoSet
	for ci, c := range convs {
		set := locomoSet{ID: c.SampleID}
		if set.ID == "" {
			set.ID = fmt.Sprintf("conversation %d", ci+1)
		}
		var sessions []int
		for k := range c.Conversation {
			if m := sessionKey.FindStringSubmatch(k); m != nil {
				n, _ := strconv.Atoi(m[1])
				sessions = append(sessions, n)
			}
		}
		sort.Ints(sessions)
		ids := map[string]bool{}
		for _, n := range sessions {
			key := fmt.Sprintf("session_%d", n)
			var when string
			if raw, ok := c.Conversation[key+"_date_time"]; ok {
				_ = json.Unmarshal(raw, &when)
			}
			var turns []locomoTurn
			if err := json.Unmarshal(c.Conversation[key], &turns); err != nil {
				return nil, fmt.Errorf("%s: %s %s: %w", path, set.ID, key, err)
			}
			for _, t := range turns {
				text := t.Speaker + ": " + t.Text
				if t.BlipCaption != "" {
					text += " [image: " + t.BlipCaption + "]"
				}
				set.Inputs = append(set.Inputs, memory.Input{Area: memory.AreaMain, Text: text, Key: t.DiaID,
					Metadata: map[string]any{"dia_id": t.DiaID, "session": key, "when": when}})
				ids[t.DiaID] = true
			}
		}
		for _, q := range c.QA {
			var ev []string
			for _, e := range q.Evidence {
				if ids[e] {
					ev = append(ev, e)
				}
			}
			if len(ev) > 0 {
				set.Questions = append(set.Questions, locomoQuestion{Text: strings.ReplaceAll(q.Question, "\n", " "), Evidence: ev, Category: q.Category})
			}
		}
		out = append(out, set)
	}
	return out, nil
}

// locomoRow is turn-level recall@k of one mode, overall and per category.
type locomoRow struct {
	Mode       memory.Mode             `json:"mode"`
	Questions  int                     `json:"questions"`
	Recall     map[int]float64         `json:"recall"`
	ByCategory map[int]map[int]float64 `json:"by_category"` // category -> k -> recall
	Counts     map[int]int             `json:"category_questions"`
}

// runLocomo imports each conversation into its own store and measures every mode.
// tune, if set, adjusts the search options of every query.
func runLocomo(ctx context.Context, sets []locomoSet, emb memory.Embedder, modes []memory.Mode, cut []int, tune func(*memory.SearchOptions)) ([]locomoRow, error) {
	maxK := 0
	for _, k := range cut {
		maxK = max(maxK, k)
	}
	rows := make([]locomoRow, len(modes))
	sums := make([]map[int]map[int]float64, len(modes))
	for i, m := range modes {
		rows[i] = locomoRow{Mode: m, Recall: map[int]float64{}, ByCategory: map[int]map[int]float64{}, Counts: map[int]int{}}
		sums[i] = map[int]map[int]float64{}
	}
	var dump *json.Encoder
	if p := os.Getenv("EVAL_DUMP"); p != "" {
		f, err := os.Create(p)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		dump = json.NewEncoder(f)
	}
	for _, set := range sets {
		dir, err := os.MkdirTemp("", "exocortex-locomo-")
		if err != nil {
			return nil, err
		}
		err = func() error {
			defer os.RemoveAll(dir)
			s, err := memory.Open(ctx, dir, memory.Options{Embedder: emb, Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				return err
			}
			defer s.Close()
			if _, err := s.PutBatch(ctx, set.Inputs, memory.Source{Source: "eval"}); err != nil {
				return fmt.Errorf("%s: %w", set.ID, err)
			}
			for mi, mode := range modes {
				for _, q := range set.Questions {
					o := memory.SearchOptions{Limit: maxK, Mode: mode}
					if tune != nil {
						tune(&o)
					}
					res, err := s.Search(ctx, q.Text, o)
					if err != nil {
						return fmt.Errorf("%s: %s search %q: %w", set.ID, mode, q.Text, err)
					}
					rank := map[string]int{}
					for i, h := range res.Hits {
						if _, ok := rank[h.Record.Key]; !ok {
							rank[h.Record.Key] = i
						}
					}
					if os.Getenv("EVAL_DEBUG") == string(mode) {
						debugMiss(set, q, res)
					}
					if dump != nil && os.Getenv("EVAL_DUMP_MODE") == string(mode) {
						dumpHits(dump, set, q, res)
					}
					cat := sums[mi][q.Category]
					if cat == nil {
						cat = map[int]float64{}
						sums[mi][q.Category] = cat
					}
					rows[mi].Counts[q.Category]++
					rows[mi].Questions++
					for _, k := range cut {
						found := 0
						for _, e := range q.Evidence {
							if r, ok := rank[e]; ok && r < k {
								found++
							}
						}
						share := float64(found) / float64(len(q.Evidence))
						cat[k] += share
						rows[mi].Recall[k] += share
					}
				}
			}
			return nil
		}()
		if err != nil {
			return nil, err
		}
	}
	for mi := range rows {
		for _, k := range cut {
			rows[mi].Recall[k] /= float64(max(rows[mi].Questions, 1))
		}
		for c, byK := range sums[mi] {
			rows[mi].ByCategory[c] = map[int]float64{}
			for _, k := range cut {
				rows[mi].ByCategory[c][k] = byK[k] / float64(rows[mi].Counts[c])
			}
		}
	}
	return rows, nil
}

var categoryNames = map[int]string{1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}

func printLocomo(w io.Writer, rows []locomoRow, cut []int) {
	fmt.Fprintf(w, "%-8s %-13s %5s", "mode", "category", "n")
	for _, k := range cut {
		fmt.Fprintf(w, "  R@%-4d", k)
	}
	fmt.Fprintln(w)
	for _, r := range rows {
		var cats []int
		for c := range r.ByCategory {
			cats = append(cats, c)
		}
		sort.Ints(cats)
		for _, c := range cats {
			fmt.Fprintf(w, "%-8s %-13s %5d", r.Mode, fmt.Sprintf("%d %s", c, categoryNames[c]), r.Counts[c])
			for _, k := range cut {
				fmt.Fprintf(w, "  %.3f ", r.ByCategory[c][k])
			}
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "%-8s %-13s %5d", r.Mode, "all", r.Questions)
		for _, k := range cut {
			fmt.Fprintf(w, "  %.3f ", r.Recall[k])
		}
		fmt.Fprintln(w)
	}
}

func debugMiss(set locomoSet, q locomoQuestion, res memory.Result) {
	top := map[string]bool{}
	for i, h := range res.Hits {
		if i < 10 {
			top[h.Record.Key] = true
		}
	}
	miss := false
	for _, e := range q.Evidence {
		if !top[e] {
			miss = true
		}
	}
	if !miss {
		return
	}
	fmt.Printf("Q[%d] %s\n", q.Category, q.Text)
	rk := map[string]int{}
	for i, h := range res.Hits {
		if _, ok := rk[h.Record.Key]; !ok {
			rk[h.Record.Key] = i + 1
		}
	}
	for _, e := range q.Evidence {
		for _, in := range set.Inputs {
			if in.Key == e {
				fmt.Printf("   %s %v rank=%d %s\n", e, top[e], rk[e], in.Text)
			}
		}
	}
	for i, h := range res.Hits[:min(3, len(res.Hits))] {
		fmt.Printf("   #%d %s %s\n", i+1, h.Record.Key, h.Record.Text)
	}
}

// dumpHits writes one question's hits with the parts of their scores as one
// JSON line (EVAL_DUMP=FILE EVAL_DUMP_MODE=hybrid): for studying re-rankers
// offline.
func dumpHits(enc *json.Encoder, set locomoSet, q locomoQuestion, res memory.Result) {
	type hit struct {
		Key      string  `json:"key"`
		Text     string  `json:"text"`
		Fused    float64 `json:"fused"`
		Context  float64 `json:"context"`
		Meaning  float64 `json:"meaning"`
		BM25     float64 `json:"bm25"`
		BM25Rank int     `json:"bm25_rank"`
		Sim      float64 `json:"sim"`
		VecRank  int     `json:"vec_rank"`
	}
	out := struct {
		Conv     string   `json:"conv"`
		Question string   `json:"question"`
		Category int      `json:"category"`
		Evidence []string `json:"evidence"`
		Hits     []hit    `json:"hits"`
	}{set.ID, q.Text, q.Category, q.Evidence, nil}
	for _, h := range res.Hits {
		out.Hits = append(out.Hits, hit{h.Record.Key, h.Record.Text, h.Fused, h.Context, h.Meaning, h.BM25Score, h.BM25Rank, h.Similarity, h.VectorRank})
	}
	_ = enc.Encode(out)
}
