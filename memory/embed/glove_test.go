package embed_test

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/exocortex/exocortex/memory/embed"
)

func loadFixture(t *testing.T) *embed.WordVectors {
	t.Helper()
	f, err := os.Open("testdata/wink-small.json")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	wv, err := embed.ParseWink(f)
	if err != nil {
		t.Fatal(err)
	}
	return wv
}

func cosine(a, b []float32) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += float64(a[i]) * float64(b[i])
		aa += float64(a[i]) * float64(a[i])
		bb += float64(b[i]) * float64(b[i])
	}
	return ab / math.Sqrt(aa*bb)
}

func TestParseWinkFixture(t *testing.T) {
	wv := loadFixture(t)
	if wv.Len() != 15 || wv.Dim != 4 {
		t.Fatalf("got %d words of %d dimensions, want 15 of 4", wv.Len(), wv.Dim)
	}
	if wv.Words[0] != "the" || wv.Words[14] != "quantum" {
		t.Errorf("word order not kept: %v", wv.Words)
	}
	i, ok := wv.Lookup("kitten")
	if !ok || i != 7 {
		t.Fatalf("Lookup(kitten) = %d, %v; want 7 (its position, i.e. rank 8)", i, ok)
	}
	if v := wv.Vector(i); len(v) != 4 || v[0] < 0.8 {
		t.Errorf("kitten's vector %v, want the animal direction", v)
	}
}

func TestParseWinkRejectsBadInput(t *testing.T) {
	good, err := os.ReadFile("testdata/wink-small.json")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(good)
	for _, tc := range []struct {
		name, from, to, want string
	}{
		{"index out of order", `,0.57003712,0]`, `,0.57003712,3]`, "index"},
		{"short vector", `"cat":[`, `"cat":[1,`, "values"},
		{"wrong norm", `0.57003712`, `0.9`, "norm"},
		{"size mismatch", `"size":15`, `"size":16`, "size"},
		{"missing vector", `"quantum":[`, `"quantux":[`, "no vector"},
		{"layout indexes", `"l2NormIndex":4`, `"l2NormIndex":3`, "l2NormIndex"},
		{"not json", `{"precision"`, `["precision"`, "expected"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := strings.Replace(doc, tc.from, tc.to, 1)
			if bad == doc {
				t.Fatalf("fixture does not contain %q", tc.from)
			}
			_, err := embed.ParseWink(strings.NewReader(bad))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one mentioning %q", err, tc.want)
			}
		})
	}
	for _, n := range []int{0, 10, len(doc) / 2, len(doc) - 1} {
		if _, err := embed.ParseWink(strings.NewReader(doc[:n])); err == nil {
			t.Errorf("JSON truncated to %d bytes: no error", n)
		}
	}
}

func writeFixtureFile(t *testing.T, withPC bool) (string, *embed.WordVectors) {
	t.Helper()
	wv := loadFixture(t)
	if withPC {
		pc, err := embed.CommonComponent(wv, embed.DefaultSIFA, 500, 8, 1)
		if err != nil {
			t.Fatal(err)
		}
		wv.PC = pc
	}
	var buf bytes.Buffer
	if err := embed.WriteWordVectors(&buf, wv); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "glove.bin")
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return path, wv
}

func TestWordVectorFileRoundTrip(t *testing.T) {
	path, wv := writeFixtureFile(t, true)
	back, err := embed.ReadWordVectors(path)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(back.Words, wv.Words) || !slices.Equal(back.Vectors, wv.Vectors) || !slices.Equal(back.PC, wv.PC) || back.Dim != wv.Dim {
		t.Fatal("round trip changed the data")
	}
	if back.Checksum == 0 {
		t.Error("no checksum recorded")
	}
	if i, ok := back.Lookup("mat"); !ok || back.Words[i] != "mat" {
		t.Error("index not rebuilt")
	}
}

func TestWordVectorFileCorrupt(t *testing.T) {
	path, _ := writeFixtureFile(t, true)
	good, _ := os.ReadFile(path)
	dir := t.TempDir()
	cases := map[string][]byte{
		"empty":      {},
		"truncated":  good[:len(good)-3],
		"half":       good[:len(good)/2],
		"extra":      append(slices.Clone(good), 0),
		"not a file": []byte(strings.Repeat("x", 200)),
	}
	for _, pos := range []int{0, 9, 13, 20, 70, 100, len(good) - 10, len(good) - 1} {
		bad := slices.Clone(good)
		bad[pos] ^= 0x10
		cases["flip "+string(rune('a'+pos%26))+string(rune('0'+pos%10))] = bad
	}
	for name, data := range cases {
		p := filepath.Join(dir, "bad.bin")
		os.WriteFile(p, data, 0o644)
		_, err := embed.ReadWordVectors(p)
		if !errors.Is(err, embed.ErrCorruptVectors) {
			t.Errorf("%s: error %v, want ErrCorruptVectors", name, err)
		} else if !strings.Contains(err.Error(), "fetch-glove") {
			t.Errorf("%s: error does not say how to recover: %v", name, err)
		}
	}
	_, err := embed.ReadWordVectors(filepath.Join(dir, "absent.bin"))
	if err == nil || !strings.Contains(err.Error(), "fetch-glove.sh") {
		t.Errorf("missing file: %v", err)
	}
}

func TestSIFWeights(t *testing.T) {
	w := embed.SIFWeights(341479, embed.DefaultSIFA)
	// Rank 1 ("the") weighs little, a rank-10,000 word nearly 1.
	if w[0] > 0.05 || w[9999] < 0.9 {
		t.Errorf("weights: rank 1 %.4f, rank 10000 %.4f", w[0], w[9999])
	}
	for i := 1; i < len(w); i++ {
		if w[i] < w[i-1] {
			t.Fatalf("weight decreases with rarity at rank %d", i+1)
		}
	}
	g := embed.NewGloVe(loadFixture(t), embed.GloVeConfig{})
	the, _ := g.Weight("the")
	quantum, _ := g.Weight("quantum")
	if !(quantum > the) {
		t.Errorf("rare word weighs %v, frequent word %v: want rare > frequent", quantum, the)
	}
	if _, ok := g.Weight("zebra"); ok {
		t.Error("unknown word has a weight")
	}
}

// TestSIFFavoursContentWords: a text of four function words and "cat" lands nearer
// to "cat" with SIF weights than a plain average does.
func TestSIFFavoursContentWords(t *testing.T) {
	wv := loadFixture(t)
	g := embed.NewGloVe(wv, embed.GloVeConfig{SIFA: 0.05})
	text := "The, of and a cat"
	v, known := g.EmbedText(text)
	if !known {
		t.Fatal("no known word found")
	}
	plain := make([]float32, wv.Dim)
	for _, tok := range embed.Tokenize(text) {
		i, _ := wv.Lookup(tok)
		for j, x := range wv.Vector(i) {
			plain[j] += x
		}
	}
	ci, _ := wv.Lookup("cat")
	cat := wv.Vector(ci)
	if s, p := cosine(v, cat), cosine(plain, cat); s <= p {
		t.Errorf("cos to cat: SIF %.4f, plain average %.4f; want SIF higher", s, p)
	}
	// Related texts are nearer than unrelated ones.
	a, _ := g.EmbedText("the cat and a kitten")
	b, _ := g.EmbedText("a dog, a puppy")
	c, _ := g.EmbedText("the market: stocks fell")
	if cosine(a, b) <= cosine(a, c) {
		t.Errorf("cat/dog %.3f should beat cat/stocks %.3f", cosine(a, b), cosine(a, c))
	}
}

func TestCommonComponentRemoved(t *testing.T) {
	path, wv := writeFixtureFile(t, true)
	g, err := embed.LoadGloVe(path, embed.GloVeConfig{})
	if err != nil {
		t.Fatal(err)
	}
	keep, _ := embed.LoadGloVe(path, embed.GloVeConfig{KeepCommonComponent: true})
	if g.ModelID() == keep.ModelID() {
		t.Error("model id does not reflect the common-component setting")
	}
	var norm float64
	for _, x := range wv.PC {
		norm += float64(x) * float64(x)
	}
	if math.Abs(norm-1) > 1e-4 {
		t.Fatalf("common component has norm² %v", norm)
	}
	v, _ := g.EmbedText("the dog fell on the mat")
	if p := cosine(v, wv.PC); math.Abs(p) > 1e-4 {
		t.Errorf("embedding keeps %.4f of the common component", p)
	}
}

func TestEmbedBasics(t *testing.T) {
	path, _ := writeFixtureFile(t, false)
	g, err := embed.LoadGloVe(path, embed.GloVeConfig{})
	if err != nil {
		t.Fatal(err)
	}
	var _ embed.Embedder = g
	if g.Dimensions() != 4 || !strings.HasPrefix(g.ModelID(), "glove-4d-sif:v1:") {
		t.Fatalf("Dimensions %d, ModelID %q", g.Dimensions(), g.ModelID())
	}
	texts := []string{"The CAT sat.", "", "zebra xylophone", "zebra xylophone", "42", "!!!", "kitten"}
	vs, err := g.Embed(context.Background(), texts)
	if err != nil || len(vs) != len(texts) {
		t.Fatalf("Embed: %v, %d vectors", err, len(vs))
	}
	for i, v := range vs {
		if len(v) != 4 {
			t.Fatalf("text %d: %d dimensions", i, len(v))
		}
		var ss float64
		for _, x := range v {
			ss += float64(x) * float64(x)
		}
		if math.Abs(ss-1) > 1e-5 {
			t.Errorf("text %q: norm² %v, want 1", texts[i], ss)
		}
	}
	if !slices.Equal(vs[2], vs[3]) {
		t.Error("equal unknown texts got different fallback vectors")
	}
	if slices.Equal(vs[1], vs[2]) || slices.Equal(vs[1], vs[5]) || slices.Equal(vs[4], vs[2]) {
		t.Error("different unknown texts share a fallback vector")
	}
	if _, known := g.EmbedText("zebra xylophone"); known {
		t.Error("unknown words reported as known")
	}
	again, _ := g.Embed(context.Background(), texts[:1])
	if !slices.Equal(again[0], vs[0]) {
		t.Error("embedding is not deterministic")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := g.Embed(ctx, texts); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}
}

func TestTokenize(t *testing.T) {
	got := embed.Tokenize("Hello, WORLD! naïve Café 42x don't   ΣΑΣ")
	want := []string{"hello", "world", "naïve", "café", "42x", "don", "t", "σασ"}
	if !slices.Equal(got, want) {
		t.Errorf("Tokenize = %q, want %q", got, want)
	}
}

func TestEmbedConcurrent(t *testing.T) {
	g := embed.NewGloVe(loadFixture(t), embed.GloVeConfig{})
	want, _ := g.EmbedText("a cat on the mat")
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 200 {
				vs, err := g.Embed(context.Background(), []string{"a cat on the mat", "stocks fell"})
				if err != nil || !slices.Equal(vs[0], want) {
					t.Error("concurrent Embed disagrees")
					return
				}
			}
		})
	}
	wg.Wait()
}
