package memory

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// damageArea changes the area of id's upsert in the journal of dir in place,
// "main" to "ma!n": the line stays valid JSON of the same length, as a flipped
// bit inside a string leaves it. It returns the line's number.
func damageArea(t *testing.T, dir, id string) int {
	t.Helper()
	path := filepath.Join(dir, JournalFile)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := bytes.SplitAfter(b, []byte("\n"))
	for i, l := range lines {
		if bytes.Contains(l, []byte(`"id":"`+id+`"`)) && bytes.Contains(l, []byte(`"area":"main"`)) {
			lines[i] = bytes.Replace(l, []byte(`"area":"main"`), []byte(`"area":"ma!n"`), 1)
			if err := os.WriteFile(path, bytes.Join(lines, nil), 0o600); err != nil {
				t.Fatal(err)
			}
			return i + 1
		}
	}
	t.Fatalf("no upsert of %s in %s", id, path)
	return 0
}

// TestDamagedJournalLineIsNamedAndRecovered: a journal line damaged so that it
// still parses (an upsert whose area is no longer valid) is named by Open and
// by Replay with the file, the line, the sequence and what is wrong; Open
// recovers the record from the snapshot when the snapshot holds it, and says
// that nothing holds it when no snapshot does.
func TestDamagedJournalLineIsNamedAndRecovered(t *testing.T) {
	for _, tc := range []struct {
		name      string
		snapshot  bool // keep state.snap
		recovered bool
	}{
		{"the snapshot holds the record", true, true},
		{"no snapshot", false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			s := openStore(t, dir, Options{})
			putMany(t, s, 40)
			before := must(s.Stats(context.Background())).StateHash
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(dir, SnapshotFile)); err != nil {
				t.Fatalf("Close wrote no snapshot: %v", err)
			}
			if !tc.snapshot {
				os.Remove(filepath.Join(dir, SnapshotFile))
			}
			line := damageArea(t, dir, "r0007")
			journal := filepath.Join(dir, JournalFile)

			s2 := openStore(t, dir, Options{})
			defer s2.Close()
			var named string
			for _, n := range s2.Notices() {
				if strings.Contains(n, "is damaged") {
					named = n
				}
			}
			for _, want := range []string{"journal " + journal, "line " + itoa(line), "sequence ", `area "ma!n" is not valid`} {
				if !strings.Contains(named, want) {
					t.Errorf("the notice lacks %q: %q (all: %q)", want, named, s2.Notices())
				}
			}
			rec, ok := must2(s2.Get(context.Background(), "r0007"))
			if ok != tc.recovered {
				t.Fatalf("record r0007 present %v, want %v; notice %q", ok, tc.recovered, named)
			}
			if tc.recovered {
				if rec.Area != AreaMain || !strings.Contains(rec.Text, "fact 7 ") || !strings.Contains(named, "recovered from the state snapshot") {
					t.Errorf("recovered %+v; notice %q", rec, named)
				}
				if got := must(s2.Stats(context.Background())).StateHash; got != before {
					t.Errorf("state hash after the recovery %s, want the undamaged store's %s", got, before)
				}
				if ids := searchIDs(t, s2, "topic7"); !slices.Contains(ids, "r0007") {
					t.Errorf("the recovered record is not searchable: topic7 finds %v", ids)
				}
			} else if !strings.Contains(named, "no snapshot holds it") {
				t.Errorf("the notice does not say the record is lost: %q", named)
			}
			if n := must(s2.Stats(context.Background())).Records; n != 40-boolInt(!tc.recovered) {
				t.Errorf("%d records after open, want %d", n, 40-boolInt(!tc.recovered))
			}

			rep, err := Replay(context.Background(), journal, t.TempDir(), Options{})
			if err != nil {
				t.Fatalf("Replay: %v", err)
			}
			found := false
			for _, a := range rep.Anomalies {
				if strings.Contains(a, "journal "+journal+" line "+itoa(line)) && strings.Contains(a, `area "ma!n"`) {
					found = true
				}
			}
			if !found || rep.Records != 39 {
				t.Errorf("Replay: %d records, anomalies %q; want 39 and the damaged line named", rep.Records, rep.Anomalies)
			}
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
