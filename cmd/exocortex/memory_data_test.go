package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/memory"
)

// writeImport writes n import lines (no ids) and returns the file.
func writeImport(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	for i := 0; i < n; i++ {
		fmt.Fprintf(&b, `{"area":"main","text":"fact number %d about topic %d"}`+"\n", i, i%37)
	}
	p := filepath.Join(t.TempDir(), "in.jsonl")
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestJournalSeqDamageKeepsTheRest damages one journal line's seq in a 200-record
// store and checks, through the CLI, that 199 (or 200) records come back, that
// `replay --verify` reports the anomaly instead of saying OK, and that new writes
// continue from the true last sequence.
func TestJournalSeqDamageKeepsTheRest(t *testing.T) {
	t.Setenv("EXOCORTEX_HOME", t.TempDir())
	t.Setenv(GloVeEnv, "")
	cases := []struct {
		name    string
		damage  func(lines []string) []string
		records int
	}{
		{"wrong seq", func(l []string) []string {
			l[49] = strings.Replace(l[49], `"seq":50,`, `"seq":9999,`, 1)
			return l
		}, 199},
		{"repeated seq", func(l []string) []string {
			l[49] = strings.Replace(l[49], `"seq":50,`, `"seq":49,`, 1)
			return l
		}, 199},
		{"line written twice", func(l []string) []string {
			return append(l[:50], append([]string{l[49]}, l[50:]...)...)
		}, 200},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "mem")
			d := "--dir=" + dir
			mustRun(t, "", "import", d, writeImport(t, 200))
			jpath := filepath.Join(dir, memory.JournalFile)
			b, err := os.ReadFile(jpath)
			if err != nil {
				t.Fatal(err)
			}
			lines := tc.damage(strings.Split(strings.TrimSuffix(string(b), "\n"), "\n"))
			os.WriteFile(jpath, []byte(strings.Join(lines, "\n")+"\n"), 0o600)

			var st memory.Stats
			if err := json.Unmarshal([]byte(mustRun(t, "", "stats", d, "--json")), &st); err != nil {
				t.Fatal(err)
			}
			if st.Records != tc.records || st.JournalSeq != 200 || len(st.Notices) == 0 || !strings.Contains(st.Notices[0], "quarantined") {
				t.Fatalf("stats after the damage: %d records, journal seq %d, notices %q", st.Records, st.JournalSeq, st.Notices)
			}
			out, _, err := runMemory(t, "", "replay", d, "--verify")
			if err == nil || !strings.Contains(out, "ANOMALY: 1 journal line(s) were moved to") || strings.Contains(out, "OK:") {
				t.Fatalf("replay --verify after the damage (err %v):\n%s", err, out)
			}
			mustRun(t, "", "add", d, "one more")
			json.Unmarshal([]byte(mustRun(t, "", "stats", d, "--json")), &st)
			if st.Records != tc.records+1 || st.JournalSeq != 201 {
				t.Fatalf("after a new write: %d records, journal seq %d; want %d, 201", st.Records, st.JournalSeq, tc.records+1)
			}
		})
	}
}
