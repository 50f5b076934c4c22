package memory

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestEchomenToolStrings(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, t.TempDir(), Options{})
	steps := []struct {
		name    string
		call    func() (string, error)
		want    string
		wantErr string
	}{
		{"save", func() (string, error) {
			return s.MemorySave(ctx, "user_project_goals", "Ship the memory store", []string{"project", "Goals"}, Source{})
		}, "Memory item 'user_project_goals' saved successfully.", ""},
		{"save second", func() (string, error) {
			return s.MemorySave(ctx, "user_pref", "Prefers terse answers", []string{"user_pref", "project"}, Source{})
		}, "Memory item 'user_pref' saved successfully.", ""},
		{"retrieve by key", func() (string, error) { return s.MemoryRetrieve(ctx, "user_project_goals", nil) }, "Ship the memory store", ""},
		{"retrieve by one tag", func() (string, error) { return s.MemoryRetrieve(ctx, "", []string{"goals"}) }, "Ship the memory store", ""},
		{"retrieve several as JSON", func() (string, error) { return s.MemoryRetrieve(ctx, "", []string{"project"}) },
			`[{"key":"user_pref","value":"Prefers terse answers","tags":["project","user_pref"]},{"key":"user_project_goals","value":"Ship the memory store","tags":["goals","project"]}]`, ""},
		{"retrieve needs key or tags", func() (string, error) { return s.MemoryRetrieve(ctx, "", nil) }, "", "give a key or at least one tag"},
		{"retrieve missing key", func() (string, error) { return s.MemoryRetrieve(ctx, "nope", nil) }, "", "no memory item with key 'nope'"},
		{"retrieve missing tag", func() (string, error) { return s.MemoryRetrieve(ctx, "", []string{"zzz"}) }, "", "no memory item is tagged zzz"},
		{"update by key", func() (string, error) {
			return s.MemorySave(ctx, "user_pref", "Prefers detailed answers", nil, Source{})
		}, "Memory item 'user_pref' saved successfully.", ""},
		{"retrieve updated", func() (string, error) { return s.MemoryRetrieve(ctx, "user_pref", nil) }, "Prefers detailed answers", ""},
		{"delete", func() (string, error) { return s.MemoryDelete(ctx, "user_pref", Source{}) }, "Memory item 'user_pref' deleted successfully.", ""},
		{"delete again", func() (string, error) { return s.MemoryDelete(ctx, "user_pref", Source{}) }, "", "no memory item with key 'user_pref'"},
		{"save without key", func() (string, error) { return s.MemorySave(ctx, " ", "x", nil, Source{}) }, "", "key is required"},
	}
	for _, st := range steps {
		got, err := st.call()
		if st.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), st.wantErr) {
				t.Errorf("%s: error %v, want %q", st.name, err, st.wantErr)
			}
			continue
		}
		if err != nil || got != st.want {
			t.Errorf("%s: got %q, %v; want %q", st.name, got, err, st.want)
		}
	}
	if r, _ := must2(s.GetByKey(context.Background(), AreaMain, "user_project_goals")); r.Provenance.Source != "tool:memory_save" {
		t.Errorf("provenance source = %q", r.Provenance.Source)
	}
}

func TestAgentZeroLoadAndForget(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, t.TempDir(), Options{Embedder: newHashEmbedder()})
	putFacts(t, s)
	out, err := s.MemoryLoad(ctx, "the user prefers a dark terminal theme", 0.5, 5, "", Source{Session: "z"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out, "id: theme\narea: main\nkey: user_theme\n") || !strings.Contains(out, "Content: The user prefers a dark terminal theme") {
		t.Fatalf("memory_load:\n%s", out)
	}
	if strings.Contains(out, "id: deploy") {
		t.Fatalf("an unrelated memory passed the threshold:\n%s", out)
	}
	if r, _ := must2(s.Get(context.Background(), "theme")); r.AccessCount != 1 {
		t.Fatalf("memory_load did not count the access: %d", r.AccessCount)
	}
	out, _ = s.MemoryLoad(ctx, "deploy", 0.1, 5, "area == 'library'", Source{})
	if !strings.Contains(out, "id: book") || strings.Contains(out, "id: deploy") {
		t.Fatalf("filter on the library:\n%s", out)
	}
	out, _ = s.MemoryLoad(ctx, "quantum chromodynamics", 0.7, 5, "", Source{})
	if !strings.HasPrefix(out, "No memories found") {
		t.Fatalf("no match: %q", out)
	}
	if _, err := s.MemoryLoad(ctx, "x", 0.7, 5, "area = 'main'", Source{}); err == nil || !strings.Contains(err.Error(), "use == or !=") {
		t.Fatalf("bad filter: %v", err)
	}
	out, err = s.MemoryForget(ctx, "user", 0.2, "'pref' in tags and area == 'main'", Source{})
	if err != nil || out != "2 memories deleted." {
		t.Fatalf("memory_forget: %q %v", out, err)
	}
	if _, ok := must2(s.Get(context.Background(), "theme")); ok {
		t.Fatal("forgotten record still there")
	}
	if _, ok := must2(s.Get(context.Background(), "cat")); !ok {
		t.Fatal("memory_forget deleted outside its filter")
	}
}

func TestFilterExpressions(t *testing.T) {
	r := &Record{ID: "x", Area: "main", Key: "k1", Text: "hello world", Status: StatusActive, Tags: []string{"deploy", "ops"},
		Importance: 0.8, AccessCount: 3, Created: time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC), Updated: time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC),
		Metadata: map[string]any{"project": "exo", "n": 2.0}}
	cases := []struct {
		expr string
		want bool
	}{
		{"", true},
		{"area == 'main'", true},
		{`area == "fragments"`, false},
		{"area != 'main'", false},
		{"'deploy' in tags", true},
		{"'db' in tags", false},
		{"'world' in text", true},
		{"importance >= 0.8 and access_count > 2", true},
		{"importance > 0.8", false},
		{"created >= '2026-03' and created < '2026-04'", true},
		{"timestamp < '2026-01-01'", false},
		{"project == 'exo' and n == 2", true},
		{"missing == 'x'", false},
		{"missing != 'x'", true},
		{"not area == 'main' or key == 'k1'", true},
		{"not (area == 'main' or key == 'k1')", false},
		{"area == 'x' or area == 'y' and key == 'k1'", false},
		{"(area == 'x' or area == 'main') and key == 'k1'", true},
		{"status == 'active' and True", true},
	}
	for _, c := range cases {
		e, err := ParseFilter(c.expr)
		if err != nil {
			t.Errorf("ParseFilter(%q): %v", c.expr, err)
			continue
		}
		if got := e.Match(r); got != c.want {
			t.Errorf("%q = %v, want %v", c.expr, got, c.want)
		}
	}
	for _, bad := range []string{"area =", "area == ", "(area == 'x'", "area == 'x' junk", "'x' tags", "area ~ 'x'", "area == 'open"} {
		if _, err := ParseFilter(bad); err == nil {
			t.Errorf("ParseFilter(%q) accepted", bad)
		}
	}
}

// TestHelperImportChild is the child of TestKill9DuringImport: it imports
// $MEMORY_CHILD_INPUT into $MEMORY_CHILD_DIR and prints every id as soon as its
// batch is committed.
func TestHelperImportChild(t *testing.T) {
	dir := os.Getenv("MEMORY_CHILD_DIR")
	if dir == "" {
		t.Skip("helper process only")
	}
	s, err := Open(context.Background(), dir, Options{Embedder: newHashEmbedder(), BatchSize: 200, Logger: discardLogger()})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(2)
	}
	f, err := os.Open(os.Getenv("MEMORY_CHILD_INPUT"))
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(2)
	}
	w := bufio.NewWriter(os.Stdout)
	_, err = s.Import(context.Background(), f, Source{Source: "child"}, func(p ImportProgress) {
		for _, id := range p.Committed {
			fmt.Fprintln(w, "ack", id)
		}
		w.Flush()
	})
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(2)
	}
	s.Close()
	fmt.Println("done")
	os.Exit(0)
}

func TestKill9DuringImport(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a child process")
	}
	dir := filepath.Join(t.TempDir(), "store")
	input := filepath.Join(t.TempDir(), "import.jsonl")
	const n = 20000
	f, _ := os.Create(input)
	bw := bufio.NewWriter(f)
	for i := 0; i < n; i++ {
		fmt.Fprintf(bw, `{"id":"r%05d","area":"main","text":"record %d about topic %d and item %d"}`+"\n", i, i, i%97, i%13)
	}
	bw.Flush()
	f.Close()

	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperImportChild$")
	cmd.Env = append(os.Environ(), "MEMORY_CHILD_DIR="+dir, "MEMORY_CHILD_INPUT="+input)
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	acked := map[string]bool{}
	sc := bufio.NewScanner(out)
	killed := false
	for sc.Scan() {
		line := sc.Text()
		if id, ok := strings.CutPrefix(line, "ack "); ok {
			acked[id] = true
			if len(acked) >= 3000 && !killed {
				cmd.Process.Signal(syscall.SIGKILL)
				killed = true
			}
		} else if strings.HasPrefix(line, "error:") || line == "done" {
			t.Fatalf("child finished before the kill: %s", line)
		}
	}
	cmd.Wait()
	if !killed {
		t.Fatal("the child was never killed")
	}
	s := openStore(t, dir, Options{Embedder: newHashEmbedder()})
	for id := range acked {
		if _, ok := must2(s.Get(context.Background(), id)); !ok {
			t.Fatalf("record %s was acknowledged but is missing after the crash (notices: %v)", id, s.Notices())
		}
	}
	st := must(s.Stats(context.Background()))
	if st.Records < len(acked) || st.FulltextDocs != uint64(st.Records) || st.VectorCount != st.Records {
		t.Fatalf("after the crash: %+v (acked %d)", st, len(acked))
	}
	res, err := s.Search(context.Background(), "record 42 topic", SearchOptions{Filter: Filter{Key: ""}})
	if err != nil || len(res.Hits) == 0 {
		t.Fatalf("search after the crash: %v", err)
	}
	t.Logf("acknowledged %d, recovered %d records; notices: %v", len(acked), st.Records, s.Notices())
}
