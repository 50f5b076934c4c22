package memory

import (
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
