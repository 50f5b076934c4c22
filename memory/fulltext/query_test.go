package fulltext

import (
	"context"
	"path/filepath"
	"slices"
	"testing"
)

func TestQueryHandling(t *testing.T) {
	ctx := context.Background()
	ix, _, err := Open(filepath.Join(t.TempDir(), "fulltext"))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	conv := []Doc{
		{ID: "t1", Text: "Ana: I went running by the river this morning", Area: "main", Status: "active"},
		{ID: "t2", Text: "Ben: Ana, did you see the swans?", Area: "main", Status: "active"},
		{ID: "t3", Text: "Ana: Yes, and the herons nesting near the bridge", Area: "main", Status: "active"},
		{ID: "t4", Text: "Ben: I baked bread for the market", Area: "main", Status: "active"},
	}
	if err := ix.Apply(conv, nil, 1); err != nil {
		t.Fatal(err)
	}
	if got := ix.Terms("What did Ana's herons do when they were nesting?"); !slices.Equal(sortedKeys(got), []string{"ana", "heron", "nest"}) {
		t.Errorf("Terms: question words and stop words should go, the rest be stemmed: %v", got)
	}
	for _, tc := range []struct {
		name  string
		query string
		qo    QueryOptions
		want  []string
	}{
		{"every term by default", "Ana herons", QueryOptions{}, []string{"t3", "t2", "t1"}},
		{"a name in most turns is dropped", "Ana herons", QueryOptions{MaxDF: 0.5}, []string{"t3"}},
		{"unless it is all there is", "Ana", QueryOptions{MaxDF: 0.5}, []string{"t2", "t1", "t3"}},
		{"only stop words find nothing", "what was it", QueryOptions{}, nil},
		{"expansion terms find more, below the query's", "herons", QueryOptions{Expansion: []string{"bread"}, ExpansionBoost: 0.3}, []string{"t3", "t4"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hits, err := ix.SearchWith(ctx, tc.query, Filter{}, 10, tc.qo)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, h := range hits {
				got = append(got, h.ID)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("SearchWith(%q) = %v, want %v", tc.query, got, tc.want)
			}
		})
	}
	df, n, err := ix.DocFreq(ctx, []string{"ana", "heron", "absent"})
	if err != nil || n != 4 || df["ana"] != 3 || df["heron"] != 1 || df["absent"] != 0 {
		t.Errorf("DocFreq = %v, %d, %v", df, n, err)
	}
}

func sortedKeys(m map[string]int) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func TestIsStopWord(t *testing.T) {
	ix, _, err := Open(filepath.Join(t.TempDir(), "fulltext"))
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	for _, tc := range []struct {
		word string
		stop bool
	}{{"the", true}, {"what", true}, {"does", true}, {"you", true}, {"clarinet", false}, {"activities", false}, {"", false}} {
		if got := ix.IsStopWord(tc.word); got != tc.stop {
			t.Errorf("IsStopWord(%q) = %v, want %v", tc.word, got, tc.stop)
		}
	}
}
