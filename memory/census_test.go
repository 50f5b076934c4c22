package memory

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
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
		for _, r := range must(s.List(context.Background(), f)) {
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
		if got := must(s.Census(context.Background(), f)); !reflect.DeepEqual(got, want) {
			t.Errorf("Census(%+v) = %v, want %v", f, got, want)
		}
	}
}

// TestCensusKeptUntilWrite: the census of every active record is kept between
// calls, is the caller's own copy, and each kind of write keeps it current
// (it equals a fresh count after each).
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
	first := must(s.Census(context.Background(), Filter{}))
	first[AreaMain].Tags["a"] = 99 // the caller's copy
	delete(first, AreaMain)
	if got := must(s.Census(context.Background(), Filter{})); !reflect.DeepEqual(got, count()) || got[AreaMain].Tags["a"] != 1 {
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
		{"access", func() error { return s.RecordAccess(ctx, []string{r.ID}, Source{}) }},
		{"merge", func() error {
			a, err := s.Put(ctx, Input{Area: AreaMain, Text: "merged away", Tags: []string{"m"}}, Source{})
			if err != nil {
				return err
			}
			return s.Merge(ctx, MergeEvent{Into: r.ID, From: []string{a.ID}, Reason: "test"})
		}},
		{"delete", func() error { return s.Delete(ctx, r.ID, "test", Source{}) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := must(s.Census(context.Background(), Filter{}))
			if err := tc.write(); err != nil {
				t.Fatal(err)
			}
			got, want := must(s.Census(context.Background(), Filter{})), count()
			if !reflect.DeepEqual(got, want) {
				t.Errorf("after %s: Census = %v, counted %v", tc.name, got, want)
			}
			if changed := !reflect.DeepEqual(got, before); changed != (tc.name != "access") {
				t.Errorf("after %s: Census changed %v (%v, before %v)", tc.name, changed, got, before)
			}
		})
	}
}

// TestCensusFile: Close keeps the census in CensusFile, and the first Census
// after the next open takes it from there when it was written at the
// journal's end; a damaged file, or one the journal has moved past, is
// counted again.
func TestCensusFile(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		change   func(t *testing.T, dir string) // between the close and the open
		fromFile bool
	}{
		{name: "as written", fromFile: true},
		{name: "damaged", change: func(t *testing.T, dir string) {
			path := filepath.Join(dir, CensusFile)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(b, []byte(`"Records":2`)) {
				t.Fatalf("%s has no main area of 2 records: %s", CensusFile, b)
			}
			if err := os.WriteFile(path, bytes.Replace(b, []byte(`"Records":2`), []byte(`"Records":7`), 1), 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "missing", change: func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, CensusFile)); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "journal moved on", change: func(t *testing.T, dir string) {
			s := openStore(t, dir, Options{}) // no Census: the file is left as it was
			if _, err := s.Put(ctx, Input{Area: AreaMain, Text: "written later", Tags: []string{"late"}}, Source{}); err != nil {
				t.Fatal(err)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s := openStore(t, dir, Options{})
			for _, in := range []Input{{Text: "one", Tags: []string{"a"}}, {Text: "two", Tags: []string{"a", "b"}}, {Area: AreaFragments, Text: "three"}} {
				if _, err := s.Put(ctx, in, Source{}); err != nil {
					t.Fatal(err)
				}
			}
			s.Census(context.Background(), Filter{})
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(dir, CensusFile)); err != nil {
				t.Fatalf("Close left no %s: %v", CensusFile, err)
			}
			if tc.change != nil {
				tc.change(t, dir)
			}
			// A census file whose numbers differ from the records (with a
			// valid checksum) shows where the answer came from.
			if tc.fromFile {
				path := filepath.Join(dir, CensusFile)
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				var c censusFile
				if err := json.Unmarshal(b, &c); err != nil {
					t.Fatal(err)
				}
				main := c.Areas[AreaMain]
				main.Tags["from-file"] = 1
				c.Areas[AreaMain] = main
				sum := c.sum()
				c.CRC32C = &sum
				if b, err = json.Marshal(c); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, b, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			s = openStore(t, dir, Options{})
			got := must(s.Census(context.Background(), Filter{}))
			s.mu.RLock()
			counted := s.countCensus(Filter{})
			s.mu.RUnlock()
			if tc.fromFile {
				if got[AreaMain].Tags["from-file"] != 1 {
					t.Fatalf("Census = %v: not taken from %s", got, CensusFile)
				}
				delete(got[AreaMain].Tags, "from-file")
			}
			if !reflect.DeepEqual(got, counted) {
				t.Errorf("Census after reopening = %v, counted %v", got, counted)
			}
		})
	}
}
