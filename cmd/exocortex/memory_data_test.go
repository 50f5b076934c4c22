package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

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

// TestHelperMemoryImport is not a test: TestKilledImportRerunDoesNotDuplicate runs
// the test binary again with EXOCORTEX_TEST_IMPORT set, making it a real `exocortex
// memory import` process that can be killed.
func TestHelperMemoryImport(t *testing.T) {
	args := os.Getenv("EXOCORTEX_TEST_IMPORT")
	if args == "" {
		t.Skip("helper process")
	}
	root := newRootCmd()
	root.SetArgs(strings.Split(args, "\x1f"))
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// TestKilledImportRerunDoesNotDuplicate kills a real import process with SIGKILL
// part-way through, runs the import again, and checks that the store holds exactly
// one record per input line: lines without an id get a stable one (line number and
// text), lines with an id or key keep theirs, and what is already in is skipped.
func TestKilledImportRerunDoesNotDuplicate(t *testing.T) {
	if testing.Short() {
		t.Skip("imports 20,000 lines")
	}
	t.Setenv("EXOCORTEX_HOME", t.TempDir())
	t.Setenv(GloVeEnv, "")
	const n = 20_000
	var b strings.Builder
	for i := 0; i < n; i++ {
		switch i % 10 {
		case 3:
			fmt.Fprintf(&b, `{"id":"given-%d","area":"main","text":"fact with an id %d"}`+"\n", i, i)
		case 7:
			fmt.Fprintf(&b, `{"key":"k%d","area":"solutions","text":"fact with a key %d"}`+"\n", i, i)
		default:
			// Some texts repeat on purpose: same text, different line, different record.
			fmt.Fprintf(&b, `{"area":"main","text":"plain fact about topic %d"}`+"\n", i%5000)
		}
	}
	in := filepath.Join(t.TempDir(), "in.jsonl")
	os.WriteFile(in, []byte(b.String()), 0o600)
	dir := filepath.Join(t.TempDir(), "mem")
	journal := filepath.Join(dir, memory.JournalFile)

	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperMemoryImport$")
	cmd.Env = append(os.Environ(), "EXOCORTEX_TEST_IMPORT="+strings.Join([]string{"memory", "import", "--dir=" + dir, "--embedder=none", in}, "\x1f"))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Kill it once some batches are in the journal but well before the end.
	deadline := time.Now().Add(2 * time.Minute)
	for {
		st, err := os.Stat(journal)
		if err == nil && st.Size() > 200_000 {
			break
		}
		if time.Now().After(deadline) {
			cmd.Process.Kill()
			t.Fatalf("the import wrote nothing in two minutes: %s", stderr.String())
		}
		time.Sleep(2 * time.Millisecond)
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	werr := cmd.Wait()
	killed := false
	if ee, ok := werr.(*exec.ExitError); ok {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			killed = true
		}
	}
	if !killed {
		t.Fatalf("the import finished before it could be killed (%v); make the input larger", werr)
	}

	var st memory.Stats
	json.Unmarshal([]byte(mustRun(t, "", "stats", "--dir="+dir, "--json")), &st)
	if st.Records == 0 || st.Records >= n {
		t.Fatalf("after the kill the store holds %d of %d records; the test needs a partial import", st.Records, n)
	}
	partial := st.Records

	out := mustRun(t, "", "import", "--dir="+dir, in)
	want := fmt.Sprintf("imported %d records from %d lines; 0 bad lines; %d already in the store (skipped)", n-partial, n, partial)
	if !strings.Contains(out, want) {
		t.Fatalf("rerun: %q, want %q", out, want)
	}
	json.Unmarshal([]byte(mustRun(t, "", "stats", "--dir="+dir, "--json")), &st)
	if st.Records != n || st.FulltextDocs != n {
		t.Fatalf("after the rerun: %d records, %d documents; want %d", st.Records, st.FulltextDocs, n)
	}
	// A third run changes nothing.
	out = mustRun(t, "", "import", "--dir="+dir, in)
	if !strings.Contains(out, fmt.Sprintf("imported 0 records from %d lines; 0 bad lines; %d already", n, n)) {
		t.Fatalf("third run: %q", out)
	}
}

// TestImportReportsInvalidUTF8 checks that a line that is not UTF-8 is reported by
// number and not imported with replacement characters.
func TestImportReportsInvalidUTF8(t *testing.T) {
	t.Setenv("EXOCORTEX_HOME", t.TempDir())
	t.Setenv(GloVeEnv, "")
	dir := filepath.Join(t.TempDir(), "mem")
	in := filepath.Join(t.TempDir(), "in.jsonl")
	os.WriteFile(in, []byte("{\"area\":\"main\",\"text\":\"good line\"}\n{\"area\":\"main\",\"text\":\"caf\xe9 latin-1\"}\n"), 0o600)
	out, errOut, err := runMemory(t, "", "import", "--allow-bad", "--dir="+dir, in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "imported 1 records from 2 lines; 1 bad lines") ||
		!strings.Contains(errOut, in+":2: not valid UTF-8 (byte 0xe9 at column 27)") {
		t.Fatalf("stdout %q\nstderr %q", out, errOut)
	}
	// BM25 alone: the vector leg would return the good line as the nearest.
	if got := mustRun(t, "", "search", "--dir="+dir, "--mode", "bm25", "latin"); !strings.Contains(got, "no memories found") {
		t.Fatalf("the bad line was imported:\n%s", got)
	}
}

// TestBadValuesAreRefusedByName runs the real commands with each out-of-range flag
// and config value and checks the error names the setting; and that a blank query
// is one documented refusal whether it is "" or spaces.
func TestBadValuesAreRefusedByName(t *testing.T) {
	cases := []struct {
		name   string
		config string
		args   []string
		want   string
	}{
		{"negative -k", "", []string{"memory", "search", "deploy", "-k", "-3"}, "--limit/-k -3: give a positive number of hits"},
		{"zero --limit", "", []string{"memory", "search", "deploy", "--limit", "0"}, "--limit/-k 0"},
		{"negative --budget", "", []string{"memory", "search", "deploy", "--budget", "-1"}, "--budget -1"},
		{"empty query", "", []string{"memory", "search", ""}, "the query is empty"},
		{"blank query", "", []string{"memory", "search", "   "}, "the query is empty"},
		{"negative --num-ctx", "", []string{"run", "-p", "hi", "--num-ctx", "-1"}, "--num-ctx -1: give a positive number of tokens"},
		{"negative --max-iterations", "", []string{"run", "-p", "hi", "--max-iterations", "-1"}, "--max-iterations -1: give a positive number of iterations"},
		{"config timeouts.default: -1s", "timeouts:\n  default: -1s\n", []string{"run", "-p", "hi"}, "timeouts.default: -1s is not allowed"},
		{"config max_iterations: -1", "max_iterations: -1\n", []string{"run", "-p", "hi"}, "max_iterations: -1 is not allowed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			t.Setenv("EXOCORTEX_HOME", home)
			t.Setenv(GloVeEnv, "")
			if tc.config != "" {
				os.WriteFile(filepath.Join(home, "config.yaml"), []byte(tc.config), 0o600)
			}
			root := newRootCmd()
			var out, errb bytes.Buffer
			root.SetOut(&out)
			root.SetErr(&errb)
			root.SetArgs(append(tc.args, "--model", "script:"+filepath.Join(home, "none.yaml")))
			if tc.args[0] == "memory" {
				root.SetArgs(append(tc.args, "--dir", filepath.Join(home, "mem")))
			}
			err := root.Execute()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%v: error %v, want %q\nstdout %s\nstderr %s", tc.args, err, tc.want, out.String(), errb.String())
			}
		})
	}
}
