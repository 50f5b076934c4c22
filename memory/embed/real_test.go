package embed_test

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/exocortex/exocortex/memory/embed"
)

// realFile is the converted GloVe file (scripts/fetch-glove.sh), from this package.
const realFile = "../../data/glove-100d.bin"

func loadReal(tb testing.TB) *embed.GloVe {
	tb.Helper()
	if _, err := os.Stat(realFile); err != nil {
		tb.Skipf("skipping: %s not found (run scripts/fetch-glove.sh or make glove)", realFile)
	}
	g, err := embed.LoadGloVe(realFile, embed.GloVeConfig{})
	if err != nil {
		tb.Fatal(err)
	}
	return g
}

// TestRealGloVe checks the downloaded vectors behave as sentence embeddings should:
// the file is in frequency order and paraphrases beat unrelated sentences.
func TestRealGloVe(t *testing.T) {
	g := loadReal(t)
	wv, _ := embed.ReadWordVectors(realFile)
	for i, w := range []string{"the", ",", ".", "of", "to", "and", "in"} {
		if wv.Words[i] != w {
			t.Errorf("word %d is %q, want %q: the file is not in frequency order", i, wv.Words[i], w)
		}
	}
	the, _ := g.Weight("the")
	rare, _ := g.Weight("photosynthesis")
	if the >= rare {
		t.Errorf("weight(the) %v >= weight(photosynthesis) %v", the, rare)
	}
	for _, tc := range []struct{ a, b, c string }{
		{"The cat sat on the mat.", "A kitten was resting on the rug.", "Stock markets fell sharply on Monday."},
		{"How do I reset my password?", "I forgot my login credentials.", "The recipe needs two cups of flour."},
		{"The meeting is moved to Friday afternoon.", "We rescheduled the meeting for Friday.", "Photosynthesis converts light into chemical energy."},
	} {
		vs, _ := g.Embed(context.Background(), []string{tc.a, tc.b, tc.c})
		if ab, ac := cosine(vs[0], vs[1]), cosine(vs[0], vs[2]); ab <= ac {
			t.Errorf("%q: paraphrase %.3f <= unrelated %.3f", tc.a, ab, ac)
		}
	}
}

// BenchmarkLoadGloVe measures reading and indexing the 341k-word file.
//
//	go test ./memory/embed -run '^$' -bench 'LoadGloVe|EmbedGloVe'
func BenchmarkLoadGloVe(b *testing.B) {
	loadReal(b)
	for b.Loop() {
		if _, err := embed.LoadGloVe(realFile, embed.GloVeConfig{}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEmbedGloVe embeds memory-sized texts (~25 words) on one goroutine.
func BenchmarkEmbedGloVe(b *testing.B) {
	g := loadReal(b)
	texts := make([]string, 256)
	for i := range texts {
		texts[i] = fmt.Sprintf("Note %d: the user prefers short answers, runs Debian on a laptop, and asked about configuring the Ollama embedding model for long-term memory recall.", i)
	}
	b.ResetTimer()
	start := time.Now()
	n := 0
	for b.Loop() {
		if _, err := g.Embed(context.Background(), texts); err != nil {
			b.Fatal(err)
		}
		n += len(texts)
	}
	b.ReportMetric(float64(n)/time.Since(start).Seconds(), "texts/s")
}
