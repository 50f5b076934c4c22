package embed_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/exocortex/exocortex/internal/procstat"
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
	start := procstat.CPUTime()
	for b.Loop() {
		if _, err := embed.LoadGloVe(realFile, embed.GloVeConfig{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(procstat.CPUTime()-start)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

// BenchmarkEmbedGloVe embeds memory-sized texts (~25 words) on one goroutine.
func BenchmarkEmbedGloVe(b *testing.B) { benchmarkEmbed(b, loadReal(b)) }

// BenchmarkEmbedBuiltin is BenchmarkEmbedGloVe on the built-in table (its int8
// values read in place).
func BenchmarkEmbedBuiltin(b *testing.B) {
	g, err := embed.LoadBuiltin(embed.GloVeConfig{})
	if err != nil {
		b.Fatal(err)
	}
	benchmarkEmbed(b, g)
}

func benchmarkEmbed(b *testing.B, g *embed.GloVe) {
	texts := make([]string, 256)
	for i := range texts {
		texts[i] = fmt.Sprintf("Note %d: the user prefers short answers, runs Debian on a laptop, and asked about configuring the Ollama embedding model for long-term memory recall.", i)
	}
	b.ResetTimer()
	start, cpu := time.Now(), procstat.CPUTime()
	n := 0
	for b.Loop() {
		if _, err := g.Embed(context.Background(), texts); err != nil {
			b.Fatal(err)
		}
		n += len(texts)
	}
	b.ReportMetric(float64(n)/time.Since(start).Seconds(), "texts/s")
	// CPU time per text is steadier than the rate on a loaded machine.
	b.ReportMetric(float64(procstat.CPUTime()-cpu)/float64(time.Microsecond)/float64(n), "cpu-µs/text")
}

// tripleAccuracy embeds each (anchor, paraphrase, distractor) line of
// testdata/triples.tsv and counts how often the paraphrase is nearer.
func tripleAccuracy(tb testing.TB, e embed.Embedder) float64 {
	data, err := os.ReadFile("testdata/triples.tsv")
	if err != nil {
		tb.Fatal(err)
	}
	var right, total int
	for _, line := range strings.Split(string(data), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 3 || strings.HasPrefix(line, "#") {
			continue
		}
		vs, err := e.Embed(context.Background(), f)
		if err != nil {
			tb.Fatal(err)
		}
		if cosine(vs[0], vs[1]) > cosine(vs[0], vs[2]) {
			right++
		}
		total++
	}
	return float64(right) / float64(total)
}

// TestRealGloVeTriples compares the weighting schemes on 40 hand-written triples
// whose distractor shares words with the anchor. SIF must beat the plain average.
func TestRealGloVeTriples(t *testing.T) {
	loadReal(t)
	wv, _ := embed.ReadWordVectors(realFile)
	plain := embed.NewGloVe(wv, embed.GloVeConfig{SIFA: 1e9, KeepCommonComponent: true}) // a -> inf: all weights 1
	sif := embed.NewGloVe(wv, embed.GloVeConfig{KeepCommonComponent: true})
	sifPC := embed.NewGloVe(wv, embed.GloVeConfig{})
	p, s, sp := tripleAccuracy(t, plain), tripleAccuracy(t, sif), tripleAccuracy(t, sifPC)
	t.Logf("paraphrase nearer than distractor: plain average %.3f, SIF %.3f, SIF + common component removed %.3f", p, s, sp)
	if s <= p {
		t.Errorf("SIF %.3f does not beat the plain average %.3f", s, p)
	}
}
