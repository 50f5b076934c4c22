package memorytools

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/exocortex/exocortex/memory"
)

// TestWarm: the plugin's Start opens an existing store before any call (and a
// call then finds it open), creates none where there is none, and leaves a store
// another process holds to the first call, which works once it is free. What
// Warm does ahead of the first prompt (the census, a first search) writes
// nothing to the store.
func TestWarm(t *testing.T) {
	for _, tc := range []struct {
		name     string
		store    bool // a store with one record exists
		held     bool // another opener holds it while Warm runs
		wantOpen bool
	}{
		{name: "no store", wantOpen: false},
		{name: "a store", store: true, wantOpen: true},
		{name: "a store held elsewhere", store: true, held: true, wantOpen: false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := serve(t, -1)
			dir := filepath.Join(h.home, StoreDir)
			var held *memory.Store
			if tc.store {
				s, err := memory.Open(t.Context(), dir, memory.Options{Logger: quiet()})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := s.MemorySave(t.Context(), "drink", "Tea in the morning.", nil, memory.Source{Source: "test"}); err != nil {
					t.Fatal(err)
				}
				if tc.held {
					held = s
				} else if err := s.Close(); err != nil {
					t.Fatal(err)
				}
			}
			h.st.Warm(t.Context())
			if got := h.st.IsOpen(); got != tc.wantOpen {
				t.Fatalf("after Warm the store is open: %v, want %v", got, tc.wantOpen)
			}
			if tc.wantOpen {
				if err := h.st.Use(t.Context(), func(s *memory.Store) error {
					if seq := s.JournalSeq(); seq != 1 {
						t.Errorf("after Warm the journal is at seq %d, want 1 (Warm wrote to the store)", seq)
					}
					return nil
				}); err != nil {
					t.Fatal(err)
				}
			}
			if !tc.store {
				if _, err := os.Stat(dir); !os.IsNotExist(err) {
					t.Fatalf("Warm created a store where there was none: %v", err)
				}
				return
			}
			if held != nil {
				if err := held.Close(); err != nil {
					t.Fatal(err)
				}
			}
			if got := h.ok("memory_retrieve", m{"key": "drink"}); got != "Tea in the morning." {
				t.Fatalf("memory_retrieve after Warm = %q", got)
			}
		})
	}
}
