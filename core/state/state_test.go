package state

import (
	"errors"
	"path/filepath"
	"sync"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

func TestBuiltinKeysFollowTheSeed(t *testing.T) {
	want := map[string]string{
		"bst_store":            "exocortex.v1.BeliefState",
		"error_diagnosis":      "exocortex.v1.ErrorDiagnosis",
		"evidence_ledger":      "exocortex.v1.EvidenceLedger",
		"loop_active":          "exocortex.v1.LoopActive",
		"action_gate_active":   "exocortex.v1.ActionGate",
		"failure_tracker":      "exocortex.v1.FailureTracker",
		"supervisor_state":     "exocortex.v1.SupervisorState",
		"memory_catalog_built": "exocortex.v1.MemoryCatalogBuilt",
	}
	got := map[string]Decl{}
	for _, d := range Builtin() {
		got[d.Name] = d
		if d.Scope == exocortexv1.Scope_SCOPE_UNSPECIFIED {
			t.Errorf("%s has no scope", d.Name)
		}
	}
	for name, typ := range want {
		if got[name].Type != typ {
			t.Errorf("key %s: type %q, want %q", name, got[name].Type, typ)
		}
	}
	if !got["loop_active"].Flag || !got["action_gate_active"].Flag {
		t.Error("loop_active and action_gate_active must be declared as flags")
	}
}

func TestDeclareConflicts(t *testing.T) {
	tests := []struct {
		name    string
		decl    Decl
		wantErr bool
	}{
		{"same type again", Decl{Name: "failure_tracker", Type: "exocortex.v1.FailureTracker", Scope: exocortexv1.Scope_SCOPE_SESSION, Source: "p"}, false},
		{"other type", Decl{Name: "failure_tracker", Type: "exocortex.v1.LoopActive", Scope: exocortexv1.Scope_SCOPE_SESSION, Source: "p"}, true},
		{"other scope", Decl{Name: "failure_tracker", Type: "exocortex.v1.FailureTracker", Scope: exocortexv1.Scope_SCOPE_ITERATION, Source: "p"}, true},
		{"no scope", Decl{Name: "mine", Type: "x.Y", Source: "p"}, true},
		{"new key", Decl{Name: "mine", Type: "x.Y", Scope: exocortexv1.Scope_SCOPE_MONOLOGUE, Source: "p"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := NewRegistry().Declare(tt.decl)
			if (err != nil) != tt.wantErr {
				t.Fatalf("Declare: err = %v, wantErr %v", err, tt.wantErr)
			}
		})
	}
}

func anyOf(t *testing.T, m proto.Message) *anypb.Any {
	t.Helper()
	a, err := anypb.New(m)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func TestApplyChecksDeclarationsAndTypes(t *testing.T) {
	ft := &exocortexv1.FailureTracker{Failures: map[string]int32{"shell": 2}}
	acc := Access{Plugin: "p", Extension: "tracker", Reads: []string{"failure_tracker"}, Writes: []string{"failure_tracker"}}
	tests := []struct {
		name    string
		changes *exocortexv1.StateChanges
		problem string
	}{
		{"declared write", &exocortexv1.StateChanges{Writes: []*exocortexv1.StateEntry{{Key: "failure_tracker", Value: anyOf(t, ft)}}}, ""},
		{"undeclared write", &exocortexv1.StateChanges{Writes: []*exocortexv1.StateEntry{{Key: "loop_active", Value: anyOf(t, &exocortexv1.LoopActive{Active: true})}}}, "wrote a key it did not declare"},
		{"wrong type", &exocortexv1.StateChanges{Writes: []*exocortexv1.StateEntry{{Key: "failure_tracker", Value: anyOf(t, &exocortexv1.LoopActive{})}}}, `wrote a value of type "exocortex.v1.LoopActive", but the key holds exocortex.v1.FailureTracker`},
		{"undeclared reset", &exocortexv1.StateChanges{Resets: []string{"loop_active"}}, "reset a key it did not declare"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewStore(NewRegistry())
			err := s.Apply(acc, tt.changes)
			if tt.problem == "" {
				if err != nil {
					t.Fatal(err)
				}
				got := s.Read(acc)
				if len(got) != 1 || !proto.Equal(got[0].GetValue(), anyOf(t, ft)) {
					t.Fatalf("Read after write = %v", got)
				}
				return
			}
			var ae *AccessError
			if !errors.As(err, &ae) || ae.Problem != tt.problem || ae.Extension != "tracker" || ae.Plugin != "p" {
				t.Fatalf("err = %v, want AccessError %q", err, tt.problem)
			}
			if len(s.Read(Access{Reads: []string{"failure_tracker", "loop_active"}})) != 0 {
				t.Fatal("a refused change must change nothing")
			}
		})
	}
}

func TestReadHandsOnlyDeclaredKeys(t *testing.T) {
	s := NewStore(NewRegistry())
	if err := s.Set("loop_active", &exocortexv1.LoopActive{Active: true}); err != nil {
		t.Fatal(err)
	}
	if err := s.Set("failure_tracker", &exocortexv1.FailureTracker{}); err != nil {
		t.Fatal(err)
	}
	got := s.Read(Access{Reads: []string{"failure_tracker"}})
	if len(got) != 1 || got[0].GetKey() != "failure_tracker" {
		t.Fatalf("Read = %v, want only failure_tracker", got)
	}
	if err := s.Set("loop_active", &exocortexv1.FailureTracker{}); err == nil {
		t.Fatal("Set with the wrong type must fail")
	}
}

func TestResetScopeAndPersistence(t *testing.T) {
	s := NewStore(NewRegistry())
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.Set("context_fill", &exocortexv1.ContextFill{Fill: 0.5}))  // iteration
	must(s.Set("error_diagnosis", &exocortexv1.ErrorDiagnosis{}))     // monologue
	must(s.Set("loop_active", &exocortexv1.LoopActive{Active: true})) // session
	if got := s.ResetScope(exocortexv1.Scope_SCOPE_ITERATION); len(got) != 1 || got[0] != "context_fill" {
		t.Fatalf("ResetScope(iteration) cleared %v", got)
	}
	if _, ok := s.Get("error_diagnosis"); !ok {
		t.Fatal("iteration reset cleared a monologue key")
	}
	path := filepath.Join(t.TempDir(), "state.json")
	must(s.Save(path, exocortexv1.Scope_SCOPE_SESSION))
	s2 := NewStore(NewRegistry())
	skipped, err := s2.Load(path)
	must(err)
	if len(skipped) != 0 {
		t.Fatalf("skipped %v", skipped)
	}
	v, ok := s2.Get("loop_active")
	if !ok {
		t.Fatal("session key not restored")
	}
	var la exocortexv1.LoopActive
	must(v.UnmarshalTo(&la))
	if !la.Active {
		t.Fatal("restored value lost its content")
	}
	if _, ok := s2.Get("error_diagnosis"); ok {
		t.Fatal("a monologue key was saved with the session scope")
	}
}

// Two writers saving to one path at once (two processes on one session's
// state) each leave a whole file behind: every Save succeeds, and what is on
// disk afterwards is one writer's snapshot, never a mix or a torn one.
func TestConcurrentSavesLeaveOneWholeFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	writers := []bool{true, false}
	stores := make([]*Store, len(writers))
	for i, active := range writers {
		stores[i] = NewStore(NewRegistry())
		if err := stores[i].Set("loop_active", &exocortexv1.LoopActive{Active: active}); err != nil {
			t.Fatal(err)
		}
	}
	const rounds = 200
	errs := make(chan error, len(stores)*rounds)
	var wg sync.WaitGroup
	for _, s := range stores {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				errs <- s.Save(path, exocortexv1.Scope_SCOPE_SESSION)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatalf("a concurrent Save failed: %v", err)
		}
	}
	got := NewStore(NewRegistry())
	if skipped, err := got.Load(path); err != nil || len(skipped) != 0 {
		t.Fatalf("Load after concurrent saves: skipped %v, err %v", skipped, err)
	}
	if _, ok := got.Get("loop_active"); !ok {
		t.Fatal("the file left by concurrent saves lost loop_active")
	}
	left, err := filepath.Glob(filepath.Join(filepath.Dir(path), "*"))
	if err != nil || len(left) != 1 {
		t.Fatalf("files left beside the state: %v (%v), want only %s", left, err, path)
	}
}
