package memory

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
)

// TestDeferredFulltext: commits leave their records for the full-text index
// (one Bleve batch when it is next read, or when deferredFulltextLimit wait),
// and every search still finds every record committed before it, replaced
// and deleted ones included; Close indexes what waits, so a reopened store
// has nothing to catch up; writers and searchers at once (run with -race).
func TestDeferredFulltext(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		puts int
	}{
		{"one", 1},
		{"a session's worth", 20},
		{"past the limit", deferredFulltextLimit + 10},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s := openStore(t, dir, Options{})
			for i := range tc.puts {
				if _, err := s.Put(ctx, Input{ID: fmt.Sprintf("d%04d", i), Text: fmt.Sprintf("archived message %d about zebra%d", i, i)}, Source{Source: "test"}); err != nil {
					t.Fatal(err)
				}
			}
			s.ftMu.Lock()
			waiting := len(s.ftPending.ids)
			s.ftMu.Unlock()
			if want := tc.puts % deferredFulltextLimit; waiting != want {
				t.Errorf("%d records wait for the index after %d commits, want %d", waiting, tc.puts, want)
			}
			last := tc.puts - 1
			if ids := searchIDs(t, s, fmt.Sprintf("zebra%d", last)); !slices.Contains(ids, fmt.Sprintf("d%04d", last)) {
				t.Fatalf("the last record committed is not found: %v", ids)
			}
			// A replacement and a deletion are seen by the next search.
			if _, err := s.Put(ctx, Input{ID: "d0000", Text: "now about giraffes"}, Source{Source: "test"}); err != nil {
				t.Fatal(err)
			}
			if ids := searchIDs(t, s, "giraffes"); !slices.Equal(ids, []string{"d0000"}) {
				t.Errorf("the replaced record: %v", ids)
			}
			if ids := searchIDs(t, s, "zebra0"); slices.Contains(ids, "d0000") {
				t.Errorf("the replaced text still found: %v", ids)
			}
			if tc.puts > 1 {
				if err := s.Delete(ctx, "d0001", "test", Source{Source: "test"}); err != nil {
					t.Fatal(err)
				}
				if ids := searchIDs(t, s, "zebra1"); slices.Contains(ids, "d0001") {
					t.Errorf("a deleted record found: %v", ids)
				}
			}
			st, err := s.Stats(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if st.FulltextSeq != st.JournalSeq {
				t.Errorf("stats: full-text index at seq %d, journal at %d", st.FulltextSeq, st.JournalSeq)
			}
			if _, err := s.Put(ctx, Input{ID: "late", Text: "written just before close about okapis"}, Source{Source: "test"}); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			s2 := openStore(t, dir, Options{})
			if n := s2.Notices(); len(n) != 0 {
				t.Errorf("reopened store: %q", n)
			}
			if err := s2.CheckFulltext(); err != nil {
				t.Error(err)
			}
			if ids := searchIDs(t, s2, "okapis"); !slices.Equal(ids, []string{"late"}) {
				t.Errorf("the record written before Close, after reopening: %v", ids)
			}
		})
	}
	t.Run("writers and searchers", func(t *testing.T) {
		s := openStore(t, t.TempDir(), Options{})
		var wg sync.WaitGroup
		for w := range 3 {
			wg.Add(2)
			go func() {
				defer wg.Done()
				for i := range 40 {
					if _, err := s.Put(ctx, Input{ID: fmt.Sprintf("w%d-%d", w, i), Text: fmt.Sprintf("writer%d note %d", w, i)}, Source{Source: "test"}); err != nil {
						t.Error(err)
						return
					}
				}
			}()
			go func() {
				defer wg.Done()
				for range 20 {
					if _, err := s.Search(ctx, fmt.Sprintf("writer%d", w), SearchOptions{Limit: 10, Mode: ModeBM25, Context: -1}); err != nil {
						t.Error(err)
						return
					}
				}
			}()
		}
		wg.Wait()
		if err := s.CheckFulltext(); err != nil {
			t.Error(err)
		}
		if ids := searchIDs(t, s, "writer2"); len(ids) != 40 {
			t.Errorf("writer2's notes: %d found, want 40", len(ids))
		}
	})
}
