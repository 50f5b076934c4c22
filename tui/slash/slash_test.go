package slash

import (
	"slices"
	"strings"
	"testing"
)

func testRegistry() *Registry {
	return New(
		Command{Name: "help", Aliases: []string{"?"}, Summary: "show help"},
		Command{Name: "memory", Summary: "the memory store", Subs: []Sub{
			{Name: "search", Args: "QUERY", Summary: "search"},
			{Name: "stats", Summary: "stats"},
			{Name: "add", Args: "TEXT", Summary: "add"},
		}},
		Command{Name: "model", Args: "[NAME]", Summary: "show or switch", Kind: KindModel},
		Command{Name: "resume", Args: "NAME", Summary: "resume", Kind: KindSession},
		Command{Name: "export", Summary: "export", Subs: []Sub{
			{Name: "md", Args: "FILE", Kind: KindFile},
			{Name: "json", Args: "FILE", Kind: KindFile},
		}},
		Command{Name: "quit", Aliases: []string{"exit"}, Summary: "leave"},
	)
}

func values(kind, prefix string) []string {
	switch kind {
	case KindSession:
		return []string{"2026-11-21-work", "2026-11-20-play", "demo"}
	case KindModel:
		return []string{"qwen3:8b", "llama3.2:3b"}
	case KindFile:
		return []string{"notes.md", "notes.json", "out/"}
	}
	return nil
}

func lines(cs []Candidate) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.Line)
	}
	return out
}

func TestComplete(t *testing.T) {
	r := testRegistry()
	tests := []struct {
		line string
		want []string
	}{
		{"/", []string{"/help", "/memory ", "/model ", "/resume ", "/export ", "/quit"}},
		{"/m", []string{"/memory ", "/model "}},
		{"/mo", []string{"/model "}},
		{"/model", []string{"/model "}},
		{"/od", []string{"/model "}}, // substring match after the prefix matches
		{"/memory ", []string{"/memory search ", "/memory stats", "/memory add "}},
		{"/memory s", []string{"/memory search ", "/memory stats"}},
		{"/memory search te", nil}, // free text
		{"/resume 2026", []string{"/resume 2026-11-21-work", "/resume 2026-11-20-play"}},
		{"/resume dem", []string{"/resume demo"}},
		{"/model ll", []string{"/model llama3.2:3b"}},
		{"/export md no", []string{"/export md notes.md", "/export md notes.json"}},
		{"/export json out/", []string{"/export json out/"}},
		{"/nothing", nil},
		{"/nothing x", nil},
		{"plain text", nil},
		{"/help x", nil},
	}
	for _, tc := range tests {
		if got := lines(r.Complete(tc.line, values)); !slices.Equal(got, tc.want) {
			t.Errorf("Complete(%q) = %q, want %q", tc.line, got, tc.want)
		}
	}
}

func TestExactNameSortsFirst(t *testing.T) {
	r := New(Command{Name: "memoryx"}, Command{Name: "memory"})
	if got := lines(r.Complete("/memory", nil)); got[0] != "/memory" {
		t.Fatalf("Complete = %q, want the exact name first", got)
	}
}

func TestParse(t *testing.T) {
	r := testRegistry()
	in, err := r.Parse("  /memory add  remember   the  milk ")
	if err != nil {
		t.Fatal(err)
	}
	if in.Name != "memory" || in.Arg(0) != "add" || in.RestAfter(1) != "remember   the  milk" {
		t.Fatalf("parsed %+v, rest after 1 = %q", in, in.RestAfter(1))
	}
	if in.Arg(9) != "" || in.RestAfter(9) != "" {
		t.Fatal("missing arguments are not empty")
	}
	in, err = r.Parse("/exit")
	if err != nil || in.Name != "quit" {
		t.Fatalf("alias: %+v %v", in, err)
	}
	in, err = r.Parse("/help\tmemory")
	if err != nil || in.Name != "help" || in.Arg(0) != "memory" {
		t.Fatalf("tab after the name: %+v %v", in, err)
	}
	for line, want := range map[string]string{
		"/memroy stats": "did you mean /memory",
		"/qiut":         "did you mean /quit",
		"/zzzzzz":       "unknown command /zzzzzz (/help",
		"hello":         "not a command",
	} {
		_, err := r.Parse(line)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q) error = %v, want it to contain %q", line, err, want)
		}
	}
}

func TestIsCommand(t *testing.T) {
	for line, want := range map[string]bool{
		"/help": true, "/tmp/x is a path": true, "// comment": false, "/ 2": false, "/": false, "help": false,
	} {
		if got := IsCommand(line); got != want {
			t.Errorf("IsCommand(%q) = %v", line, got)
		}
	}
}

func TestHelpListsEverything(t *testing.T) {
	h := testRegistry().Help()
	for _, want := range []string{"/help", "/memory search QUERY", "/model [NAME]", "/export json FILE", "/quit"} {
		if !strings.Contains(h, want) {
			t.Errorf("help lacks %q:\n%s", want, h)
		}
	}
}

func TestDuplicateNamesPanic(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("a duplicate alias did not panic")
		}
	}()
	New(Command{Name: "a"}, Command{Name: "b", Aliases: []string{"a"}})
}
