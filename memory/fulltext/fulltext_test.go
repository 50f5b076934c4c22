package fulltext

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func ids(hits []Hit) string {
	var s []string
	for _, h := range hits {
		s = append(s, h.ID)
	}
	return strings.Join(s, ",")
}

var docs = []Doc{
	{ID: "r1", Text: "The deploy script runs migrations before restarting the service", Area: "solutions", Status: "active", Tags: []string{"deploy"}, Created: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)},
	{ID: "r2", Text: "User prefers dark themes in every editor", Area: "main", Key: "user_theme", Status: "active", Tags: []string{"pref", "ui"}, Created: time.Date(2026, 2, 1, 0, 0, 0, 0, time.UTC)},
	{ID: "r3", Text: "Migrations are kept in db/migrations and run by the deploy script", Area: "main", Status: "archived", Tags: []string{"deploy", "db"}, Created: time.Date(2026, 3, 1, 0, 0, 0, 0, time.UTC)},
	{ID: "r4", Text: "Deploying on Fridays is discouraged by the team handbook", Area: "library", Status: "active", Created: time.Date(2026, 4, 1, 0, 0, 0, 0, time.UTC)},
}

func TestSearchAndFilters(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "fulltext")
	ix, notice, err := Open(dir)
	if err != nil || notice != "" {
		t.Fatalf("Open new: %v %q", err, notice)
	}
	if err := ix.Apply(docs, nil, 4); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		query string
		f     Filter
		want  string
	}{
		{"stemmed match over all areas", "deploy migrations", Filter{}, "r1,r3,r4"},
		{"area", "deploy", Filter{Areas: []string{"main"}}, "r3"},
		{"exclude library", "deploying", Filter{ExcludeAreas: []string{"library"}}, "r1,r3"},
		{"status", "deploy", Filter{Statuses: []string{"active"}}, "r1,r4"},
		{"every tag", "", Filter{Tags: []string{"deploy", "db"}}, "r3"},
		{"key", "", Filter{Key: "user_theme"}, "r2"},
		{"time range", "", Filter{From: time.Date(2026, 1, 15, 0, 0, 0, 0, time.UTC), To: time.Date(2026, 3, 15, 0, 0, 0, 0, time.UTC)}, "r2,r3"},
		{"no match", "kubernetes", Filter{}, ""},
	}
	for _, c := range cases {
		hits, err := ix.Search(ctx, c.query, c.f, 10)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		got := ids(hits)
		{
			// order is checked by the BM25 test below, not here
			parts := strings.Split(got, ",")
			sortStrings(parts)
			got = strings.Join(parts, ",")
		}
		if got != c.want {
			t.Errorf("%s: got %q, want %q", c.name, got, c.want)
		}
	}
	// BM25: the record that says "migrations" twice in fewer words ranks first.
	hits, _ := ix.Search(ctx, "migrations", Filter{}, 10)
	if ids(hits) != "r3,r1" || hits[0].Score <= hits[1].Score {
		t.Fatalf("migrations: %+v", hits)
	}
	if err := ix.Apply(nil, []string{"r1"}, 5); err != nil {
		t.Fatal(err)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}

	ix, notice, err = Open(dir)
	if err != nil || notice != "" || ix.AppliedSeq() != 5 {
		t.Fatalf("reopen: %v %q applied %d", err, notice, ix.AppliedSeq())
	}
	if n, _ := ix.Count(); n != 3 {
		t.Fatalf("count after reopen = %d, want 3", n)
	}
	ix.Close()
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

func TestDamagedIndexIsRecreated(t *testing.T) {
	damage := []struct {
		name   string
		do     func(t *testing.T, dir string)
		notice string
	}{
		{"deleted", func(t *testing.T, dir string) { os.RemoveAll(dir) }, "is missing"},
		{"corrupted file", func(t *testing.T, dir string) {
			files, _ := listFiles(dir)
			for _, f := range files {
				if strings.HasSuffix(f.Name, ".zap") || strings.HasSuffix(f.Name, ".bolt") {
					p := filepath.Join(dir, f.Name)
					b, _ := os.ReadFile(p)
					b[len(b)/2] ^= 0xff
					os.WriteFile(p, b, 0o600)
					return
				}
			}
			t.Fatal("no index file to corrupt")
		}, "fails its checksum"},
	}
	for _, d := range damage {
		t.Run(d.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "fulltext")
			ix, _, err := Open(dir)
			if err != nil {
				t.Fatal(err)
			}
			ix.Apply(docs, nil, 4)
			if err := ix.Close(); err != nil {
				t.Fatal(err)
			}
			d.do(t, dir)
			ix, notice, err := Open(dir)
			if err != nil {
				t.Fatalf("Open after damage: %v", err)
			}
			defer ix.Close()
			if !strings.Contains(notice, d.notice) || !strings.Contains(notice, dir) {
				t.Fatalf("notice %q does not say %q", notice, d.notice)
			}
			if n, _ := ix.Count(); n != 0 || ix.AppliedSeq() != 0 {
				t.Fatalf("recreated index has %d docs, applied %d", n, ix.AppliedSeq())
			}
		})
	}
}

func TestUncleanShutdownKeepsPersistedDocs(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "fulltext")
	ix, _, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	ix.Apply(docs, nil, 4)
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	os.Remove(dir + ".manifest") // as if the process had died with the index open
	ix, notice, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if !strings.Contains(notice, "not closed cleanly") || !strings.Contains(notice, "after seq 4") {
		t.Fatalf("notice %q", notice)
	}
	if n, _ := ix.Count(); n != uint64(len(docs)) || ix.AppliedSeq() != 4 {
		t.Fatalf("after an unclean stop: %d docs, applied %d", n, ix.AppliedSeq())
	}
}
