package memory

import (
	"context"
	"reflect"
	"testing"
)

// TestCensusMatchesList: Census counts what List returns, per area and tag,
// for the default filter (active records outside the library) and others.
func TestCensusMatchesList(t *testing.T) {
	dir := t.TempDir()
	richStore(t, dir, nil)
	s := openStore(t, dir, Options{})
	defer s.Close()
	for _, f := range []Filter{{}, {Statuses: []Status{StatusArchived}}, {Areas: []string{AreaMain, AreaLibrary}}} {
		want := map[string]Census{}
		for _, r := range s.List(f) {
			c, ok := want[r.Area]
			if !ok {
				c.Tags = map[string]int{}
			}
			c.Records++
			for _, tag := range r.Tags {
				c.Tags[tag]++
			}
			want[r.Area] = c
		}
		if got := s.Census(f); !reflect.DeepEqual(got, want) {
			t.Errorf("Census(%+v) = %v, want %v", f, got, want)
		}
	}
}

// TestCensusKeptUntilWrite: the census of every active record is kept between
// calls while nothing is written, is the caller's own copy, and is counted
// again after each kind of write.
func TestCensusKeptUntilWrite(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, t.TempDir(), Options{})
	count := func() map[string]Census {
		s.mu.RLock()
		defer s.mu.RUnlock()
		return s.countCensus(Filter{})
	}
	r, err := s.Put(ctx, Input{Area: AreaMain, Text: "first", Tags: []string{"a"}}, Source{})
	if err != nil {
		t.Fatal(err)
	}
	first := s.Census(Filter{})
	first[AreaMain].Tags["a"] = 99 // the caller's copy
	delete(first, AreaMain)
	if got := s.Census(Filter{}); !reflect.DeepEqual(got, count()) || got[AreaMain].Tags["a"] != 1 {
		t.Fatalf("a change to a returned census reached the next call: %v", got)
	}
	for _, tc := range []struct {
		name  string
		write func() error
	}{
		{"put", func() error {
			_, err := s.Put(ctx, Input{Area: AreaFragments, Text: "second", Tags: []string{"b"}}, Source{})
			return err
		}},
		{"retag", func() error {
			_, err := s.Put(ctx, Input{ID: r.ID, Area: AreaMain, Text: "first", Tags: []string{"c"}}, Source{})
			return err
		}},
		{"archive", func() error { return s.Archive(ctx, r.ID, "test", "", Source{}) }},
		{"restore", func() error { return s.Restore(ctx, r.ID, "test", Source{}) }},
		{"delete", func() error { return s.Delete(ctx, r.ID, "test", Source{}) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := s.Census(Filter{})
			if err := tc.write(); err != nil {
				t.Fatal(err)
			}
			got, want := s.Census(Filter{}), count()
			if !reflect.DeepEqual(got, want) {
				t.Errorf("after %s: Census = %v, counted %v", tc.name, got, want)
			}
			if reflect.DeepEqual(got, before) {
				t.Errorf("after %s: Census unchanged (%v)", tc.name, got)
			}
		})
	}
}
