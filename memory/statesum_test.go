package memory

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"testing"
)

// summed is the state hash computed from scratch over every record.
func summed(s *Store) string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var sum stateSum
	s.state.each(func(r *Record) bool {
		sum.add(recordDigest(r))
		return true
	})
	return sum.String()
}

// TestStateSumKeptByWrites: after each kind of write the kept hash equals the
// hash summed from scratch, an open from the snapshot keeps it without
// summing, and a snapshot that did not keep it (an older build's) has it
// summed on the first Hash.
func TestStateSumKeptByWrites(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openStore(t, dir, Options{})
	src := Source{Source: "test"}
	var ids []string
	for i := range 6 {
		r, err := s.Put(ctx, Input{Text: fmt.Sprintf("record %d about rivers", i), Key: fmt.Sprintf("k%d", i), Tags: []string{"t"}}, src)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	imp := 0.9
	steps := []struct {
		name string
		do   func() error
	}{
		{"update", func() error {
			_, err := s.Put(ctx, Input{ID: ids[0], Text: "record 0 rewritten", Importance: &imp, Metadata: map[string]any{"b": 1.0, "a": "x"}}, src)
			return err
		}},
		{"archive", func() error { return s.Archive(ctx, ids[1], "old", ids[2], src) }},
		{"restore", func() error { return s.Restore(ctx, ids[1], "back", src) }},
		{"delete", func() error { return s.Delete(ctx, ids[3], "gone", src) }},
		{"access", func() error { return s.RecordAccess(ctx, []string{ids[0], ids[4]}, src) }},
		{"merge", func() error {
			return s.Merge(ctx, MergeEvent{Into: ids[4], From: []string{ids[5], ids[2]}, Text: "merged", Source: src})
		}},
	}
	for _, st := range steps {
		if err := st.do(); err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if got, want := must(s.Hash(context.Background())), summed(s); got != want {
			t.Fatalf("after %s: kept hash %s, summed %s", st.name, got, want)
		}
		byArea, byStatus := map[string]int{}, map[string]int{}
		for _, r := range must(s.Records(context.Background())) {
			byArea[r.Area]++
			byStatus[string(r.Status)]++
		}
		if stats := must(s.Stats(context.Background())); !maps.Equal(stats.ByArea, byArea) || !maps.Equal(stats.ByStatus, byStatus) {
			t.Fatalf("after %s: stats count %v %v; the records %v %v", st.name, stats.ByArea, stats.ByStatus, byArea, byStatus)
		}
	}
	want := must(s.Hash(context.Background()))
	s.saveSnapshot()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, dir, Options{})
	if !s.state.tallyOK || must(s.Hash(context.Background())) != want {
		t.Fatalf("reopened from the snapshot: kept %v, hash %s; want %s", s.state.tallyOK, must(s.Hash(context.Background())), want)
	}
	s.Close()

	// A snapshot without state_sum: rewrite the header without it.
	path := filepath.Join(dir, SnapshotFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	nl := bytes.IndexByte(b, '\n')
	head, body := b[:nl], b[nl+1:]
	var h map[string]json.RawMessage
	if err := json.Unmarshal(head, &h); err != nil || h["tally"] == nil {
		t.Fatalf("the snapshot header keeps no tally: %s (%v)", head, err)
	}
	delete(h, "tally")
	stripped, _ := json.Marshal(h)
	if err := os.WriteFile(path, append(append(stripped, '\n'), body...), 0o600); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, dir, Options{})
	if s.state.tallyOK {
		t.Fatal("a snapshot without state_sum was taken as keeping it")
	}
	if got := must(s.Hash(context.Background())); got != want {
		t.Fatalf("summed on first Hash: %s; want %s", got, want)
	}
}

// areaSummed is each area's hash computed from scratch over its records.
func areaSummed(s *Store) map[string]string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	sums := map[string]stateSum{}
	s.state.each(func(r *Record) bool {
		x := sums[r.Area]
		x.add(recordDigest(r))
		sums[r.Area] = x
		return true
	})
	out := map[string]string{}
	for a, x := range sums {
		out[a] = x.String()
	}
	return out
}

// TestAreaHashesKeptByWrites: each area's hash, kept by the writes, equals
// the one summed from scratch after every kind of write, the areas' hashes
// add up to the state hash, an area left empty has none, and an open from
// the snapshot keeps them without summing.
func TestAreaHashesKeptByWrites(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openStore(t, dir, Options{})
	src := Source{Source: "test"}
	put := func(area, text string) string {
		r, err := s.Put(ctx, Input{Area: area, Text: text}, src)
		if err != nil {
			t.Fatal(err)
		}
		return r.ID
	}
	a, b := put("main", "rivers run"), put("fragments", "lakes lie")
	c := put("solutions", "seas swell")
	check := func(step string) {
		t.Helper()
		st, err := s.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if want := areaSummed(s); !maps.Equal(st.AreaHashes, want) {
			t.Fatalf("after %s: kept %v, summed %v", step, st.AreaHashes, want)
		}
		var total stateSum
		for _, h := range st.AreaHashes {
			x, _ := parseStateSum(h)
			total.add(x)
		}
		if total.String() != st.StateHash {
			t.Fatalf("after %s: the areas add up to %s, the state hash is %s", step, total, st.StateHash)
		}
	}
	check("puts")
	for _, step := range []struct {
		name string
		do   func() error
	}{
		{"update", func() error { _, err := s.Put(ctx, Input{ID: a, Area: "main", Text: "rivers ran"}, src); return err }},
		{"archive", func() error { return s.Archive(ctx, b, "old", "", src) }},
		{"delete", func() error { return s.Delete(ctx, c, "gone", src) }},
	} {
		if err := step.do(); err != nil {
			t.Fatalf("%s: %v", step.name, err)
		}
		check(step.name)
	}
	stats := func() Stats {
		t.Helper()
		st, err := s.Stats(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	if _, ok := stats().AreaHashes["solutions"]; ok {
		t.Fatal("an empty area keeps a hash")
	}
	want := stats().AreaHashes
	s.saveSnapshot()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, dir, Options{})
	if got := stats().AreaHashes; !s.state.tallyOK || !maps.Equal(got, want) {
		t.Fatalf("reopened: kept %v, %v; want %v", s.state.tallyOK, got, want)
	}
}
