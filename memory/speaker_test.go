package memory

import (
	"context"
	"math"
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

// TestSpeakerLead: the named-speaker prior rises to SpeakerLead when the best
// hit is itself the named speaker's and the question does not ask "when";
// otherwise it stays SpeakerPrior. With the rise, Melanie's weaker turn
// about painting passes Caroline's, which holds more of the question's words;
// without it (or for "when") Caroline's stays ahead.
func TestSpeakerLead(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, t.TempDir(), Options{})
	for _, in := range []Input{
		{Key: "m1", Text: "Melanie: I paint sunsets over the lake at dawn."},
		{Key: "c1", Text: "Caroline: I paint by the lake at dawn too."},
		{Key: "m2", Text: "Melanie: The horse I painted by the lake is my favourite."},
		{Key: "c2", Text: "Caroline: I went to a pride parade yesterday."},
		{Key: "c3", Text: "Caroline: The weather was lovely."},
	} {
		in.Metadata = map[string]any{"session": "session_1"}
		if _, err := s.Put(ctx, in, Source{Source: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	base := SearchOptions{SpeakerPrior: 0.02, QuestionPenalty: -1, Context: -1}
	for _, tc := range []struct {
		name, query string
		lead        string  // the best hit
		rise        float64 // SpeakerLead 0.3 over SpeakerLead off, for each named hit
		before      [2]string
	}{
		{"the best hit is the named speaker's: the prior rises", "What has Melanie painted at the lake at dawn?", "m1", 0.3 / 0.02, [2]string{"m2", "c1"}},
		{"the best hit is another speaker's: it stays", "What did Melanie say about the pride parade?", "c2", 1, [2]string{}},
		{"a when-question: it stays", "When did Melanie paint at the lake at dawn?", "m1", 1, [2]string{"c1", "m2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			off, on := base, base
			off.SpeakerLead, on.SpeakerLead = -1, 0.3
			r0, err := s.Search(ctx, tc.query, off)
			if err != nil {
				t.Fatal(err)
			}
			r1, err := s.Search(ctx, tc.query, on)
			if err != nil {
				t.Fatal(err)
			}
			if len(r1.Hits) == 0 || r1.Hits[0].Record.Key != tc.lead || r0.Hits[0].Record.Key != tc.lead {
				t.Fatalf("rankings %v / %v, want %s first", keys(r0), keys(r1), tc.lead)
			}
			speaker := map[string]float64{}
			for _, h := range r0.Hits {
				speaker[h.Record.Key] = h.Speaker
			}
			n := 0
			for _, h := range r1.Hits {
				if !strings.HasPrefix(h.Record.Text, "Melanie:") {
					if h.Speaker != 0 {
						t.Errorf("hit %s got the prior: %q", h.Record.Key, h.Record.Text)
					}
					continue
				}
				n++
				if got := h.Speaker / speaker[h.Record.Key]; math.Abs(got-tc.rise) > 1e-9 {
					t.Errorf("hit %s: prior %g with the lead, %g without (ratio %g, want %g)", h.Record.Key, h.Speaker, speaker[h.Record.Key], got, tc.rise)
				}
			}
			if n == 0 {
				t.Fatalf("no hit of Melanie's in %v", keys(r1))
			}
			if got := keys(r1); tc.before[0] != "" && slices.Index(got, tc.before[0]) > slices.Index(got, tc.before[1]) {
				t.Errorf("ranking %v, want %s before %s", got, tc.before[0], tc.before[1])
			}
			if got := keys(r0); tc.rise != 1 && slices.Index(got, tc.before[1]) > slices.Index(got, tc.before[0]) {
				t.Errorf("ranking without the rise %v, want %s before %s", got, tc.before[1], tc.before[0])
			}
		})
	}
	// The default search rises to DefaultSpeakerLead: the best hit's prior is
	// that share of its own score before the prior.
	def, err := s.Search(ctx, "What has Melanie painted at the lake at dawn?", SearchOptions{QuestionPenalty: -1, Context: -1})
	if err != nil {
		t.Fatal(err)
	}
	if h := def.Hits[0]; h.Record.Key != "m1" || math.Abs(h.Speaker-DefaultSpeakerLead*(h.Score-h.Speaker)) > 1e-9 {
		t.Errorf("default: first hit %s, prior %g of score %g, want %g of the score before it", h.Record.Key, h.Speaker, h.Score, DefaultSpeakerLead)
	}
}
