package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/config"
	"github.com/exocortex/exocortex/memory"
	"github.com/exocortex/exocortex/memory/embed"
)

// runMemory runs `exocortex memory ARGS...` in-process and returns stdout, stderr.
func runMemory(t *testing.T, stdin string, args ...string) (string, string, error) {
	t.Helper()
	root := newRootCmd()
	var out, errb bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&errb)
	root.SetIn(strings.NewReader(stdin))
	root.SetArgs(append([]string{"memory"}, args...))
	err := root.ExecuteContext(context.Background())
	return out.String(), errb.String(), err
}

func mustRun(t *testing.T, stdin string, args ...string) string {
	t.Helper()
	out, errOut, err := runMemory(t, stdin, args...)
	if err != nil {
		t.Fatalf("memory %v: %v\nstderr: %s", args, err, errOut)
	}
	return out
}

func TestMemoryCommands(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "mem")
	d := "--dir=" + dir
	t.Setenv("EXOCORTEX_HOME", t.TempDir())
	t.Setenv(GloVeEnv, "")
	t.Setenv(config.EnvEmbedder, "none") // BM25 only: the built-in vectors would change forget's scores

	id := strings.TrimSpace(mustRun(t, "", "add", d, "--key", "deploy", "--tags", "ops,release", "--meta", "owner=ops",
		"To", "deploy,", "run", "make", "release"))
	mustRun(t, "", "add", d, "--area", "solutions", "The user prefers dark themes")

	var rec memory.Record
	if err := json.Unmarshal([]byte(mustRun(t, "", "get", d, "--json", "--key", "deploy")), &rec); err != nil {
		t.Fatal(err)
	}
	if rec.ID != id || rec.Text != "To deploy, run make release" || rec.Metadata["owner"] != "ops" || rec.Provenance.Source != "cli" {
		t.Fatalf("get --key: %+v", rec)
	}
	out := mustRun(t, "", "search", d, "deploy", "release")
	if !strings.Contains(out, "1. "+id) || !strings.Contains(out, "BM25 rank 1") {
		t.Fatalf("search:\n%s", out)
	}

	// search --queries answers one JSON line per query line.
	out = mustRun(t, "deploy release\n\nthemes\n", "search", d, "--queries", "-", "--area", "main,solutions")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("--queries output:\n%s", out)
	}
	var first struct {
		Line int
		Hits []struct{ ID string }
	}
	json.Unmarshal([]byte(lines[0]), &first)
	if first.Line != 1 || len(first.Hits) == 0 || first.Hits[0].ID != id {
		t.Fatalf("first query line: %s", lines[0])
	}

	// import reports bad lines by number and goes on (--allow-bad: exit 0).
	in := filepath.Join(t.TempDir(), "in.jsonl")
	os.WriteFile(in, []byte(`{"area":"main","text":"imported one"}
{"area":"main"
{"area":"fragments","text":"imported two","tags":["x"]}
`), 0o600)
	out, errOut, err := runMemory(t, "", "import", d, "--allow-bad", in)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "imported 2 records from 3 lines; 1 bad lines") || !strings.Contains(errOut, in+":2: not a JSON record") ||
		!strings.Contains(errOut, "import: 2 records") {
		t.Fatalf("import:\nstdout %s\nstderr %s", out, errOut)
	}

	var st memory.Stats
	json.Unmarshal([]byte(mustRun(t, "", "stats", d, "--json")), &st)
	if st.Records != 4 || st.FulltextDocs != 4 || !strings.HasPrefix(st.Vectors, "off") {
		t.Fatalf("stats: %+v", st)
	}

	mustRun(t, "", "archive", d, id, "--reason", "old")
	out = mustRun(t, "", "search", d, "deploy")
	if strings.Contains(out, id) {
		t.Fatalf("archived record found:\n%s", out)
	}
	mustRun(t, "", "restore", d, id)
	out = mustRun(t, "", "why", d, id)
	for _, want := range []string{"active in area main", "source cli", "memory.upsert.v1", "memory.archive.v1    reason=old", "memory.restore.v1"} {
		if !strings.Contains(out, want) {
			t.Fatalf("why lacks %q:\n%s", want, out)
		}
	}

	out = mustRun(t, "", "replay", d, "--verify")
	if !strings.Contains(out, "OK: the replay matches the live store") {
		t.Fatalf("replay:\n%s", out)
	}

	exp := mustRun(t, "", "export", d)
	if strings.Count(exp, "\n") != 4 || !strings.Contains(exp, `"text":"imported two"`) {
		t.Fatalf("export:\n%s", exp)
	}

	out = mustRun(t, "", "delete", d, id)
	if out != "deleted "+id+"\n" {
		t.Fatalf("delete: %q", out)
	}
	if _, _, err := runMemory(t, "", "get", d, id); err == nil || !strings.Contains(err.Error(), "memory why "+id) {
		t.Fatalf("get of a deleted id: %v", err)
	}
	out = mustRun(t, "", "forget", d, "--threshold", "0.5", "imported")
	if out != "2 memories deleted.\n" {
		t.Fatalf("forget: %q", out)
	}
}

func TestMemoryLockedStore(t *testing.T) {
	t.Setenv("EXOCORTEX_HOME", t.TempDir())
	dir := t.TempDir()
	s, err := memory.Open(context.Background(), dir, memory.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, _, err = runMemory(t, "", "stats", "--dir", dir)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprintf("process %d", os.Getpid())) || !strings.Contains(err.Error(), "stop that process or wait") {
		t.Fatalf("locked store: %v", err)
	}
}

func TestMemoryDefaultsToHome(t *testing.T) {
	home := t.TempDir()
	t.Setenv("EXOCORTEX_HOME", home)
	mustRun(t, "", "add", "remember this")
	if _, err := os.Stat(filepath.Join(home, "memory", memory.JournalFile)); err != nil {
		t.Fatalf("store not under $EXOCORTEX_HOME/memory: %v", err)
	}
}

// TestMemoryWithGloVe runs the CLI with the offline embedder on a tiny word-vector
// file written in the real format.
func TestMemoryWithGloVe(t *testing.T) {
	words := []string{"the", "cat", "kitten", "dog", "puppy", "car", "truck", "sleeps", "drives"}
	vecs := [][]float32{
		{0.1, 0.1, 0.1, 0.1}, {1, 0, 0, 0.1}, {0.9, 0.1, 0, 0.1}, {0, 1, 0, 0.1}, {0.1, 0.9, 0, 0.1},
		{0, 0, 1, 0.1}, {0, 0.1, 0.9, 0.1}, {0.3, 0.3, 0, 1}, {0, 0.3, 0.3, 1},
	}
	wv := &embed.WordVectors{Dim: 4, Words: words}
	for _, v := range vecs {
		wv.Vectors = append(wv.Vectors, v...)
	}
	path := filepath.Join(t.TempDir(), "tiny.bin")
	f, _ := os.Create(path)
	if err := embed.WriteWordVectors(f, wv); err != nil {
		t.Fatal(err)
	}
	f.Close()
	d := "--dir=" + filepath.Join(t.TempDir(), "mem")
	t.Setenv(GloVeEnv, path)
	mustRun(t, "", "add", d, "the cat sleeps")
	mustRun(t, "", "add", d, "the truck drives")
	// No word in common with "the cat sleeps" but "the": the vectors find it.
	out := mustRun(t, "", "search", d, "kitten")
	if !strings.Contains(out, "vector rank 1") || !strings.Contains(out, "the cat sleeps") {
		t.Fatalf("vector search:\n%s", out)
	}
	var st memory.Stats
	json.Unmarshal([]byte(mustRun(t, "", "stats", d, "--json")), &st)
	if st.Vectors != "on" || st.VectorCount != 2 || !strings.HasPrefix(st.VectorModel, "glove-4d") {
		t.Fatalf("stats: %+v", st)
	}
	if out := mustRun(t, "", "replay", d, "--verify"); !strings.Contains(out, "vectors:     2 (live 2)") {
		t.Fatalf("replay:\n%s", out)
	}
	// Without the embedder the store still answers, by BM25, and says so.
	_, errOut, err := runMemory(t, "", "search", d, "--embedder", "none", "truck")
	if err != nil || !strings.Contains(errOut, "no embedder: BM25 only") {
		t.Fatalf("--embedder none: %v %s", err, errOut)
	}
	if _, _, err := runMemory(t, "", "stats", d, "--embedder", "glove:/nonexistent"); err == nil || !strings.Contains(err.Error(), "fetch-glove.sh") {
		t.Fatalf("missing explicit vectors: %v", err)
	}
}
