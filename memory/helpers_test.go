package memory

import (
	"context"
	"errors"
	"hash/fnv"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"unicode"

	"github.com/exocortex/exocortex/staging"
)

// hashEmbedder is a deterministic bag-of-words embedder for tests: each word
// (lower-cased, with a crude plural strip) adds 1 to a hashed dimension. Texts that
// share words are similar; it needs no model files.
type hashEmbedder struct {
	dims  int
	model string
	fail  atomic.Bool // when set, Embed fails (an embedder that went away)
	calls atomic.Int64
}

func newHashEmbedder() *hashEmbedder { return &hashEmbedder{dims: 64, model: "test-hash-64"} }

func (h *hashEmbedder) Dimensions() int { return h.dims }
func (h *hashEmbedder) ModelID() string { return h.model }
func (h *hashEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	h.calls.Add(1)
	if h.fail.Load() {
		return nil, errors.New("connection refused")
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		v := make([]float32, h.dims)
		for _, w := range strings.FieldsFunc(strings.ToLower(t), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			w = strings.TrimSuffix(w, "s")
			f := fnv.New32a()
			f.Write([]byte(w))
			v[f.Sum32()%uint32(h.dims)]++
		}
		var n float64
		for _, x := range v {
			n += float64(x * x)
		}
		if n > 0 {
			for j := range v {
				v[j] /= float32(math.Sqrt(n))
			}
		}
		out[i] = v
	}
	return out, nil
}

func openStore(t testing.TB, dir string, opts Options) *Store {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = discardLogger()
	}
	s, err := Open(context.Background(), dir, opts)
	if err != nil {
		t.Fatalf("Open(%s): %v", dir, err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func hitIDs(res Result) []string {
	var out []string
	for _, h := range res.Hits {
		out = append(out, h.Record.ID)
	}
	return out
}

// facts are the small corpus most tests use.
var facts = []Input{
	{ID: "deploy", Area: AreaSolutions, Text: "To deploy the service run make release then restart the systemd unit", Tags: []string{"ops", "deploy"}},
	{ID: "theme", Area: AreaMain, Key: "user_theme", Text: "The user prefers a dark terminal theme with large fonts", Tags: []string{"pref"}},
	{ID: "coffee", Area: AreaMain, Text: "The user drinks black coffee every morning before standup", Tags: []string{"pref", "habit"}},
	{ID: "db", Area: AreaFragments, Text: "Database migrations live in db/migrations and run before the service restarts", Tags: []string{"ops"}},
	{ID: "book", Area: AreaLibrary, Text: "Chapter three of the operations handbook explains how to deploy safely on Fridays"},
	{ID: "cat", Area: "pets", Text: "The user's cat is called Miso and likes the terminal's warm spot"},
}

func putFacts(t testing.TB, s *Store) {
	t.Helper()
	if _, err := s.PutBatch(context.Background(), facts, Source{Session: "s1", Source: "test"}); err != nil {
		t.Fatal(err)
	}
}

type stagingRecord = staging.Record
