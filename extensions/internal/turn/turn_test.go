package turn

import (
	"testing"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

func TestCanonicalAndArgs(t *testing.T) {
	if a, b := Canonical(`{"b": 1, "a": [1, 2]}`), Canonical(`{"a":[1,2],"b":1}`); a != b {
		t.Fatalf("%s != %s", a, b)
	}
	if Canonical("not json ") != "not json" {
		t.Fatal("non-JSON is kept as it is, trimmed")
	}
	args := ArgsMap(&exocortexv1.ToolCall{ArgsJson: `{"file": "a.go", "n": 3}`})
	if v, name := StringArg(args, "path", "file"); v != "a.go" || name != "file" {
		t.Fatalf("StringArg = %q %q", v, name)
	}
	if v, _ := StringArg(args, "n"); v != "3" {
		t.Fatalf("number as text = %q", v)
	}
}

func TestOperatorMessages(t *testing.T) {
	msgs := []*exocortexv1.Message{
		{Id: "1", Role: "user", SenderId: "operator", Content: "hi"},
		{Id: "2", Role: "user", SenderId: "exocortex", Signal: "repeat"},
		{Id: "3", Role: "tool", Content: "x"},
	}
	if m := LastOperator(msgs); m.GetId() != "1" {
		t.Fatalf("last operator = %v", m)
	}
	if IsOperator(msgs[1]) {
		t.Fatal("a signal message counted as the operator's")
	}
}
