package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/config"
	"github.com/exocortex/exocortex/memory"
	"github.com/exocortex/exocortex/memory/natsjournal/natstest"
)

// TestMemoryCommandsOnNATS: a local store migrates to a JetStream stream
// (verified by state hash); with EXOCORTEX_NATS_URL set, the memory commands
// of two hosts (two store directories) work unchanged on the shared journal,
// each finding the other's records, and stats names the stream and the lag;
// the stream migrates back to a directory with the same hash.
func TestMemoryCommandsOnNATS(t *testing.T) {
	srv := natstest.Start(t)
	t.Setenv("EXOCORTEX_HOME", t.TempDir())
	t.Setenv(GloVeEnv, "")
	t.Setenv(config.EnvEmbedder, "none")
	t.Setenv("EXOCORTEX_NATS_URL", "")
	a := "--dir=" + filepath.Join(t.TempDir(), "a")
	b := "--dir=" + filepath.Join(t.TempDir(), "b")

	idA := strings.TrimSpace(mustRun(t, "", "add", a, "--key", "deploy", "the deploy runs from the blue pipeline"))
	mustRun(t, "", "add", a, "--area", "solutions", "restart the indexer when it stalls")

	var rep memory.MigrateReport
	if err := json.Unmarshal([]byte(mustRun(t, "", "migrate", a, "--json", "--to", srv.URL())), &rep); err != nil {
		t.Fatal(err)
	}
	if !rep.Verified || rep.Records != 2 || rep.Copied != 2 || rep.StateHash == "" {
		t.Fatalf("migrate --to %s: %+v", srv.URL(), rep)
	}
	// Run again: nothing more to copy, still verified.
	if err := json.Unmarshal([]byte(mustRun(t, "", "migrate", a, "--json", "--to", srv.URL())), &rep); err != nil || rep.Copied != 0 || !rep.Verified {
		t.Fatalf("migrate again: %+v, %v", rep, err)
	}

	t.Setenv("EXOCORTEX_NATS_URL", srv.URL())
	out := mustRun(t, "", "search", b, "blue", "pipeline")
	if !strings.Contains(out, idA) {
		t.Fatalf("host b does not find a's record %s:\n%s", idA, out)
	}
	idB := strings.TrimSpace(mustRun(t, "", "add", b, "--key", "oncall", "Mira is on call this week"))
	if out := mustRun(t, "", "search", a, "on", "call", "Mira"); !strings.Contains(out, idB) {
		t.Fatalf("host a does not find b's record %s:\n%s", idB, out)
	}
	// A key taken on one host is the same record on the other.
	var rec memory.Record
	if err := json.Unmarshal([]byte(mustRun(t, "", "get", a, "--json", "--key", "oncall")), &rec); err != nil || rec.ID != idB {
		t.Fatalf("get --key oncall on a: %+v, %v", rec, err)
	}

	var st struct {
		memory.Stats
		Journal string               `json:"journal"`
		Shared  *memory.SharedStatus `json:"shared"`
	}
	if err := json.Unmarshal([]byte(mustRun(t, "", "stats", a, "--json")), &st); err != nil {
		t.Fatal(err)
	}
	if st.Shared == nil || !strings.Contains(st.Journal, srv.URL()) || st.Shared.Lag != 0 || st.Shared.StreamSeq != 3 || st.JournalSeq != 3 {
		t.Fatalf("stats --json on a shared store: journal %q, shared %+v, seq %d", st.Journal, st.Shared, st.JournalSeq)
	}
	text := mustRun(t, "", "stats", b)
	if !strings.Contains(text, "shared:     "+srv.URL()) || !strings.Contains(text, "lag 0") ||
		!strings.Contains(text, "sessions:   "+srv.URL()+" bucket EXO_MEMORY_SESSIONS") {
		t.Fatalf("stats on b:\n%s", text)
	}

	// Back to a local directory, verified; the copy serves the same records.
	back := filepath.Join(t.TempDir(), "back")
	if err := json.Unmarshal([]byte(mustRun(t, "", "migrate", "--json", "--to", back)), &rep); err != nil {
		t.Fatal(err)
	}
	if !rep.Verified || rep.Records != 3 || rep.StateHash != st.StateHash {
		t.Fatalf("migrate --to %s: %+v; want 3 records, hash %s", back, rep, st.StateHash)
	}
	t.Setenv("EXOCORTEX_NATS_URL", "")
	if out := mustRun(t, "", "get", "--dir="+back, "--json", "--key", "oncall"); !strings.Contains(out, idB) {
		t.Fatalf("the migrated directory lacks %s:\n%s", idB, out)
	}
}

// TestMemoryMigrateErrors: bad targets are refused with what to do.
func TestMemoryMigrateErrors(t *testing.T) {
	srv := natstest.Start(t)
	t.Setenv("EXOCORTEX_HOME", t.TempDir())
	t.Setenv(GloVeEnv, "")
	t.Setenv(config.EnvEmbedder, "none")
	t.Setenv("EXOCORTEX_NATS_URL", "")
	a := "--dir=" + filepath.Join(t.TempDir(), "a")
	b := "--dir=" + filepath.Join(t.TempDir(), "b")
	mustRun(t, "", "add", a, "first host's record")
	mustRun(t, "", "add", b, "second host's own record")
	mustRun(t, "", "migrate", a, "--to", srv.URL())
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"no --to", []string{"migrate", a}, "--to is required"},
		{"a stream holding another history", []string{"migrate", b, "--to", srv.URL()}, "give an empty target"},
		{"a bad URL option", []string{"migrate", a, "--to", srv.URL() + "?colour=red"}, `unknown option "colour"`},
		{"a directory without a source", []string{"migrate", "--to", t.TempDir()}, "give --from nats://"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := runMemory(t, "", tc.args...)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("memory %v: error %v, want one saying %q", tc.args, err, tc.want)
			}
		})
	}
	// A store written on its own is not taken as a replica of the stream.
	t.Setenv("EXOCORTEX_NATS_URL", srv.URL())
	_, _, err := runMemory(t, "", "search", b, "record")
	if err == nil || !strings.Contains(err.Error(), "written on its own") {
		t.Fatalf("search on a diverged store: %v", err)
	}
}
