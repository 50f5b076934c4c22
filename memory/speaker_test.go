package memory

import (
	"context"
	"slices"
	"strings"
	"testing"
)

func TestNamedIn(t *testing.T) {
	for _, tc := range []struct {
		speaker, query string
		want           bool
	}{
		{"Melanie", "What activities does Melanie partake in?", true},
		{"Melanie", "What is Melanie's favourite book?", true},
		{"melanie", "what does MELANIE paint?", true},
		{"Caroline", "What activities does Melanie partake in?", false},
		{"Mary Jane", "What did Mary Jane buy?", true},
		{"Mary Jane", "What did Mary buy?", false},
		{"", "What did Mary buy?", false},
		{"Jon", "What do Jon and Gina both have in common?", true},
	} {
		if got := namedIn(tc.speaker, queryNames(tc.query)); got != tc.want {
			t.Errorf("namedIn(%q, %q) = %v, want %v", tc.speaker, tc.query, got, tc.want)
		}
	}
}

// TestSpeakerPrior: "What did Melanie paint?" shares "paint" with both
// speakers' turns, and Caroline's, which also names Melanie, is BM25's
// choice; the prior lifts the turn Melanie said, and says so. Each leg alone
// and a question naming both speakers (or none) are left as they were.
func TestSpeakerPrior(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, t.TempDir(), Options{})
	turns := []struct{ key, text string }{
		{"c1", "Caroline: Melanie, did you paint that? I love how you paint, Melanie!"},
		{"m1", "Melanie: I paint sunsets over the lake most weekends."},
		{"c2", "Caroline: I went to a pride parade yesterday."},
	}
	for _, tr := range turns {
		if _, err := s.Put(ctx, Input{Key: tr.key, Text: tr.text, Metadata: map[string]any{"session": "session_1"}}, Source{Source: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name, query string
		o           SearchOptions
		first       string
		named       bool // the first hit carries the prior
	}{
		{"without the prior BM25's choice leads", "What did Melanie paint?", SearchOptions{SpeakerPrior: -1}, "c1", false},
		{"with it the turn Melanie said leads", "What did Melanie paint?", SearchOptions{SpeakerPrior: 1}, "m1", true},
		{"the default prior is on", "What did Melanie paint?", SearchOptions{}, "m1", true},
		{"BM25 alone has no prior", "What did Melanie paint?", SearchOptions{Mode: ModeBM25, SpeakerPrior: 1}, "c1", false},
		{"naming both speakers changes nothing", "What did Melanie and Caroline paint?", SearchOptions{SpeakerPrior: 1}, "c1", false},
		{"naming no speaker changes nothing", "Who can paint?", SearchOptions{SpeakerPrior: 1}, "c1", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := s.Search(ctx, tc.query, tc.o)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Hits) == 0 || res.Hits[0].Record.Key != tc.first {
				t.Fatalf("ranking %v, want %s first", keys(res), tc.first)
			}
			h := res.Hits[0]
			says := strings.Contains(h.Why(), "someone the query names")
			if tc.named != (h.Speaker > 0) || tc.named != says {
				t.Errorf("first hit: Speaker %g, Why %q", h.Speaker, h.Why())
			}
			for _, h := range res.Hits {
				if h.Speaker > 0 && !strings.HasPrefix(h.Record.Text, "Melanie:") {
					t.Errorf("hit %s got the prior: %q", h.Record.Key, h.Record.Text)
				}
			}
		})
	}
}

// TestQuestionPenalty: the turn that asks "what did you paint?" holds the
// question's words and is BM25's choice; the penalty puts the answer after
// it first. (Without neighbour context, which would lift the answer by the
// question's words anyway: ContextReply.) A question asking "when" keeps the asking turn (it often names
// the time), each leg alone has no penalty, and a record outside any
// conversation that asks is left alone.
func TestQuestionPenalty(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, t.TempDir(), Options{})
	for _, in := range []Input{
		{Key: "ask", Text: "Caroline: So what did you paint at the lake last weekend?", Metadata: map[string]any{"session": "session_1"}},
		{Key: "answer", Text: "Melanie: Sunsets over the lake, with the kids.", Metadata: map[string]any{"session": "session_1"}},
		{Key: "other", Text: "Caroline: The weather was lovely.", Metadata: map[string]any{"session": "session_1"}},
		{Key: "note", Text: "What did the painters paint at the lake?"},
	} {
		if _, err := s.Put(ctx, in, Source{Source: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name, query string
		o           SearchOptions
		before      [2]string // before[0] ranks above before[1] (unless empty)
		penalised   []string
	}{
		{"without the penalty the asking turn leads", "What did they paint at the lake?", SearchOptions{QuestionPenalty: -1, SpeakerPrior: -1, Context: -1}, [2]string{"ask", "answer"}, nil},
		{"with it the answer leads", "What did they paint at the lake?", SearchOptions{QuestionPenalty: 1, SpeakerPrior: -1, Context: -1}, [2]string{"answer", "ask"}, []string{"ask"}},
		{"the default penalty is on", "What did they paint at the lake?", SearchOptions{SpeakerPrior: -1, Context: -1}, [2]string{}, []string{"ask"}},
		{"a when-question keeps the asking turn", "When did they paint at the lake?", SearchOptions{QuestionPenalty: 1, SpeakerPrior: -1, Context: -1}, [2]string{"ask", "answer"}, nil},
		{"BM25 alone has no penalty", "What did they paint at the lake?", SearchOptions{Mode: ModeBM25, QuestionPenalty: 1, Context: -1}, [2]string{"ask", "answer"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := s.Search(ctx, tc.query, tc.o)
			if err != nil {
				t.Fatal(err)
			}
			got := keys(res)
			i, j := slices.Index(got, tc.before[0]), slices.Index(got, tc.before[1])
			if tc.before[0] != "" && (i < 0 || j < 0 || i > j) {
				t.Fatalf("ranking %v, want %s before %s", got, tc.before[0], tc.before[1])
			}
			for _, h := range res.Hits {
				want := slices.Contains(tc.penalised, h.Record.Key)
				says := strings.Contains(h.Why(), "less for asking a question")
				if want != (h.Asks > 0) || want != says {
					t.Errorf("hit %s: Asks %g, Why %q", h.Record.Key, h.Asks, h.Why())
				}
			}
		})
	}
}
