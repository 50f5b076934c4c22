package main

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/config"
	"github.com/exocortex/exocortex/memory"
)

// TestMemoryImportBadLines: an import with bad lines names each on stderr (or
// in --json's "bad"), prints its progress line once, and exits 1 unless
// --allow-bad accepts them; a record without an area goes to main, as with
// memory add.
func TestMemoryImportBadLines(t *testing.T) {
	t.Setenv("EXOCORTEX_HOME", t.TempDir())
	t.Setenv(GloVeEnv, "")
	t.Setenv(config.EnvEmbedder, "none")
	in := filepath.Join(t.TempDir(), "in.jsonl")
	if err := os.WriteFile(in, []byte(`{"text":"no area given"}
{"area":"main"
{"area":"Bad Area!","text":"x"}
{"area":"fragments","text":"a fragment"}
`), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		args     []string
		wantCode int // 0: no error
	}{
		{"bad lines fail the import", nil, 1},
		{"--allow-bad accepts them", []string{"--allow-bad"}, 0},
		{"--json fails it too", []string{"--json"}, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := "--dir=" + filepath.Join(t.TempDir(), "mem")
			out, errOut, err := runMemory(t, "", append(append([]string{"import", d}, tc.args...), in)...)
			var ee *exitError
			switch {
			case tc.wantCode == 0 && err != nil:
				t.Fatalf("import: %v\n%s", err, errOut)
			case tc.wantCode != 0 && (!errors.As(err, &ee) || ee.code != tc.wantCode):
				t.Fatalf("import: error %v, want exit status %d", err, tc.wantCode)
			case tc.wantCode != 0 && !strings.Contains(err.Error(), "--allow-bad"):
				t.Errorf("the error does not say what to do: %v", err)
			}
			if strings.Contains(strings.Join(tc.args, " "), "--json") {
				var rep memory.ImportReport
				if jerr := json.Unmarshal([]byte(out), &rep); jerr != nil {
					t.Fatalf("--json: %v\n%s", jerr, out)
				}
				if rep.Imported != 2 || len(rep.Bad) != 2 || rep.Bad[0].Line != 2 || rep.Bad[1].Line != 3 {
					t.Errorf("report %+v, want 2 imported and lines 2 and 3 bad", rep)
				}
			} else {
				for _, want := range []string{in + ":2: not a JSON record", in + ":3: area \"Bad Area!\" is not valid"} {
					if !strings.Contains(errOut, want) {
						t.Errorf("stderr lacks %q:\n%s", want, errOut)
					}
				}
				if n := strings.Count(errOut, "import: "); n != 1 {
					t.Errorf("%d progress lines, want 1:\n%s", n, errOut)
				}
				if !strings.Contains(out, "imported 2 records from 4 lines; 2 bad lines") {
					t.Errorf("stdout: %s", out)
				}
			}
			var rec []memory.Record
			exp := mustRun(t, "", "export", d)
			for _, l := range strings.Split(strings.TrimSpace(exp), "\n") {
				var r memory.Record
				json.Unmarshal([]byte(l), &r)
				rec = append(rec, r)
			}
			areas := map[string]string{}
			for _, r := range rec {
				areas[r.Text] = r.Area
			}
			if areas["no area given"] != memory.AreaMain || areas["a fragment"] != "fragments" {
				t.Errorf("areas after import: %v", areas)
			}
		})
	}
}

// TestMemorySearchRelevanceFloor: with the built-in word vectors, a question
// unrelated to every memory gets "no good match" instead of a hit 1 of
// negative similarity, a related one its match with the weak rest counted;
// --json keeps every hit in the store's order (the floor is presentation).
func TestMemorySearchRelevanceFloor(t *testing.T) {
	t.Setenv("EXOCORTEX_HOME", t.TempDir())
	t.Setenv(GloVeEnv, "")
	t.Setenv(config.EnvEmbedder, "")
	d := "--dir=" + filepath.Join(t.TempDir(), "mem")
	for _, text := range []string{
		"The deploy script pushes the release to the staging servers every Friday.",
		"Alice likes hiking in the Alps with her dog.",
		"The database migration failed because of a missing index on users.email.",
		"Bob's favourite recipe is a lentil soup with cumin.",
	} {
		mustRun(t, "", "add", d, text)
	}
	var res memory.Result
	if err := json.Unmarshal([]byte(mustRun(t, "", "search", d, "--json", "what is the capital of peru")), &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Hits) != 4 || res.Hits[0].VectorRank == 0 || res.Hits[0].Similarity >= defaultMinSimilarity {
		t.Fatalf("--json: want all 4 hits, by vectors alone, the first below the floor: %+v", res.Hits)
	}
	for _, tc := range []struct {
		query, want, not string
	}{
		{"what is the capital of peru", "no good match: the 4 nearest memories", "1. "},
		{"who likes hiking", "(3 weak matches left out", "2. "},
	} {
		out := mustRun(t, "", "search", d, tc.query)
		if !strings.Contains(out, tc.want) || strings.Contains(out, tc.not) {
			t.Errorf("search %q: want %q and not %q:\n%s", tc.query, tc.want, tc.not, out)
		}
	}
	if out := mustRun(t, "", "search", d, "who likes hiking"); !strings.Contains(out, "1. ") || !strings.Contains(out, "Alice likes hiking") {
		t.Errorf("the match is not shown:\n%s", out)
	}
	if out := mustRun(t, "", "search", d, "--min-similarity", "-1", "what is the capital of peru"); strings.Count(out, "\n   ") != 4 {
		t.Errorf("--min-similarity -1 does not show every hit:\n%s", out)
	}
}

// TestMemoryReplayNamesDamagedLine damages a journal line so that it still
// parses (an upsert's area no longer valid): the store recovers the record
// from its snapshot at open and says so, and `replay --verify` names the
// file and the line and exits 2.
func TestMemoryReplayNamesDamagedLine(t *testing.T) {
	t.Setenv("EXOCORTEX_HOME", t.TempDir())
	t.Setenv(GloVeEnv, "")
	t.Setenv(config.EnvEmbedder, "none")
	dir := filepath.Join(t.TempDir(), "mem")
	d := "--dir=" + dir
	// One import, one close: the snapshot holds all three.
	mustRun(t, `{"text":"first memory"}
{"text":"second memory","key":"k2"}
{"text":"third memory"}
`, "import", d, "-")
	journal := filepath.Join(dir, memory.JournalFile)
	b, err := os.ReadFile(journal)
	if err != nil {
		t.Fatal(err)
	}
	damaged := strings.Replace(string(b), `"area":"main","text":"second memory"`, `"area":"ma!n","text":"second memory"`, 1)
	if damaged == string(b) {
		t.Fatalf("no upsert of the second memory in the journal:\n%s", b)
	}
	if err := os.WriteFile(journal, []byte(damaged), 0o600); err != nil {
		t.Fatal(err)
	}
	out, errOut, err := runMemory(t, "", "replay", d, "--verify")
	var ee *exitError
	if !errors.As(err, &ee) || ee.code != 2 {
		t.Fatalf("replay --verify: %v, want exit status 2\n%s\n%s", err, out, errOut)
	}
	for _, want := range []string{"ANOMALY: journal " + journal + " line 2 (sequence 2", `area "ma!n" is not valid`,
		"repaired at open: journal " + journal + " line 2", "recovered from the state snapshot"} {
		if !strings.Contains(out, want) {
			t.Errorf("replay --verify lacks %q:\n%s", want, out)
		}
	}
	if got := mustRun(t, "", "get", d, "--key", "k2"); !strings.Contains(got, "second memory") {
		t.Errorf("the damaged line's record is not in the store: %s", got)
	}
}
