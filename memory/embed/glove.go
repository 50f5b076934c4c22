package embed

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"math/rand/v2"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// DefaultSIFA is the smoothing parameter a in the SIF weight a/(a+p(w)); Arora et
// al. found 1e-3 to 1e-4 best across tasks.
const DefaultSIFA = 1e-3

// GloVeConfig tunes the GloVe embedder. The zero value is the default.
type GloVeConfig struct {
	// SIFA is a in the weight a/(a+p(w)); 0 means DefaultSIFA.
	SIFA float64
	// KeepCommonComponent turns off the removal of the principal component stored
	// in the file (the direction that all sentence vectors share).
	KeepCommonComponent bool
	// PlainMean weighs every known word the same (no SIF weights), the baseline
	// SIF is measured against.
	PlainMean bool
}

// GloVe is an offline sentence embedder: the SIF-weighted average of the GloVe
// vectors of a text's words, minus its projection on the common component, scaled
// to unit length.
//
// Tokens are the maximal runs of letters and digits, lowercased. Words outside the
// vocabulary are skipped. A text with no known word (empty, numbers the vocabulary
// lacks, another script) gets a fallback vector: a pseudo-random unit vector seeded
// by a hash of its lowercased tokens, so it is never zero, equal texts get equal
// vectors, and different unknown texts are nearly orthogonal to each other and to
// real sentences. Callers that need to know use EmbedText.
//
// A GloVe is read-only after construction and safe for concurrent use.
type GloVe struct {
	wv     *WordVectors
	h      float64   // H(source words): word i's SIF weight is a/(a+1/((i+1)·h))
	plain  bool      // every weight 1 (GloVeConfig.PlainMean)
	pc     []float32 // nil when not removed
	a      float64
	id     string
	source string   // the file's path, or BuiltinSource
	sim    *similar // nearest words, for query expansion
}

// LoadGloVe opens a word-vector file (see scripts/fetch-glove.sh) in place
// (OpenWordVectors: mapped, through its word index) and returns the embedder.
func LoadGloVe(path string, cfg GloVeConfig) (*GloVe, error) {
	wv, err := OpenWordVectors(path)
	if err != nil {
		return nil, err
	}
	g := NewGloVe(wv, cfg)
	g.source = path
	return g, nil
}

// NewGloVe returns an embedder over wv, whose words must be in descending frequency
// order (the frequency rank estimates p(w), among wv.SourceWords words when the
// table is the most frequent part of a larger vocabulary).
func NewGloVe(wv *WordVectors, cfg GloVeConfig) *GloVe {
	a := cfg.SIFA
	if a <= 0 {
		a = DefaultSIFA
	}
	// The weights are computed when a word is looked up, from H stored in the
	// word index (or summed here for a table in memory): the same float32 values
	// a table of weights made at load would hold, without making one.
	g := &GloVe{wv: wv, h: wv.harmonic(), plain: cfg.PlainMean, a: a, sim: &similar{}}
	kind := "sif"
	if cfg.PlainMean {
		kind = "mean"
	}
	pcTag := "pc0"
	if !cfg.KeepCommonComponent && wv.PC != nil {
		g.pc = wv.PC
		pcTag = "pc1"
	}
	g.id = fmt.Sprintf("glove-%dd-%s:v1:a=%g:%s:%08x", wv.Dim, kind, a, pcTag, wv.Checksum)
	if wv.QuantBits > 0 {
		// Another table (and other vectors) than the full file's: a store moving
		// between the two re-embeds its records.
		g.id = fmt.Sprintf("glove-%dd-%s:v1:a=%g:%s:compact-%dw-int%d:%08x", wv.Dim, kind, a, pcTag, wv.Len(), wv.QuantBits, wv.Checksum)
	}
	return g
}

// Source is where the vectors came from: the file's path, or BuiltinSource for
// the table compiled into the binary ("" when made by NewGloVe).
func (g *GloVe) Source() string { return g.source }

// Words is the vocabulary size.
func (g *GloVe) Words() int { return g.wv.Len() }

// Compact reports whether the vectors are a quantised compact table.
func (g *GloVe) Compact() bool { return g.wv.QuantBits > 0 }

// SIFWeights returns a/(a+p(r)) for ranks 1..n, with p(r) from Zipf's law fitted to
// a vocabulary of n words: p(r) = 1/(r·H(n)), H(n) the n-th harmonic number. The
// vocabulary only gives ranks, not counts, and word frequencies in large corpora
// follow Zipf's law closely for all but the very top ranks.
func SIFWeights(n int, a float64) []float32 { return sifWeights(n, n, a) }

// sifWeights returns the weights of ranks 1..n in a vocabulary of total words.
func sifWeights(n, total int, a float64) []float32 {
	h := harmonic(total)
	w := make([]float32, n)
	for i := range w {
		w[i] = sifWeight(i, h, a)
	}
	return w
}

// sifWeight is the weight of the word of rank i+1 among words whose harmonic
// number is h.
func sifWeight(i int, h, a float64) float32 {
	p := 1 / (float64(i+1) * h)
	return float32(a / (a + p))
}

// weight is word i's weight.
func (g *GloVe) weight(i int) float32 {
	if g.plain {
		return 1
	}
	return sifWeight(i, g.h, g.a)
}

// Dimensions is the word-vector length (100 for the default file).
func (g *GloVe) Dimensions() int { return g.wv.Dim }

// ModelID names the vectors file (by checksum) and the SIF settings.
func (g *GloVe) ModelID() string { return g.id }

// Weight returns the SIF weight of a word, and whether it is in the vocabulary.
func (g *GloVe) Weight(word string) (float32, bool) {
	i, ok := g.wv.Lookup(word)
	if !ok {
		return 0, false
	}
	return g.weight(i), true
}

// Embed embeds each text; it never fails on content, only on a cancelled context.
func (g *GloVe) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("glove embed: %w", err)
			}
		}
		out[i], _ = g.EmbedText(t)
	}
	return out, nil
}

// EmbedText embeds one text and reports whether any of its words was known (false
// means the vector is the hashed fallback).
func (g *GloVe) EmbedText(text string) ([]float32, bool) {
	dim := g.wv.Dim
	v := make([]float32, dim)
	known := 0
	forEachToken(text, func(tok string) {
		i, ok := g.wv.Lookup(tok)
		if !ok {
			return
		}
		known++
		g.wv.addRow(i, g.weight(i), v)
	})
	if known > 0 {
		if g.pc != nil {
			var p float32
			for j := range v {
				p += v[j] * g.pc[j]
			}
			for j := range v {
				v[j] -= p * g.pc[j]
			}
		}
		if normalise(v) {
			return v, true
		}
	}
	return fallback(text, dim), false
}

// Tokenize splits text into lowercased runs of letters and digits.
func Tokenize(text string) []string {
	var out []string
	forEachToken(text, func(t string) { out = append(out, t) })
	return out
}

func forEachToken(text string, fn func(string)) {
	isWord := func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
	var b strings.Builder
	for start := 0; start < len(text); {
		r, size := utf8.DecodeRuneInString(text[start:])
		if !isWord(r) {
			start += size
			continue
		}
		end := start
		lower := true
		for end < len(text) {
			r, sz := utf8.DecodeRuneInString(text[end:])
			if !isWord(r) {
				break
			}
			if unicode.ToLower(r) != r {
				lower = false
			}
			end += sz
		}
		if lower {
			fn(text[start:end])
		} else {
			b.Reset()
			for _, r := range text[start:end] {
				b.WriteRune(unicode.ToLower(r))
			}
			fn(b.String())
		}
		start = end
	}
}

func normalise(v []float32) bool {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	if ss == 0 || math.IsNaN(ss) || math.IsInf(ss, 0) {
		return false
	}
	inv := float32(1 / math.Sqrt(ss))
	for i := range v {
		v[i] *= inv
	}
	return true
}

// fallback is the vector of a text with no known word: deterministic, unit length,
// seeded by the FNV-1a hash of its lowercased tokens (or of the raw text if it has
// none, so "" and "!!!" differ).
func fallback(text string, dim int) []float32 {
	h := fnv.New64a()
	toks := 0
	forEachToken(text, func(t string) {
		h.Write([]byte(t))
		h.Write([]byte{0})
		toks++
	})
	if toks == 0 {
		h.Write([]byte{1})
		h.Write([]byte(text))
	}
	s := h.Sum64()
	r := rand.New(rand.NewPCG(s, s^0x9e3779b97f4a7c15))
	v := make([]float32, dim)
	for {
		for i := range v {
			v[i] = float32(r.NormFloat64())
		}
		if normalise(v) {
			return v
		}
	}
}

// CommonComponent estimates the first principal component of SIF sentence vectors,
// as Arora et al. remove it, over `samples` pseudo-sentences of `length` words drawn
// by Zipf's law from the vocabulary (there is no corpus in the file). It uses power
// iteration on the uncentred second-moment matrix and returns a unit vector.
func CommonComponent(wv *WordVectors, a float64, samples, length int, seed uint64) ([]float32, error) {
	n, dim := wv.Len(), wv.Dim
	if n == 0 || samples <= 0 || length <= 0 {
		return nil, errors.New("common component: empty vocabulary or sample")
	}
	weights := SIFWeights(n, a)
	cum := make([]float64, n)
	var total float64
	for i := range cum {
		total += 1 / float64(i+1)
		cum[i] = total
	}
	r := rand.New(rand.NewPCG(seed, 7))
	sent := make([][]float32, samples)
	for s := range sent {
		v := make([]float64, dim)
		for range length {
			i := sort.SearchFloat64s(cum, r.Float64()*total)
			i = min(i, n-1)
			w := float64(weights[i])
			for j, x := range wv.Vector(i) {
				v[j] += w * float64(x)
			}
		}
		f := make([]float32, dim)
		for j := range v {
			f[j] = float32(v[j] / float64(length))
		}
		sent[s] = f
	}
	// Power iteration: u <- S^T S u, normalised.
	u := make([]float64, dim)
	for j := range u {
		u[j] = 1 / math.Sqrt(float64(dim))
	}
	next := make([]float64, dim)
	for range 100 {
		clear(next)
		for _, s := range sent {
			var p float64
			for j, x := range s {
				p += float64(x) * u[j]
			}
			for j, x := range s {
				next[j] += p * float64(x)
			}
		}
		var ss float64
		for _, x := range next {
			ss += x * x
		}
		if ss == 0 {
			return nil, errors.New("common component: sample vectors are all zero")
		}
		inv := 1 / math.Sqrt(ss)
		var delta float64
		for j := range u {
			x := next[j] * inv
			delta += (x - u[j]) * (x - u[j])
			u[j] = x
		}
		if delta < 1e-14 {
			break
		}
	}
	pc := make([]float32, dim)
	for j := range pc {
		pc[j] = float32(u[j])
	}
	return pc, nil
}

// Vectors returns the word vectors the embedder averages.
func (g *GloVe) Vectors() *WordVectors { return g.wv }

// RecallWeight is how much the store's fusion weighs these vectors beside BM25
// (1): averaged word vectors are a weak retriever on their own, and weighed
// equally they pull the ranking down. 0.35 is as good as 0.2 on the LoCoMo dev
// conversations (tuned on conv-26 and conv-30, checked on the other three) and
// lets the vectors tell apart records that BM25 scores alike, which the
// generated set needs (docs/perf/memory.md).
func (g *GloVe) RecallWeight() float64 { return 0.35 }

// ConversationRecallWeight is the vectors' weight on the records of a
// conversation (a session), where the neighbours' context already carries BM25
// to the answer: 0.2, with the word re-rank at 0.4, keeps every LoCoMo category
// at or above BM25 alone with the built-in table (0.35 put open-domain below
// it; docs/perf/memory.md, "Fifth pass").
func (g *GloVe) ConversationRecallWeight() float64 { return 0.2 }
