package memory

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestSelect: Select returns copies of the records both the filter and keep
// admit, oldest first, and a change to a copy leaves the store alone; a nil
// keep is List.
func TestSelect(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, t.TempDir(), Options{})
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	ins := []struct {
		id, area, session string
		tags              []string
	}{
		{"a", AreaMain, "s1", []string{"x"}},
		{"b", AreaMain, "s2", nil},
		{"c", AreaFragments, "s1", []string{"axis:semantic"}},
		{"d", AreaLibrary, "s1", nil},
		{"e", AreaMain, "s1", nil},
	}
	for i, in := range ins {
		created := base.Add(time.Duration(len(ins)-i) * time.Hour) // later inputs are older
		if _, err := s.Put(ctx, Input{ID: in.id, Area: in.area, Text: "text " + in.id, Tags: in.tags, Created: &created}, Source{Session: in.session}); err != nil {
			t.Fatal(err)
		}
	}
	of := func(session string) func(*Record) bool {
		return func(r *Record) bool { return r.Provenance.Session == session }
	}
	for _, tc := range []struct {
		name string
		f    Filter
		keep func(*Record) bool
		want []string
	}{
		{"nil keep is List", Filter{}, nil, []string{"e", "c", "b", "a"}},
		{"one session", Filter{}, of("s1"), []string{"e", "c", "a"}},
		{"session without an axis tag", Filter{}, func(r *Record) bool {
			return r.Provenance.Session == "s1" && !slices.ContainsFunc(r.Tags, func(t string) bool { return strings.HasPrefix(t, "axis:") })
		}, []string{"e", "a"}},
		{"the filter still applies", Filter{Areas: []string{AreaLibrary}}, of("s1"), []string{"d"}},
		{"nothing kept", Filter{}, of("s3"), nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, r := range s.Select(context.Background(), tc.f, tc.keep) {
				got = append(got, r.ID)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("Select = %v, want %v", got, tc.want)
			}
			if tc.keep == nil {
				var list []string
				for _, r := range s.List(context.Background(), tc.f) {
					list = append(list, r.ID)
				}
				if !slices.Equal(list, got) {
					t.Errorf("List = %v, Select with a nil keep = %v", list, got)
				}
			}
		})
	}
	got := s.Select(context.Background(), Filter{}, of("s1"))
	got[0].Text, got[0].Tags = "changed", append(got[0].Tags, "changed")
	if r, _ := s.Get(context.Background(), got[0].ID); r.Text == "changed" || slices.Contains(r.Tags, "changed") {
		t.Errorf("changing a record Select returned changed the store's: %+v", r)
	}
}

// TestWritten: Written sees the records this open's writes created or changed
// (the filter and keep still apply), not those written before the open, nor
// deleted ones.
func TestWritten(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openStore(t, dir, Options{})
	for _, id := range []string{"old1", "old2", "old3"} {
		if _, err := s.Put(ctx, Input{ID: id, Text: "before " + id}, Source{Session: "s1"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, dir, Options{})
	for _, in := range []Input{{ID: "new1", Text: "after"}, {ID: "new2", Text: "after", Area: AreaFragments}, {ID: "old2", Text: "changed"}, {ID: "gone", Text: "deleted soon"}} {
		if _, err := s.Put(ctx, in, Source{Session: "s1"}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Delete(ctx, "gone", "test", Source{}); err != nil {
		t.Fatal(err)
	}
	if err := s.Archive(ctx, "old3", "test", "", Source{}); err != nil {
		t.Fatal(err)
	}
	if err := s.RecordAccess(ctx, []string{"old1"}, Source{}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		f    Filter
		keep func(*Record) bool
		want []string
	}{
		{"active", Filter{}, nil, []string{"new1", "new2", "old2"}},
		{"archived", Filter{Statuses: []Status{StatusArchived}}, nil, []string{"old3"}},
		{"keep", Filter{}, func(r *Record) bool { return r.Area == AreaFragments }, []string{"new2"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, r := range s.Written(context.Background(), tc.f, tc.keep) {
				got = append(got, r.ID)
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("Written = %v, want %v", got, tc.want)
			}
		})
	}
	// Opened again with what it wrote (as a holder that closes it when idle
	// does), the next Store's Written returns the same records, and its own.
	ids := s.WrittenIDs()
	if want := []string{"gone", "new1", "new2", "old2", "old3"}; !slices.Equal(ids, want) {
		t.Errorf("WrittenIDs = %v, want %v", ids, want)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, dir, Options{Written: ids})
	if _, err := s.Put(ctx, Input{ID: "new3", Text: "after the reopen"}, Source{Session: "s1"}); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range s.Written(context.Background(), Filter{}, nil) {
		got = append(got, r.ID)
	}
	slices.Sort(got)
	if want := []string{"new1", "new2", "new3", "old2"}; !slices.Equal(got, want) {
		t.Errorf("Written after a reopen with Options.Written = %v, want %v", got, want)
	}
}
