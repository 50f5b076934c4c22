package agentzero

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestConfineKeepsToTheSessionsFiles(t *testing.T) {
	dir := t.TempDir()
	for _, p := range []string{"a.files/notes.txt", "b.files/other.txt"} {
		full := filepath.Join(dir, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte("x"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// A link from a's files to a file outside them.
	if err := os.Symlink("/etc/passwd", filepath.Join(dir, "a.files", "passwd")); err != nil {
		t.Fatal(err)
	}
	api := New(nil, dir)
	dir = api.dir
	for _, tc := range []struct {
		ctx, path string
		want      string // the resolved path, or "" for a refusal
		why       string
	}{
		{"a", "notes.txt", filepath.Join(dir, "a.files", "notes.txt"), ""},
		{"a", filepath.Join(dir, "a.files", "notes.txt"), filepath.Join(dir, "a.files", "notes.txt"), ""},
		{"", filepath.Join(dir, "b.files", "other.txt"), filepath.Join(dir, "b.files", "other.txt"), ""},
		{"a", "/etc/passwd", "", "outside the sessions' files"},
		{"a", "../b.files/other.txt", "", "climbs out with .."},
		{"a", "sub/../../b.files/other.txt", "", "climbs out with .."},
		{"a", filepath.Join(dir, "b.files", "other.txt"), "", "another session's file"},
		{"a", "passwd", "", "outside the sessions' files"},
		{"", "notes.txt", "", "needs context_id"},
		{"a", filepath.Join(dir, "a.jsonl"), "", "not in a session's files directory"},
		{"a", "", "", "empty"},
	} {
		got, err := api.confine(tc.ctx, tc.path)
		if tc.want != "" {
			if err != nil || got != tc.want {
				t.Errorf("confine(%q, %q) = %q, %v; want %q", tc.ctx, tc.path, got, err, tc.want)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tc.why) || !strings.Contains(err.Error(), `"`+tc.path+`"`) {
			t.Errorf("confine(%q, %q) = %q, %v; want a refusal naming the path and %q", tc.ctx, tc.path, got, err, tc.why)
		}
	}
}
