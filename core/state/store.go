package state

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"

	"github.com/google/renameio/v2"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// Access is what one extension declared: the keys it may read and write.
type Access struct {
	Plugin    string
	Extension string
	Reads     []string
	Writes    []string
}

// AccessError reports a state access the declarations do not allow.
type AccessError struct {
	Plugin, Extension, Key string
	// Problem is what went wrong, e.g. "wrote a key it did not declare".
	Problem string
	// Fix says what to do about it.
	Fix string
}

func (e *AccessError) Error() string {
	return fmt.Sprintf("plugin %s, extension %s, state key %q: %s (%s)", e.Plugin, e.Extension, e.Key, e.Problem, e.Fix)
}

// Store keeps the values of the shared state. It is safe for concurrent use.
type Store struct {
	reg *Registry

	mu     sync.RWMutex
	values map[string]*anypb.Any
}

// NewStore returns an empty store for the keys of reg.
func NewStore(reg *Registry) *Store {
	return &Store{reg: reg, values: map[string]*anypb.Any{}}
}

// Registry returns the declarations the store checks against.
func (s *Store) Registry() *Registry { return s.reg }

// SetRegistry swaps the declarations (after a plugin reload). Values of keys that
// are no longer declared are kept, so a plugin that comes back finds them.
func (s *Store) SetRegistry(reg *Registry) {
	s.mu.Lock()
	s.reg = reg
	s.mu.Unlock()
}

// Read returns the current values of the keys in a.Reads that have a value, in
// the order given.
func (s *Store) Read(a Access) []*exocortexv1.StateEntry {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []*exocortexv1.StateEntry
	for _, k := range a.Reads {
		if v, ok := s.values[k]; ok {
			out = append(out, &exocortexv1.StateEntry{Key: k, Value: v})
		}
	}
	return out
}

// Get returns the raw value of key, for the host's own use (status, /wiring).
func (s *Store) Get(key string) (*anypb.Any, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	v, ok := s.values[key]
	return v, ok
}

// Set stores a value without an extension's access check (the host's own writes,
// and tests). The type is still checked against the declaration.
func (s *Store) Set(key string, m proto.Message) error {
	v, err := anypb.New(m)
	if err != nil {
		return fmt.Errorf("state key %q: %w", key, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	d, ok := s.reg.Lookup(key)
	if !ok {
		return fmt.Errorf("state key %q is not declared", key)
	}
	if v.GetTypeUrl() != d.TypeURL() {
		return fmt.Errorf("state key %q holds %s, not %s", key, d.Type, string(m.ProtoReflect().Descriptor().FullName()))
	}
	s.values[key] = v
	return nil
}

// Apply checks an extension's changes against its declaration and the key types,
// then applies all of them, or none when any is refused.
func (s *Store) Apply(a Access, ch *exocortexv1.StateChanges) error {
	if ch == nil || (len(ch.GetWrites()) == 0 && len(ch.GetResets()) == 0) {
		return nil
	}
	writes := make(map[string]bool, len(a.Writes))
	for _, k := range a.Writes {
		writes[k] = true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, w := range ch.GetWrites() {
		k := w.GetKey()
		if !writes[k] {
			return &AccessError{a.Plugin, a.Extension, k, "wrote a key it did not declare",
				"add it to the extension's writes in its manifest"}
		}
		d, ok := s.reg.Lookup(k)
		if !ok {
			return &AccessError{a.Plugin, a.Extension, k, "wrote a key nobody declares",
				"declare it in state.proto or in the plugin's manifest state_keys"}
		}
		if got := w.GetValue().GetTypeUrl(); got != d.TypeURL() {
			return &AccessError{a.Plugin, a.Extension, k,
				fmt.Sprintf("wrote a value of type %q, but the key holds %s", trimTypeURL(got), d.Type),
				"write the declared message type"}
		}
	}
	for _, k := range ch.GetResets() {
		if !writes[k] {
			return &AccessError{a.Plugin, a.Extension, k, "reset a key it did not declare",
				"add it to the extension's writes (and resets) in its manifest"}
		}
	}
	for _, w := range ch.GetWrites() {
		s.values[w.GetKey()] = w.GetValue()
	}
	for _, k := range ch.GetResets() {
		delete(s.values, k)
	}
	return nil
}

// ResetScope clears every key of the given scope. The loop calls it with
// SCOPE_ITERATION at each message_loop_start and SCOPE_MONOLOGUE at each
// monologue_start.
func (s *Store) ResetScope(scope exocortexv1.Scope) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var cleared []string
	for k := range s.values {
		if d, ok := s.reg.Lookup(k); ok && d.Scope == scope {
			delete(s.values, k)
			cleared = append(cleared, k)
		}
	}
	sort.Strings(cleared)
	return cleared
}

// savedValue is the on-disk form of one value: the Any's type URL and bytes, so the
// host can keep values of plugin-declared types it cannot decode itself.
type savedValue struct {
	Type  string `json:"type"`
	Value []byte `json:"value"`
}

// Snapshot encodes the values of the given scopes as JSON (type URL and bytes per
// key, so values of plugin-declared types the host cannot decode survive too).
func (s *Store) Snapshot(scopes ...exocortexv1.Scope) (json.RawMessage, error) {
	want := map[exocortexv1.Scope]bool{}
	for _, sc := range scopes {
		want[sc] = true
	}
	s.mu.RLock()
	out := map[string]savedValue{}
	for k, v := range s.values {
		if d, ok := s.reg.Lookup(k); ok && want[d.Scope] {
			out[k] = savedValue{Type: v.GetTypeUrl(), Value: v.GetValue()}
		}
	}
	s.mu.RUnlock()
	b, err := json.Marshal(out) // map keys are sorted: the snapshot is deterministic
	if err != nil {
		return nil, fmt.Errorf("encoding state: %w", err)
	}
	return b, nil
}

// Restore loads values from a Snapshot. A value whose key is now declared with
// another type is skipped and reported, never coerced.
func (s *Store) Restore(snap json.RawMessage) (skipped []string, err error) {
	var in map[string]savedValue
	if err := json.Unmarshal(snap, &in); err != nil {
		return nil, fmt.Errorf("the state snapshot is not valid JSON: %w", err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, v := range in {
		if d, ok := s.reg.Lookup(k); ok && d.TypeURL() != v.Type {
			skipped = append(skipped, fmt.Sprintf("%s (saved as %s, now declared as %s)", k, trimTypeURL(v.Type), d.Type))
			continue
		}
		s.values[k] = &anypb.Any{TypeUrl: v.Type, Value: v.Value}
	}
	sort.Strings(skipped)
	return skipped, nil
}

// Save writes the values of the given scopes to path, atomically.
func (s *Store) Save(path string, scopes ...exocortexv1.Scope) error {
	b, err := s.Snapshot(scopes...)
	if err != nil {
		return fmt.Errorf("saving state to %s: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return fmt.Errorf("saving state: %w", err)
	}
	// Each write has a temporary file of its own, so two writers (two
	// processes saving one session's state) never write into each other's.
	if err := renameio.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("saving state to %s: %w", path, err)
	}
	return nil
}

// Load reads values saved by Save. A missing file is not an error.
func (s *Store) Load(path string) (skipped []string, err error) {
	b, err := os.ReadFile(path)
	if os.IsNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("loading state: %w", err)
	}
	skipped, err = s.Restore(b)
	if err != nil {
		return nil, fmt.Errorf("loading state from %s: %w; move the file aside to start with empty state", path, err)
	}
	return skipped, nil
}

func trimTypeURL(u string) string {
	for i := len(u) - 1; i >= 0; i-- {
		if u[i] == '/' {
			return u[i+1:]
		}
	}
	return u
}
