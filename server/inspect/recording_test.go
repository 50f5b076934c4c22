package inspect

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/exocortex/exocortex/core/loop"
	"github.com/exocortex/exocortex/replay"
)

// record writes a one-turn recording of session s in dir, the user text
// user.
func record(t *testing.T, dir, user string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "s.jsonl")
	if err := os.WriteFile(file, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := replay.NewRecorder(file)
	if err != nil {
		t.Fatal(err)
	}
	r.Observe(loop.Event{Type: loop.EventMonologueStart, Time: time.Now(), Text: user})
	r.Observe(loop.Event{Type: loop.EventMonologueEnd, Time: time.Now()})
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestRecordingSource: the inspector reads the recording Options.Recording
// names (a shared one), this host's own when there is no shared one, and
// says what failed otherwise.
func TestRecordingSource(t *testing.T) {
	dir := t.TempDir()
	record(t, dir, "this host's turn")
	shared := t.TempDir()
	record(t, shared, "a turn through another replica")
	tests := []struct {
		name      string
		recording func(context.Context, string) (string, error)
		want      string
		wantErr   bool
	}{
		{"no source: beside the session", nil, "this host's turn", false},
		{"a shared recording", func(context.Context, string) (string, error) {
			return replay.DirFor(filepath.Join(shared, "s.jsonl")), nil
		}, "a turn through another replica", false},
		{"none shared: this host's own", func(context.Context, string) (string, error) { return "", fmt.Errorf("none: %w", fs.ErrNotExist) }, "this host's turn", false},
		{"the shared store fails", func(context.Context, string) (string, error) { return "", errors.New("unreachable") }, "", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, turn, err := New(Options{Dir: dir, Recording: tc.recording}).loadTurn(context.Background(), "s", "")
			if tc.wantErr {
				if err == nil || errors.Is(err, ErrNotFound) {
					t.Fatalf("loadTurn: %v; want the store's failure", err)
				}
				return
			}
			if err != nil || turn.User != tc.want {
				t.Fatalf("loadTurn: turn %+v, %v; want %q", turn, err, tc.want)
			}
		})
	}
}
