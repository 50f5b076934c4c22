package loop

import (
	"testing"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

func TestFootprintsMeet(t *testing.T) {
	file := func(id string, a exocortexv1.Access, user string) *exocortexv1.FileSpec {
		return &exocortexv1.FileSpec{Id: id, Path: "$EXOCORTEX_HOME/" + id, Access: a, User: user}
	}
	ext := func(name string, reads, writes []string, files ...*exocortexv1.FileSpec) footprint {
		return declared(&exocortexv1.ExtensionSpec{Name: name, Reads: reads, Writes: writes}, files)
	}
	const r, w, rw = exocortexv1.Access_ACCESS_READ, exocortexv1.Access_ACCESS_WRITE, exocortexv1.Access_ACCESS_READ_WRITE
	for _, tc := range []struct {
		name string
		a, b footprint
		meet bool
	}{
		{"disjoint keys", ext("a", []string{"k1"}, []string{"k1"}), ext("b", []string{"k2"}, []string{"k2"}), false},
		{"both read a key", ext("a", []string{"k"}, nil), ext("b", []string{"k"}, nil), false},
		{"a writes what b reads", ext("a", nil, []string{"k"}), ext("b", []string{"k"}, nil), true},
		{"b writes what a reads", ext("a", []string{"k"}, nil), ext("b", nil, []string{"k"}), true},
		{"both write a key", ext("a", nil, []string{"k"}), ext("b", nil, []string{"k"}), true},
		{"a writes a file b reads", ext("a", nil, nil, file("f", w, "a")), ext("b", nil, nil, file("f", r, "b")), true},
		{"both read a file", ext("a", nil, nil, file("f", r, "a")), ext("b", nil, nil, file("f", r, "b")), false},
		{"read-write meets a read", ext("a", nil, nil, file("f", rw, "a")), ext("b", nil, nil, file("f", r, "b")), true},
		{"another extension's file", ext("a", nil, nil, file("f", w, "someone_else")), ext("b", nil, nil, file("f", r, "b")), false},
		{"a file for no one in particular", ext("a", nil, nil, file("f", w, "")), ext("b", nil, nil, file("f", r, "b")), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fa, fb := tc.a, tc.b
			if got := fa.meets(fb); got != tc.meet {
				t.Errorf("a meets b = %v, want %v", got, tc.meet)
			}
			if got := fb.meets(fa); got != tc.meet {
				t.Errorf("b meets a = %v, want %v (the relation is symmetric)", got, tc.meet)
			}
		})
	}
}
