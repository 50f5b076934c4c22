package memory

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/memory/embed"
)

func TestIndexText(t *testing.T) {
	for _, tc := range []struct {
		name string
		rec  Record
		want string
	}{
		{"no metadata", Record{Text: "hello"}, "hello"},
		{"session date", Record{Text: "hello", Metadata: map[string]any{"when": "8 May, 2023", "session": "s1"}}, "hello\n8 May, 2023"},
		{"date and when", Record{Text: "x", Metadata: map[string]any{"date": "2024-01-02", "when": "noon"}}, "x\nnoon\n2024-01-02"},
		{"non-string and blank values", Record{Text: "x", Metadata: map[string]any{"when": 5, "date": "  "}}, "x"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := indexText(&tc.rec); got != tc.want {
				t.Errorf("indexText = %q, want %q", got, tc.want)
			}
		})
	}
}

func TestNeighbours(t *testing.T) {
	s := openStore(t, t.TempDir(), Options{})
	ctx := context.Background()
	put := func(id, area, session string) {
		t.Helper()
		in := Input{ID: id, Area: area, Text: "turn " + id}
		if session != "" {
			in.Metadata = map[string]any{"session": session}
		}
		if _, err := s.Put(ctx, in, Source{Source: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	put("a1", "main", "s1")
	put("a2", "main", "s1")
	put("x", "solutions", "s1") // another area: stepped over
	put("a3", "main", "s1")
	put("a4", "main", "s1")
	put("b1", "main", "s2") // another session: a boundary
	put("b2", "main", "s2")
	if err := s.Delete(ctx, "a4", "test", Source{Source: "test"}); err != nil {
		t.Fatal(err)
	}
	s.mu.RLock()
	s.ord.ensure(s.state)
	s.mu.RUnlock()
	put("b3", "main", "s2") // created after the order was built
	put("n1", "main", "")   // notes outside any exchange stand alone
	put("n2", "main", "")
	for _, tc := range []struct {
		id            string
		w             int
		before, after []string
	}{
		{"a1", 2, nil, []string{"a2", "a3"}},
		{"a2", 1, []string{"a1"}, []string{"a3"}},
		{"a3", 2, []string{"a2", "a1"}, nil}, // a4 deleted, b1 in another session
		{"b1", 2, nil, []string{"b2", "b3"}},
		{"b3", 3, []string{"b2", "b1"}, nil},
		{"x", 2, nil, nil},
		{"n1", 2, nil, nil},
		{"n2", 2, nil, nil},
		{"missing", 2, nil, nil},
	} {
		s.mu.RLock()
		before, after := s.ord.neighbours(s.state, tc.id, tc.w)
		s.mu.RUnlock()
		if !slices.Equal(before, tc.before) || !slices.Equal(after, tc.after) {
			t.Errorf("neighbours(%s, %d) = %v, %v; want %v, %v", tc.id, tc.w, before, after, tc.before, tc.after)
		}
	}
}

func TestContextLiftsTheAnswerTurn(t *testing.T) {
	s := openStore(t, t.TempDir(), Options{})
	ctx := context.Background()
	turns := []string{
		"Ana: Which market will you sell the mugs at?",
		"Ben: The one by the old railway station.",
		"Ana: Lovely weather today.",
		"Ben: I repaired the bicycle chain.",
	}
	for i, txt := range turns {
		if _, err := s.Put(ctx, Input{Key: string(rune('a' + i)), Text: txt, Metadata: map[string]any{"session": "s"}}, Source{Source: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	// "railway" is in the answer only; "market" and "mugs" only in the
	// question before it: without context the answer ranks below the question
	// turn only by chance of scores, with it the answer gets the question's score.
	q := "which market sells mugs"
	without, err := s.Search(ctx, q, SearchOptions{Context: -1})
	if err != nil {
		t.Fatal(err)
	}
	with, err := s.Search(ctx, q, SearchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if slices.Contains(keys(without), "b") {
		t.Fatalf("without context the answer matched no word and should not be found: %v", keys(without))
	}
	got := keys(with)
	if len(got) < 2 || !slices.Contains(got[:2], "b") {
		t.Fatalf("with context the answer should be in the top two: %v", got)
	}
	for _, h := range with.Hits {
		if h.Record.Key == "b" && (h.Context <= 0 || !strings.Contains(h.Why(), "from the records around it")) {
			t.Errorf("the answer's hit does not say it came from its neighbours: %+v %q", h, h.Why())
		}
	}
}

// TestReplyTakesTheQuestionsWords: the answer right after a question ranks
// first by the question's words with the reply lift, and below the question
// without it; a turn after a statement gets no lift.
func TestReplyTakesTheQuestionsWords(t *testing.T) {
	for _, tc := range []struct {
		name  string
		turns []string
		reply float64
		first string // key of the best hit
	}{
		{"answer after a question, lifted", []string{
			"Ana: Got any tips for getting started with adoption?",
			"Ben: Yep! Do your research and find an agency or a lawyer.",
			"Ana: Thanks, that helps.",
		}, 0, "b"},
		{"answer after a question with a photo, lifted", []string{
			"Ana: Got any tips for getting started with adoption? [image: a photo of a form]",
			"Ben: Yep! Do your research and find an agency or a lawyer.",
			"Ana: Thanks, that helps.",
		}, 0, "b"},
		{"lift off: the question itself ranks first", []string{
			"Ana: Got any tips for getting started with adoption?",
			"Ben: Yep! Do your research and find an agency or a lawyer.",
			"Ana: Thanks, that helps.",
		}, -1, "a"},
		{"after a statement: no lift", []string{
			"Ana: I got tips for getting started with adoption.",
			"Ben: Yep! Do your research and find an agency or a lawyer.",
			"Ana: Thanks, that helps.",
		}, 0, "a"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openStore(t, t.TempDir(), Options{})
			ctx := context.Background()
			for i, txt := range tc.turns {
				if _, err := s.Put(ctx, Input{Key: string(rune('a' + i)), Text: txt, Metadata: map[string]any{"session": "s"}}, Source{Source: "test"}); err != nil {
					t.Fatal(err)
				}
			}
			res, err := s.Search(ctx, "tips for getting started with adoption", SearchOptions{ContextReply: tc.reply})
			if err != nil {
				t.Fatal(err)
			}
			if got := keys(res); len(got) == 0 || got[0] != tc.first {
				t.Fatalf("ranking %v, want %q first", got, tc.first)
			}
		})
	}
}

func keys(res Result) []string {
	var out []string
	for _, h := range res.Hits {
		out = append(out, h.Record.Key)
	}
	return out
}

// conversationFixture is memory/testdata/conversation.json: a conversation
// written for the tests, with questions and the turns that answer them.
type conversationFixture struct {
	Sessions []struct {
		Session string     `json:"session"`
		When    string     `json:"when"`
		Turns   [][]string `json:"turns"`
	} `json:"sessions"`
	Questions []struct {
		Q        string   `json:"q"`
		Evidence []string `json:"evidence"`
	} `json:"questions"`
}

func loadConversation(t *testing.T, s *Store) conversationFixture {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "conversation.json"))
	if err != nil {
		t.Fatal(err)
	}
	var fx conversationFixture
	if err := json.Unmarshal(b, &fx); err != nil {
		t.Fatal(err)
	}
	var ins []Input
	for _, ss := range fx.Sessions {
		for _, turn := range ss.Turns {
			ins = append(ins, Input{Key: turn[0], Text: turn[1], Metadata: map[string]any{"session": ss.Session, "when": ss.When}})
		}
	}
	if _, err := s.PutBatch(context.Background(), ins, Source{Source: "test"}); err != nil {
		t.Fatal(err)
	}
	return fx
}

// recallAt is the mean share of each question's evidence among the top k.
func recallAt(t *testing.T, s *Store, fx conversationFixture, k int, o SearchOptions) float64 {
	t.Helper()
	total := 0.0
	for _, q := range fx.Questions {
		o.Limit = k
		res, err := s.Search(context.Background(), q.Q, o)
		if err != nil {
			t.Fatal(err)
		}
		got := keys(res)
		found := 0
		for _, e := range q.Evidence {
			if slices.Contains(got, e) {
				found++
			}
		}
		total += float64(found) / float64(len(q.Evidence))
	}
	return total / float64(len(fx.Questions))
}

// fixtureEmbedder is the offline GloVe embedder when its file is there
// (data/glove-100d.bin or EXOCORTEX_GLOVE), else the test's hashed embedder.
func fixtureEmbedder(t *testing.T) Embedder {
	path := os.Getenv(embed.GloVeEnv)
	if path == "" {
		path = filepath.Join("..", "data", embed.GloVeFile)
	}
	g, err := embed.LoadGloVe(path, embed.GloVeConfig{})
	if err != nil {
		t.Logf("no GloVe vectors at %s (%v): the vector leg is the test's hashed embedder", path, err)
		return newHashEmbedder()
	}
	return g
}

// TestDefaultNotWorseThanBM25 checks on a small conversation of our own that the
// default search (hybrid, with neighbour context) finds at least as much of the
// evidence as BM25 alone at 5 (the fixture's 30 turns make 10 trivial), and at
// 3 more than BM25 without context. At 1 and 3 the comparison with BM25 is
// logged only: the GloVe leg moves one question's answer to second place, and
// the word-similarity re-rank lifts "A grey cat mug it is." (mug, like the
// question's mugs) above the answer turn of "Where will Bruno sell his mugs?"
// at 3 — one evidence turn of this fixture's 14 questions, where on the
// LoCoMo dev conversations the re-rank lifts every category
// (docs/perf/memory.md).
func TestDefaultNotWorseThanBM25(t *testing.T) {
	emb := fixtureEmbedder(t)
	if _, ok := emb.(*embed.GloVe); !ok {
		// The claim is about the offline default, GloVe; a hashed stand-in is no
		// such embedder and says nothing about it.
		t.Skip("no GloVe vectors (make glove): the default's vector leg cannot be measured")
	}
	s := openStore(t, t.TempDir(), Options{Embedder: emb})
	fx := loadConversation(t, s)
	for _, k := range []int{1, 3, 5, 10} {
		bm25 := recallAt(t, s, fx, k, SearchOptions{Mode: ModeBM25})
		plain := recallAt(t, s, fx, k, SearchOptions{Mode: ModeBM25, Context: -1})
		def := recallAt(t, s, fx, k, SearchOptions{})
		t.Logf("recall@%d: default %.3f, BM25 %.3f, BM25 without context %.3f", k, def, bm25, plain)
		if k >= 5 && def < bm25 {
			t.Errorf("recall@%d: default %.3f < BM25 alone %.3f", k, def, bm25)
		}
		if k == 3 && def <= plain {
			t.Errorf("recall@3: default %.3f does not beat BM25 without context %.3f", def, plain)
		}
	}
}

func TestDefaultWeightsFollowTheEmbedder(t *testing.T) {
	wv := &embed.WordVectors{Dim: 2, Words: []string{"a"}, Vectors: []float32{1, 0}}
	for _, tc := range []struct {
		name   string
		e      Embedder
		vector float64
	}{
		{"none", nil, 1},
		{"unweighted", newHashEmbedder(), 1},
		{"GloVe", embed.NewGloVe(wv, embed.GloVeConfig{}), 0.35},
	} {
		if b, v := DefaultWeights(tc.e); b != 1 || v != tc.vector {
			t.Errorf("%s: weights %v, %v; want 1, %v", tc.name, b, v, tc.vector)
		}
	}
}

// TestVectorWeightsFollowTheConversation checks the vector leg's weight on
// standalone records and on a conversation's, and that SearchOptions.VectorWeight
// sets both.
func TestVectorWeightsFollowTheConversation(t *testing.T) {
	wv := &embed.WordVectors{Dim: 2, Words: []string{"a"}, Vectors: []float32{1, 0}}
	for _, tc := range []struct {
		name        string
		e           Embedder
		o           SearchOptions
		alone, conv float64
	}{
		{"none", nil, SearchOptions{}, 1, 1},
		{"unweighted", newHashEmbedder(), SearchOptions{}, 1, 1},
		{"GloVe", embed.NewGloVe(wv, embed.GloVeConfig{}), SearchOptions{}, 0.35, 0.2},
		{"GloVe, weight set", embed.NewGloVe(wv, embed.GloVeConfig{}), SearchOptions{VectorWeight: 0.5}, 0.5, 0.5},
	} {
		s := &Store{opts: Options{Embedder: tc.e}}
		if b, a, c := s.vectorWeights(tc.o); b != 1 || a != tc.alone || c != tc.conv {
			t.Errorf("%s: weights %v, %v, %v; want 1, %v, %v", tc.name, b, a, c, tc.alone, tc.conv)
		}
	}
	for _, tc := range []struct {
		name string
		r    *Record
		want bool
	}{
		{"nil", nil, false},
		{"standalone", &Record{}, false},
		{"imported conversation", &Record{Metadata: map[string]any{"session": "D1"}}, true},
		{"written in a session", &Record{Provenance: Provenance{Session: "s1"}}, true},
	} {
		if got := inConversation(tc.r); got != tc.want {
			t.Errorf("%s: inConversation %v, want %v", tc.name, got, tc.want)
		}
	}
}

// TestNeighboursFollowChanges checks that the order built before records are
// deleted, archived, moved to another area or created again answers as an order
// built afresh from the changed state (a re-created id keeps its first place).
func TestNeighboursFollowChanges(t *testing.T) {
	ctx := context.Background()
	src := Source{Source: "test"}
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, s *Store)
		id     string
		before []string
		after  []string
	}{
		{"deleted", func(t *testing.T, s *Store) {
			if err := s.Delete(ctx, "t2", "test", src); err != nil {
				t.Fatal(err)
			}
		}, "t3", []string{"t1"}, []string{"t4", "t5"}},
		{"archived", func(t *testing.T, s *Store) {
			if err := s.Archive(ctx, "t4", "", "test", src); err != nil {
				t.Fatal(err)
			}
		}, "t3", []string{"t2", "t1"}, []string{"t5"}},
		{"moved to another area", func(t *testing.T, s *Store) {
			if _, err := s.Put(ctx, Input{ID: "t2", Area: "solutions", Text: "turn t2", Metadata: map[string]any{"session": "s1"}}, src); err != nil {
				t.Fatal(err)
			}
		}, "t3", []string{"t1"}, []string{"t4", "t5"}},
		{"deleted and created again", func(t *testing.T, s *Store) {
			if err := s.Delete(ctx, "t2", "test", src); err != nil {
				t.Fatal(err)
			}
			if _, err := s.Put(ctx, Input{ID: "t2", Area: "main", Text: "turn t2 again", Metadata: map[string]any{"session": "s1"}}, src); err != nil {
				t.Fatal(err)
			}
		}, "t3", []string{"t2", "t1"}, []string{"t4", "t5"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := openStore(t, t.TempDir(), Options{})
			for _, id := range []string{"t1", "t2", "t3", "t4", "t5"} {
				if _, err := s.Put(ctx, Input{ID: id, Area: "main", Text: "turn " + id, Metadata: map[string]any{"session": "s1"}}, src); err != nil {
					t.Fatal(err)
				}
			}
			s.mu.RLock()
			s.ord.ensure(s.state)
			s.mu.RUnlock()
			tc.change(t, s)
			s.mu.RLock()
			defer s.mu.RUnlock()
			before, after := s.ord.neighbours(s.state, tc.id, 2)
			if !slices.Equal(before, tc.before) || !slices.Equal(after, tc.after) {
				t.Errorf("neighbours(%s) = %v, %v; want %v, %v", tc.id, before, after, tc.before, tc.after)
			}
			if tc.name == "deleted and created again" {
				return // a fresh order places the new t2 last
			}
			var fresh order
			fresh.ensure(s.state)
			fb, fa := fresh.neighbours(s.state, tc.id, 2)
			if !slices.Equal(before, fb) || !slices.Equal(after, fa) {
				t.Errorf("kept order %v, %v; fresh order %v, %v", before, after, fb, fa)
			}
		})
	}
}

func TestSpeakerOf(t *testing.T) {
	for _, tc := range []struct{ text, want string }{
		{"Caroline: I went to the parade.", "Caroline"},
		{"Ana Lopez: fine, thanks", "Ana Lopez"},
		{"note: buy milk", ""},               // lower case: a label, not a name
		{"Remember this: the key is 42", ""}, // "this" is not capitalised
		{"A B C D: four words", ""},
		{"no colon at all", ""},
		{": empty name", ""},
		{"Caroline:no space", ""},
	} {
		if got := speakerOf(tc.text); got != tc.want {
			t.Errorf("speakerOf(%q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}

// TestSpeakerBoost checks that SpeakerBoost lifts the turns of the person the
// question names above the other speaker's equally matching turns, and that it
// is off by default.
func TestSpeakerBoost(t *testing.T) {
	s := openStore(t, t.TempDir(), Options{})
	ctx := context.Background()
	turns := []string{
		"Ana: I love hiking in the hills.",
		"Ben: I love hiking by the sea.",
		"Ana: The weather was grey.",
		"Ben: The tide was low.",
	}
	for i, txt := range turns {
		// one session each: no neighbour context between them
		if _, err := s.Put(ctx, Input{Key: string(rune('a' + i)), Text: txt, Metadata: map[string]any{"session": txt}}, Source{Source: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name  string
		query string
		boost float64
		first string
	}{
		{"Ben named, boosted", "where does Ben love hiking", 0.5, "b"},
		{"Ana named, boosted", "where does Ana love hiking", 0.5, "a"},
		{"name in lower case counts", "where does ben love hiking", 0.5, "b"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := s.Search(ctx, tc.query, SearchOptions{Mode: ModeBM25, SpeakerBoost: tc.boost})
			if err != nil {
				t.Fatal(err)
			}
			if got := keys(res); len(got) == 0 || got[0] != tc.first {
				t.Errorf("%q: order %v, want %s first", tc.query, got, tc.first)
			}
		})
	}
	// The boost multiplies the named speaker's scores and leaves the others';
	// without it (the default) nothing is multiplied.
	fusedOf := func(o SearchOptions) map[string]float64 {
		t.Helper()
		res, err := s.Search(ctx, "hiking Ben", o)
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]float64{}
		for _, h := range res.Hits {
			m[h.Record.Key] = h.Fused
		}
		return m
	}
	on, off := fusedOf(SearchOptions{Mode: ModeBM25, SpeakerBoost: 0.5}), fusedOf(SearchOptions{Mode: ModeBM25})
	if math.Abs(on["b"]-1.5*off["b"]) > 1e-9 || on["a"] != off["a"] || off["a"] == 0 {
		t.Errorf("fused with boost %v, without %v: want Ben's turn times 1.5 and Ana's unchanged", on, off)
	}
}

func TestAsksQuestion(t *testing.T) {
	for _, tc := range []struct {
		text string
		want bool
	}{
		{"Melanie: Got any tips for getting started?", true},
		{"Melanie: Got any tips?  ", true},
		{"Caroline: Look at this! What do you think? [image: a photo of a bowl]", true},
		{"Caroline: Here it is. [image: a photo of a bowl?]", false},
		{"Caroline: Is it? I think so.", false},
		{"Caroline: [image: what?] then more", false},
		{"", false},
		{"?", true},
	} {
		if got := asksQuestion(tc.text); got != tc.want {
			t.Errorf("asksQuestion(%q) = %v, want %v", tc.text, got, tc.want)
		}
	}
}
