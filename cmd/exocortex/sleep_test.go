package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/exocortex/exocortex/memory"
	"github.com/exocortex/exocortex/sleep"
	"github.com/exocortex/exocortex/staging"
)

// runSleepCLI runs `exocortex ARGS...` in-process and returns stdout, stderr.
func runSleepCLI(t *testing.T, args ...string) (string, string, error) {
	t.Helper()
	root := newRootCmd()
	var out, errb bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errb)
	root.SetIn(strings.NewReader(""))
	root.SetArgs(args)
	err := root.ExecuteContext(context.Background())
	return out.String(), errb.String(), err
}

// sleepHome makes a home with a store (BM25 only: the sleep run uses lexical
// vectors), a staging note, and returns it.
func sleepHome(t *testing.T) string {
	t.Helper()
	home := t.TempDir()
	t.Setenv("EXOCORTEX_HOME", home)
	t.Setenv(GloVeEnv, "")
	old := time.Date(2024, 1, 10, 9, 0, 0, 0, time.UTC).Format(time.RFC3339)
	lines := []string{
		`{"id":"a1","area":"main","text":"The billing service listens on port 8080 in production.","importance":0.6}`,
		`{"id":"a2","area":"main","text":"The billing service listens on port 8080 in production.","importance":0.4}`,
		`{"id":"b1","area":"main","text":"The billing service listens on port 9090 in staging."}`,
		`{"id":"old","area":"fragments","text":"The office plant needs water on Mondays.","importance":0.2,"created":"` + old + `"}`,
	}
	imp := filepath.Join(t.TempDir(), "in.jsonl")
	os.WriteFile(imp, []byte(strings.Join(lines, "\n")+"\n"), 0o600)
	if _, errOut, err := runSleepCLI(t, "memory", "import", "--embedder", "none", imp); err != nil {
		t.Fatalf("import: %v %s", err, errOut)
	}
	l, err := staging.Open(context.Background(), filepath.Join(home, "staging.jsonl"), staging.Options{})
	if err != nil {
		t.Fatal(err)
	}
	l.Append(context.Background(), "note", "s1", map[string]any{"text": "Deploys are frozen during the last week of December.", "tool": "staging_note"})
	l.Close()
	return home
}

func TestSleepCommand(t *testing.T) {
	home := sleepHome(t)
	now := "--now=2026-11-21T12:00:00Z"

	// Nothing requested: --if-requested does nothing.
	out, _, err := runSleepCLI(t, "sleep", "--if-requested", "--embedder", "none")
	if err != nil || !strings.Contains(out, "no sleep requested") {
		t.Fatalf("--if-requested: %v\n%s", err, out)
	}

	// A dry run prints the plan and changes no file.
	journal := filepath.Join(home, "memory", memory.JournalFile)
	before, _ := os.ReadFile(journal)
	out, errOut, err := runSleepCLI(t, "sleep", "--dry-run", "--embedder", "none", now)
	if err != nil || !strings.Contains(out, "Sleep plan (dry run: nothing was changed)") || !strings.Contains(out, "a1") {
		t.Fatalf("dry run: %v\n%s\n%s", err, out, errOut)
	}
	if !strings.Contains(errOut, "sleep: phase 1 dedup") {
		t.Fatalf("no progress on stderr:\n%s", errOut)
	}
	after, _ := os.ReadFile(journal)
	if !bytes.Equal(before, after) {
		t.Fatal("the dry run changed the journal")
	}
	if _, err := os.Stat(filepath.Join(home, "sleep_reports")); !errors.Is(err, os.ErrNotExist) {
		t.Fatal("the dry run wrote a report")
	}

	// The real run, as JSON.
	out, errOut, err = runSleepCLI(t, "sleep", "--json", "--embedder", "none", now)
	if err != nil {
		t.Fatalf("sleep: %v\n%s", err, errOut)
	}
	var rep sleep.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("JSON report: %v\n%s", err, out)
	}
	c := func(p sleep.Phase, k string) int { return rep.Phases[p].Counts[k] }
	if c(sleep.Ingest, "ingested") != 1 || c(sleep.Dedup, "merged") != 1 || c(sleep.Decay, "archived") != 1 || rep.ReportPath == "" {
		t.Fatalf("report: %s", out)
	}
	if _, err := os.Stat(rep.ReportPath); err != nil {
		t.Fatal(err)
	}
	// The merge and the archive are explained.
	why, _, err := runSleepCLI(t, "memory", "why", "--embedder", "none", "a2")
	if err != nil || !strings.Contains(why, "superseded") && !strings.Contains(why, "sleep dedup") {
		t.Fatalf("why a2: %v\n%s", err, why)
	}
	why, _, _ = runSleepCLI(t, "memory", "why", "--embedder", "none", "old")
	if !strings.Contains(why, "decayed: strength") {
		t.Fatalf("why old:\n%s", why)
	}
	// Restored by hand, it stays; and nothing else is left to do.
	if _, _, err := runSleepCLI(t, "memory", "restore", "--embedder", "none", "old"); err != nil {
		t.Fatal(err)
	}
	out, _, err = runSleepCLI(t, "sleep", "--embedder", "none", now)
	if err != nil || !strings.Contains(out, ": 0 changes") || !strings.Contains(out, "exempt restored 1") {
		t.Fatalf("second run: %v\n%s", err, out)
	}
}

func TestSleepCommandBusyAndBadFlags(t *testing.T) {
	home := sleepHome(t)
	s, err := memory.Open(context.Background(), filepath.Join(home, "memory"), memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = runSleepCLI(t, "sleep", "--embedder", "none", "--wait", "300ms")
	s.Close()
	if exitCode(err) != exitBusy || !strings.Contains(err.Error(), "memory service") || !strings.Contains(err.Error(), "--wait") {
		t.Fatalf("busy store: exit %d, %v", exitCode(err), err)
	}
	for _, args := range [][]string{
		{"sleep", "--phases", "snooze"},
		{"sleep", "--half-life", "fragments"},
		{"sleep", "--now", "yesterday"},
		{"sleep", "--dedup-similarity", "1.5", "--embedder", "none"},
	} {
		if _, _, err := runSleepCLI(t, args...); err == nil {
			t.Errorf("%v: accepted", args)
		}
	}
	out, _, err := runSleepCLI(t, "sleep", "--help")
	if err != nil || !strings.Contains(out, "--dry-run") || !strings.Contains(out, "docs/sleep.md") {
		t.Fatalf("--help: %v\n%s", err, out)
	}
}

func TestSleepCommandModelSummaries(t *testing.T) {
	home := t.TempDir()
	t.Setenv("EXOCORTEX_HOME", home)
	t.Setenv(GloVeEnv, "")
	lines := []string{
		`{"id":"k1","area":"fragments","text":"The billing service runs on the Kubernetes cluster alpha in Frankfurt."}`,
		`{"id":"k2","area":"fragments","text":"The billing service runs on the Kubernetes cluster beta in Dublin."}`,
		`{"id":"k3","area":"fragments","text":"The billing service runs on the Kubernetes cluster gamma in Madrid."}`,
	}
	imp := filepath.Join(t.TempDir(), "in.jsonl")
	os.WriteFile(imp, []byte(strings.Join(lines, "\n")+"\n"), 0o600)
	if _, errOut, err := runSleepCLI(t, "memory", "import", "--embedder", "none", imp); err != nil {
		t.Fatalf("import: %v %s", err, errOut)
	}
	script := filepath.Join(t.TempDir(), "summary.yaml")
	os.WriteFile(script, []byte("model: summariser\nreplies:\n  - content: Billing runs on three Kubernetes clusters, in Frankfurt, Dublin and Madrid.\n"), 0o600)
	out, errOut, err := runSleepCLI(t, "sleep", "--json", "--embedder", "none", "--phases", "consolidate", "--model", "script:"+script)
	if err != nil {
		t.Fatalf("sleep: %v\n%s", err, errOut)
	}
	var rep sleep.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil || rep.Phases[sleep.Consolidate].Counts["summaries"] != 1 || rep.Summarizer != "summariser" {
		t.Fatalf("report %v: %s", err, out)
	}
	if ex := rep.Phases[sleep.Consolidate].Examples; len(ex) != 1 || !strings.HasPrefix(ex[0].Text, "Billing runs on three Kubernetes clusters") {
		t.Fatalf("examples %+v", ex)
	}
}
