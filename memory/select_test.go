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
			for _, r := range must(s.Select(context.Background(), tc.f, tc.keep)) {
				got = append(got, r.ID)
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("Select = %v, want %v", got, tc.want)
			}
			if tc.keep == nil {
				var list []string
				for _, r := range must(s.List(context.Background(), tc.f)) {
					list = append(list, r.ID)
				}
				if !slices.Equal(list, got) {
					t.Errorf("List = %v, Select with a nil keep = %v", list, got)
				}
			}
		})
	}
	got := must(s.Select(context.Background(), Filter{}, of("s1")))
	got[0].Text, got[0].Tags = "changed", append(got[0].Tags, "changed")
	if r, _ := must2(s.Get(context.Background(), got[0].ID)); r.Text == "changed" || slices.Contains(r.Tags, "changed") {
		t.Errorf("changing a record Select returned changed the store's: %+v", r)
	}
}

// TestFilterSession: a Filter's Session and Source admit what one session
// (and source) wrote, both the records of the snapshot the store was opened
// from and those written since, in List and in Census; the other criteria
// still apply.
func TestFilterSession(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openStore(t, dir, Options{})
	put := func(id, area, session, source string) {
		t.Helper()
		if _, err := s.Put(ctx, Input{ID: id, Area: area, Text: "text " + id}, Source{Session: session, Source: source}); err != nil {
			t.Fatal(err)
		}
	}
	put("old1", AreaMain, "s1", "tool:a")
	put("old2", AreaMain, "s2", "tool:a")
	put("old3", AreaFragments, "s1", "tool:b")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = openStore(t, dir, Options{})
	if st := must(s.Stats(ctx)); st.SnapshotSeq == 0 {
		t.Fatal("no snapshot after the close: the test needs records in its base")
	}
	put("new1", AreaMain, "s1", "tool:a")
	put("new2", AreaMain, "s2", "tool:b")
	for _, tc := range []struct {
		name string
		f    Filter
		want []string
	}{
		{"session", Filter{Session: "s1"}, []string{"new1", "old1", "old3"}},
		{"other session", Filter{Session: "s2"}, []string{"new2", "old2"}},
		{"session and area", Filter{Session: "s1", Areas: []string{AreaFragments}}, []string{"old3"}},
		{"source", Filter{Source: "tool:b"}, []string{"new2", "old3"}},
		{"session and source", Filter{Session: "s1", Source: "tool:a"}, []string{"new1", "old1"}},
		{"no such session", Filter{Session: "s3"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, r := range must(s.List(ctx, tc.f)) {
				got = append(got, r.ID)
			}
			slices.Sort(got)
			if !slices.Equal(got, tc.want) {
				t.Errorf("List = %v, want %v", got, tc.want)
			}
			n := 0
			for _, c := range must(s.Census(ctx, tc.f)) {
				n += c.Records
			}
			if n != len(tc.want) {
				t.Errorf("Census counts %d records, want %d", n, len(tc.want))
			}
		})
	}
}
