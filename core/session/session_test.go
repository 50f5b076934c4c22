package session

import (
	"context"
	"os"
	"strings"
	"testing"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

func TestSessionSurvivesReopenAndTornTail(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(ctx, dir, "work")
	if err != nil {
		t.Fatal(err)
	}
	id := s.ID()
	for _, c := range []string{"hello", "world"} {
		if err := s.Append(ctx, &exocortexv1.Message{Role: "user", Content: c}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.SaveState(ctx, []byte(`{"k":1}`)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []string{`{"verbatim_from":1}`, `{"verbatim_from":2}`} {
		if err := s.SaveContext(ctx, []byte(c)); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	// A crash mid-write leaves half a line.
	f, err := os.OpenFile(s.Path(), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"v":1,"seq":99,"kind":"session.mess`)
	f.Close()

	s2, err := Open(ctx, dir, "work")
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if s2.ID() != id {
		t.Fatalf("id changed: %s -> %s", id, s2.ID())
	}
	var got []string
	for _, m := range s2.History() {
		got = append(got, m.GetContent())
	}
	if strings.Join(got, ",") != "hello,world" {
		t.Fatalf("history = %v", got)
	}
	if string(s2.State()) != `{"k":1}` {
		t.Fatalf("state = %s", s2.State())
	}
	if string(s2.Context()) != `{"verbatim_from":2}` {
		t.Fatalf("context state = %s, want the last saved", s2.Context())
	}
	if s2.Recovery().TornTail == nil {
		t.Fatal("the torn tail was not reported")
	}
	if last, _ := Last(dir); last != "work" {
		t.Fatalf("last = %q", last)
	}
	list, err := List(dir)
	if err != nil || len(list) != 1 || list[0].Name != "work" {
		t.Fatalf("list = %v, %v", list, err)
	}
}

func TestValidateName(t *testing.T) {
	for name, ok := range map[string]bool{"work": true, "a.b_c-1": true, "": false, "../x": false, ".hidden": false, "a b": false} {
		if err := ValidateName(name); (err == nil) != ok {
			t.Errorf("ValidateName(%q) = %v", name, err)
		}
	}
}
