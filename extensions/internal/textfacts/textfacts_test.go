package textfacts

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func TestEntities(t *testing.T) {
	tests := []struct {
		text string
		want []string // "kind:text"
	}{
		{"Open /etc/hosts and ./cmd/main.go, then read README.md.",
			[]string{"path:/etc/hosts", "path:./cmd/main.go", "path:README.md"}},
		{"See https://example.com/a?b=1. It works.", []string{"url:https://example.com/a?b=1"}},
		{"Call `parseReply` from core/llm/parse.go via llm.ParseReply and failure_tracker.",
			[]string{"identifier:parseReply", "path:core/llm/parse.go", "identifier:llm.ParseReply", "identifier:failure_tracker"}},
		{"The meeting with Agent Zero in Berlin uses the HTTP API.",
			[]string{"name:Agent Zero", "name:Berlin", "name:HTTP", "name:API"}},
		{"Berlin is big. Then we left.", nil},
		{"and/or 1/2 is not a path", nil},
		{"", nil},
	}
	for _, tt := range tests {
		var got []string
		for _, e := range Entities(tt.text) {
			got = append(got, e.Kind+":"+e.Text)
		}
		if !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Entities(%q)\n got %q\nwant %q", tt.text, got, tt.want)
		}
	}
}

func TestEntitiesBounded(t *testing.T) {
	var b strings.Builder
	for i := 0; i < 200; i++ {
		fmt.Fprintf(&b, "file%d.go ", i)
	}
	if n := len(Entities(b.String())); n != MaxEntities {
		t.Fatalf("%d entities, want %d", n, MaxEntities)
	}
}

func TestValues(t *testing.T) {
	got := Values(`Found 1,024 files in /srv/data; status=ok, "exit code" 3.5% and Count: 42`, 0)
	for _, want := range []string{"/srv/data", "ok", "exit code", "1024", "3.5%", "42"} {
		found := false
		for _, g := range got {
			if g == want {
				found = true
			}
		}
		if !found {
			t.Errorf("Values lacks %q: %q", want, got)
		}
	}
	if len(Values("1 2 3 4 5", 2)) != 2 {
		t.Error("limit not applied")
	}
}

func TestSentences(t *testing.T) {
	got := Sentences("The file main.go has 3.5 KB. It was edited!\n- list item\nLast one")
	want := []string{"The file main.go has 3.5 KB.", "It was edited!", "list item", "Last one"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %q", got)
	}
}

func TestShortenAndJaccard(t *testing.T) {
	if s := Shorten("one two three four five", 12); s != "one two…" {
		t.Errorf("Shorten = %q", s)
	}
	if j := Jaccard("a b c", "a b d"); j != 0.5 {
		t.Errorf("Jaccard = %v", j)
	}
}
