package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/config"
	"github.com/exocortex/exocortex/core/llm/scripted"
	"github.com/exocortex/exocortex/memory"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

func scriptedEmbedServer(t *testing.T, model string, dims int) *scripted.Server {
	t.Helper()
	srv, err := scripted.NewServer(scripted.Script{Source: "embed-" + model, Model: "chat-" + model, EmbedModel: model, EmbedDims: dims})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// TestOllamaEmbedderEndToEnd runs `embedder: ollama:MODEL` against the scripted
// server's /api/embed: the configured embedder reaches the CLI and the
// memory-tools store, records get the model's vectors, `memory stats` names
// it, and changing the model re-embeds every record from the journal.
func TestOllamaEmbedderEndToEnd(t *testing.T) {
	home := t.TempDir()
	t.Setenv("EXOCORTEX_HOME", home)
	t.Setenv(GloVeEnv, "")
	t.Setenv("XDG_DATA_HOME", t.TempDir()) // no full word-vector file there
	t.Setenv(config.EnvEmbedder, "")
	a := scriptedEmbedServer(t, "embed-a", 48)
	t.Setenv("OLLAMA_HOST", a.URL())
	ctx := context.Background()
	// The memory service an agent's host opens for its plugins (what the
	// tools, recall and memorize use).
	mem, err := homeMemory(home, "ollama:embed-a", slog.New(slog.DiscardHandler))(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, txt := range []string{"the deploy script runs migrations", "the user likes dark themes", "the cat is called Pebble"} {
		if _, err := mem.Save(ctx, &exocortexv1.MemorySaveRequest{Records: []*exocortexv1.MemoryInput{{Text: txt}}, Source: &exocortexv1.MemorySource{Source: "test"}}); err != nil {
			t.Fatal(err)
		}
	}
	res, err := mem.Search(ctx, &exocortexv1.MemorySearchRequest{Query: "what is the cat called", Options: &exocortexv1.MemorySearchOptions{Mode: "vector", Limit: 1}})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.GetHits()) != 1 || !strings.Contains(res.GetHits()[0].GetRecord().GetText(), "Pebble") {
		t.Errorf("vector search through the scripted model: %+v", res.GetHits())
	}
	st, err := mem.Stats(ctx, &exocortexv1.MemoryStatsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if st.GetVectorCount() != 3 || !strings.HasPrefix(st.GetVectorModel(), "ollama:embed-a:") {
		t.Errorf("the service's store has vectors %d of %q; want 3 of ollama:embed-a", st.GetVectorCount(), st.GetVectorModel())
	}
	if st.GetEmbedder() != "ollama embed-a" {
		t.Errorf("the service's embedder is %q", st.GetEmbedder())
	}
	if err := mem.(io.Closer).Close(); err != nil {
		t.Fatal(err)
	}

	stats := func(embedder string) memory.Stats {
		t.Helper()
		t.Setenv(config.EnvEmbedder, embedder)
		var out memory.Stats
		if err := json.Unmarshal([]byte(mustRun(t, "", "stats", "--json")), &out); err != nil {
			t.Fatal(err)
		}
		return out
	}
	if s := stats("ollama:embed-a"); s.Embedder != "ollama embed-a" || s.VectorCount != 3 || s.Records != 3 {
		t.Errorf("stats with the same model: %+v", s)
	}
	// Another model (another server, as after `ollama pull`): every record is
	// embedded again from the journal, with the new model's length.
	b := scriptedEmbedServer(t, "embed-b", 24)
	t.Setenv("OLLAMA_HOST", b.URL())
	s := stats("ollama:embed-b")
	if s.Embedder != "ollama embed-b" || s.VectorCount != 3 || !strings.HasPrefix(s.VectorModel, "ollama:embed-b:") || !strings.HasSuffix(s.VectorModel, ":24d") {
		t.Errorf("stats after the model changed: %+v", s)
	}
	text := mustRun(t, "", "stats")
	if !strings.Contains(text, "embedder:   ollama embed-b") {
		t.Errorf("memory stats does not name the embedder:\n%s", text)
	}
	// Unset, the default is auto; with no full word-vector file anywhere it is
	// the table built into the binary, another model: every record is embedded
	// again.
	if s := stats(""); s.Embedder != "glove (compact, 50k words, built in)" || s.VectorCount != 3 ||
		!strings.Contains(s.VectorModel, "compact-50000w-int8") || !strings.Contains(strings.Join(s.Notices, "\n"), "re-embedding every record") {
		t.Errorf("auto without the full word vectors: %+v", s)
	}
}

// TestFreshHomeHasBuiltinVectors runs the CLI as a new user does, in its own
// process: a fresh EXOCORTEX_HOME and HOME, no $EXOCORTEX_GLOVE, no word-vector
// file beside the executable or in the user data directory. `memory import` and
// `memory search --json` still give every record a vector, from the table built
// into the binary, and the output names that embedder.
func TestFreshHomeHasBuiltinVectors(t *testing.T) {
	home, user := t.TempDir(), t.TempDir()
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "EXOCORTEX_") || strings.HasPrefix(k, "XDG_") || k == "HOME" || k == "OLLAMA_HOST" {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "EXOCORTEX_HOME="+home, "HOME="+user)
	cli := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(os.Args[0], "-test.run=^TestHelperMemoryImport$")
		cmd.Env = append(env, "EXOCORTEX_TEST_IMPORT="+strings.Join(args, "\x1f"))
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("exocortex %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
		}
		return stdout.String()
	}
	in := filepath.Join(t.TempDir(), "turns.jsonl")
	os.WriteFile(in, []byte(`{"area":"main","text":"Caroline: I went to a support group for transgender people yesterday."}
{"area":"main","text":"Melanie: We took the kids camping in the mountains last weekend."}
{"area":"main","text":"Caroline: I am researching adoption agencies because I want to be a mother."}
`), 0o600)
	if out := cli("memory", "import", in); !strings.Contains(out, "imported 3 records") {
		t.Fatalf("import: %s", out)
	}
	const want = "glove (compact, 50k words, built in)"
	var res struct {
		Embedder string `json:"embedder"`
		Notice   string `json:"notice"`
		Hits     []struct {
			Record     struct{ Text string }
			VectorRank int     `json:"vector_rank"`
			Similarity float64 `json:"similarity"`
		} `json:"hits"`
	}
	if err := json.Unmarshal([]byte(cli("memory", "search", "--json", "which", "family", "trip", "outdoors")), &res); err != nil {
		t.Fatal(err)
	}
	if res.Embedder != want || res.Notice != "" || len(res.Hits) == 0 {
		t.Fatalf("search --json: embedder %q, notice %q, %d hits; want %q and hits", res.Embedder, res.Notice, len(res.Hits), want)
	}
	for _, h := range res.Hits {
		if h.VectorRank == 0 || h.Similarity == 0 {
			t.Errorf("hit %q has no vector score (rank %d, similarity %v)", h.Record.Text, h.VectorRank, h.Similarity)
		}
	}
	// "trip" and "outdoors" are not in the camping turn: its words' meaning is.
	if !strings.Contains(res.Hits[0].Record.Text, "camping") {
		t.Errorf("first hit %q; want the camping turn", res.Hits[0].Record.Text)
	}
	var line struct {
		Embedder string `json:"embedder"`
		Hits     []struct {
			VectorRank int `json:"vector_rank"`
		} `json:"hits"`
	}
	qf := filepath.Join(t.TempDir(), "q.txt")
	os.WriteFile(qf, []byte("who wants to adopt a child\n"), 0o600)
	if err := json.Unmarshal([]byte(cli("memory", "search", "--queries", qf)), &line); err != nil {
		t.Fatal(err)
	}
	if line.Embedder != want || len(line.Hits) == 0 || line.Hits[0].VectorRank == 0 {
		t.Errorf("search --queries: %+v", line)
	}
	var st memory.Stats
	if err := json.Unmarshal([]byte(cli("memory", "stats", "--json")), &st); err != nil {
		t.Fatal(err)
	}
	if st.Embedder != want || st.VectorCount != 3 || st.Vectors != "on" {
		t.Errorf("stats: embedder %q, %d vectors (%s)", st.Embedder, st.VectorCount, st.Vectors)
	}
}
