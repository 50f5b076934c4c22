package fulltext

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// statsDocs are records of different lengths sharing words, so that BM25's
// length normalisation and document frequencies both matter.
func statsDocs() []Doc {
	words := []string{"deploy", "garden", "invoice", "kernel", "migration", "orchid", "pasta", "router", "sonata", "tulip"}
	var ds []Doc
	for i := range 120 {
		var b strings.Builder
		for j := range 3 + i%9 {
			fmt.Fprintf(&b, "%s note%d ", words[(i*7+j*3)%len(words)], (i+j)%13)
		}
		// Words of this record alone: Bleve summed the segments' dictionary
		// sizes, which shared words inflate once per segment holding them.
		fmt.Fprintf(&b, "own%da own%db own%dc", i, i, i)
		ds = append(ds, Doc{ID: fmt.Sprintf("r%03d", i), Text: b.String(), Area: []string{"main", "fragments", "solutions"}[i%3], Status: "active", Tags: []string{fmt.Sprintf("t%d", i%4)}})
	}
	return ds
}

type scored map[string]string // query -> "id:score,…"

func scoresOf(t *testing.T, ix *Index) scored {
	t.Helper()
	out := scored{}
	queries := []struct {
		text string
		f    Filter
	}{
		{"deploy", Filter{}},
		{"garden invoice", Filter{}},
		{"kernel note3", Filter{Areas: []string{"main"}}},
		{"orchid pasta sonata", Filter{ExcludeStatuses: []string{"archived"}}},
		{"tulip router", Filter{Tags: []string{"t1"}}},
	}
	for _, q := range queries {
		hits, err := ix.Search(context.Background(), q.text, q.f, 20)
		if err != nil {
			t.Fatalf("search %q: %v", q.text, err)
		}
		var b strings.Builder
		for _, h := range hits {
			fmt.Fprintf(&b, "%s:%.12f,", h.ID, h.Score)
		}
		out[q.text] = b.String()
	}
	return out
}

// TestScoresDoNotDependOnSegments builds the same content three ways: in one
// batch; one record per batch (a segment each) with replacements and deletions
// on the way; and that index reopened after Close, when scorch's merges have
// had their chance. Bleve's own statistics (the sum of the segments'
// dictionary sizes) scored these differently; the index's own must give every
// query the same hits with bit-for-bit equal scores, and equal statistics.
func TestScoresDoNotDependOnSegments(t *testing.T) {
	final := statsDocs()
	oneBatch := func(t *testing.T) *Index {
		ix, _, err := Open(filepath.Join(t.TempDir(), "ft"))
		if err != nil {
			t.Fatal(err)
		}
		if err := ix.Apply(final, nil, 1); err != nil {
			t.Fatal(err)
		}
		return ix
	}
	dir := filepath.Join(t.TempDir(), "ft")
	piecewise := func(t *testing.T) *Index {
		ix, _, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		seq := uint64(0)
		for i, d := range final {
			seq++
			// First an older text (replaced below), and a record that is deleted.
			early := d
			early.Text = "an early draft about " + strings.Repeat("scaffolding ", 1+i%5)
			if err := ix.Apply([]Doc{early, {ID: "gone" + d.ID, Text: "deploy deploy garden temporary", Area: "main", Status: "active"}}, nil, seq); err != nil {
				t.Fatal(err)
			}
		}
		for i, d := range final {
			seq++
			if err := ix.Apply([]Doc{d}, []string{"gone" + d.ID}, seq); err != nil {
				t.Fatal(err)
			}
			if i%40 == 0 {
				if err := ix.Flush(); err != nil {
					t.Fatal(err)
				}
			}
		}
		return ix
	}
	a := oneBatch(t)
	defer a.Close()
	b := piecewise(t)
	want, wantStats := scoresOf(t, a), a.Stats()
	if wantStats.Docs != uint64(len(final)) || wantStats.TextLen == 0 || wantStats.AvgLength < 1 {
		t.Fatalf("statistics of %d documents: %+v", len(final), wantStats)
	}
	if n, _ := b.Count(); n != uint64(len(final)) {
		t.Fatalf("the piecewise index holds %d documents, want %d", n, len(final))
	}
	cases := []struct {
		name string
		ix   func(t *testing.T) *Index
	}{
		{"one batch per record, replaced and deleted on the way", func(*testing.T) *Index { return b }},
		{"the same reopened after Close", func(t *testing.T) *Index {
			if err := b.Close(); err != nil {
				t.Fatal(err)
			}
			ix, notice, err := Open(dir)
			if err != nil || notice != "" {
				t.Fatalf("reopen: %v %q", err, notice)
			}
			return ix
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ix := c.ix(t)
			if got := ix.Stats(); got != wantStats {
				t.Errorf("statistics %+v, want %+v", got, wantStats)
			}
			got := scoresOf(t, ix)
			for q, w := range want {
				if got[q] != w {
					t.Errorf("query %q:\n got  %s\n want %s", q, got[q], w)
				}
			}
			b = ix
		})
	}
	b.Close()
}

// TestStatsCountWhatIsLive checks the statistics through replacements and
// deletions, in one batch and across batches, against the documents left.
func TestStatsCountWhatIsLive(t *testing.T) {
	ix, _, err := Open(filepath.Join(t.TempDir(), "ft"))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	length := func(text string) uint64 {
		n, err := ix.textLength(text)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	steps := []struct {
		name    string
		docs    []Doc
		deletes []string
		want    map[string]string // id -> text left
	}{
		{"two new", []Doc{{ID: "a", Text: "deploy the service today"}, {ID: "b", Text: "orchids need shade"}}, nil,
			map[string]string{"a": "deploy the service today", "b": "orchids need shade"}},
		{"a replaced by a longer text", []Doc{{ID: "a", Text: "deploy the service today and tomorrow and after"}}, nil,
			map[string]string{"a": "deploy the service today and tomorrow and after", "b": "orchids need shade"}},
		{"b deleted, an unknown id deleted", nil, []string{"b", "never"}, map[string]string{"a": "deploy the service today and tomorrow and after"}},
		{"c added and deleted in one batch", []Doc{{ID: "c", Text: "a passing note"}}, []string{"c"}, map[string]string{"a": "deploy the service today and tomorrow and after"}},
		{"d given twice in one batch", []Doc{{ID: "d", Text: "first words here"}, {ID: "d", Text: "second"}}, nil,
			map[string]string{"a": "deploy the service today and tomorrow and after", "d": "second"}},
	}
	for i, s := range steps {
		if err := ix.Apply(s.docs, s.deletes, uint64(i+1)); err != nil {
			t.Fatalf("%s: %v", s.name, err)
		}
		var want uint64
		for _, text := range s.want {
			want += length(text)
		}
		got := ix.Stats()
		n, _ := ix.Count()
		if got.Docs != uint64(len(s.want)) || got.TextLen != want || n != got.Docs {
			t.Errorf("%s: statistics %+v (index count %d), want %d documents of total length %d", s.name, got, n, len(s.want), want)
		}
	}
}

// TestIndexWithoutStatsIsRebuilt: an index written before the statistics
// existed holds documents the statistics do not count, so Open discards it,
// saying why, and the caller replays the journal into it.
func TestIndexWithoutStatsIsRebuilt(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "ft")
	ix, _, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := ix.Apply(docs, nil, 4); err != nil {
		t.Fatal(err)
	}
	if err := ix.idx.DeleteInternal(statsKey); err != nil { // as an older version wrote it
		t.Fatal(err)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	ix, notice, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if !strings.Contains(notice, "predates its own BM25 statistics") || !strings.Contains(notice, "rebuilding it from the journal") {
		t.Fatalf("notice %q", notice)
	}
	if n, _ := ix.Count(); n != 0 || ix.AppliedSeq() != 0 || ix.Stats() != (Stats{}) {
		t.Fatalf("the old index was kept: %d documents, seq %d, %+v", n, ix.AppliedSeq(), ix.Stats())
	}
}
