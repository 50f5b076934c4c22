package history

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestPersistsAcrossRuns(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sub", "history.jsonl")
	h, err := Open(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []string{"first", "second\nwith a second line", "second\nwith a second line", "   ", "third"} {
		if err := h.Add(e); err != nil {
			t.Fatal(err)
		}
	}
	again, err := Open(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"first", "second\nwith a second line", "third"}
	if got := again.Entries(); !slices.Equal(got, want) {
		t.Fatalf("entries after reopening = %q, want %q", got, want)
	}
}

func TestTornAndBadLinesAreSkipped(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.jsonl")
	content := "\"one\"\nnot json\n\"two\"\n{\"an\":\"object\"}\n\"thr"
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	h, err := Open(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := h.Entries(), []string{"one", "two"}; !slices.Equal(got, want) {
		t.Fatalf("entries = %q, want %q", got, want)
	}
	if h.Skipped != 3 {
		t.Errorf("Skipped = %d, want 3", h.Skipped)
	}
	// Appending after a torn line starts a new line: the next run reads it.
	if err := h.Add("four"); err != nil {
		t.Fatal(err)
	}
	h2, err := Open(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	if got := h2.Entries(); got[len(got)-1] != "four" {
		t.Fatalf("entries = %q, want four last", got)
	}
}

func TestBrowsingKeepsTheDraft(t *testing.T) {
	h := New(0)
	for _, e := range []string{"a", "b", "c"} {
		_ = h.Add(e)
	}
	steps := []struct {
		op     string
		want   string
		wantOK bool
	}{
		{"prev", "c", true},
		{"prev", "b", true},
		{"prev", "a", true},
		{"prev", "", false},
		{"next", "b", true},
		{"next", "c", true},
		{"next", "half-typed", true},
		{"next", "", false},
	}
	for i, s := range steps {
		var got string
		var ok bool
		if s.op == "prev" {
			got, ok = h.Prev("half-typed")
		} else {
			got, ok = h.Next()
		}
		if got != s.want || ok != s.wantOK {
			t.Fatalf("step %d %s = %q, %v; want %q, %v", i, s.op, got, ok, s.want, s.wantOK)
		}
	}
	if h.Browsing() {
		t.Error("still browsing after moving past the newest entry")
	}
}

func TestSearchFindsNewestFirst(t *testing.T) {
	h := New(0)
	for _, e := range []string{"git status", "make test", "git log --oneline", "ls"} {
		_ = h.Add(e)
	}
	i, ok := h.Search("GIT", h.Len())
	if !ok || h.At(i) != "git log --oneline" {
		t.Fatalf("first match = %d %v", i, ok)
	}
	i, ok = h.Search("git", i)
	if !ok || h.At(i) != "git status" {
		t.Fatalf("second match = %d %v", i, ok)
	}
	if _, ok = h.Search("git", i); ok {
		t.Fatal("a third match for git")
	}
	if _, ok = h.Search("", h.Len()); ok {
		t.Fatal("the empty query matched")
	}
}

func TestLimitAndCompaction(t *testing.T) {
	path := filepath.Join(t.TempDir(), "history.jsonl")
	h, err := Open(path, 3)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if err := h.Add(strings.Repeat("x", i+1)); err != nil {
			t.Fatal(err)
		}
	}
	if h.Len() != 3 || h.At(2) != strings.Repeat("x", 10) {
		t.Fatalf("entries = %q", h.Entries())
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(b), "\n"); n > 6 {
		t.Errorf("file has %d lines; it should be compacted to at most twice the limit", n)
	}
	again, err := Open(path, 3)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(again.Entries(), h.Entries()) {
		t.Errorf("reopened %q, want %q", again.Entries(), h.Entries())
	}
}
