package python

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestInstallWritesTheWholePackage(t *testing.T) {
	dir := t.TempDir()
	// A stale file from an earlier SDK must go.
	if err := os.MkdirAll(filepath.Join(dir, Package, "v1"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, Package, "gone.py"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := Install(dir); err != nil {
		t.Fatal(err)
	}
	var got []string
	err := filepath.WalkDir(filepath.Join(dir, Package), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			got = append(got, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"exocortex/__init__.py", "exocortex/signals.py", "exocortex/serve.py",
		"exocortex/v1/__init__.py", "exocortex/v1/hooks_pb2.py", "exocortex/v1/plugin_pb2_grpc.py", "exocortex/v1/state_pb2.pyi"} {
		if !slices.Contains(got, want) {
			t.Errorf("Install did not write %s (wrote %v)", want, got)
		}
	}
	if slices.Contains(got, "exocortex/gone.py") {
		t.Error("Install kept a file of the earlier copy")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("Install left %d entries in the plugin directory, want only %s", len(entries), Package)
	}
	// Installing again over the first copy works.
	if err := Install(dir); err != nil {
		t.Fatal(err)
	}
}

func TestInstallNamesAMissingDirectory(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "nope")
	if err := Install(missing); err == nil || !strings.Contains(err.Error(), missing) {
		t.Fatalf("got %v, want an error naming %s", err, missing)
	}
}
