package host

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/exocortex/exocortex/core/discover"
)

// TestLoaderSkipsAreReported: what the loader passes over is a notice (the
// operator's stderr, the welcome card, `plugins status`), an event and an
// entry of Skipped for the lint: a plugin file without its execute bit, a
// configured plugin directory that does not exist, an untrusted project's
// plugins.
func TestLoaderSkipsAreReported(t *testing.T) {
	root := t.TempDir()
	user := filepath.Join(root, "user")
	addPlugin(t, user, "beta", []ext{{name: "b1", hook: "message_loop_end", order: 20}}, nil)
	if err := os.WriteFile(filepath.Join(user, "gate.py"), []byte("#!/usr/bin/env python3\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	project := filepath.Join(root, "project")
	addPlugin(t, filepath.Join(project, ".exocortex", "plugins"), "local", []ext{{name: "l1", hook: "message_loop_end", order: 10}}, nil)
	missing := filepath.Join(root, "configured-but-missing")

	log := &eventLog{}
	h, err := New(context.Background(), Options{
		Dirs: []discover.Dir{
			{Path: filepath.Join(project, ".exocortex", "plugins"), Source: discover.Project},
			{Path: user, Source: discover.User},
			{Path: missing, Source: discover.Extra},
		},
		OnEvent: log.add, StartTimeout: 5 * time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	if got := endNames(h); got != "b1" {
		t.Fatalf("table = %s", got)
	}
	notices := strings.Join(h.Notices(), "\n")
	kinds := map[discover.SkipKind]string{}
	for _, s := range h.Skipped() {
		kinds[s.Kind] = s.Path
	}
	for _, tt := range []struct {
		kind   discover.SkipKind
		path   string
		notice string
	}{
		{discover.NotExecutable, filepath.Join(user, "gate.py"), "gate.py looks like a plugin but has no execute bit"},
		{discover.MissingDir, missing, "configured-but-missing (plugin_dirs in the configuration) does not exist"},
		{discover.Untrusted, filepath.Join(project, ".exocortex", "plugins"), "the project is not trusted"},
	} {
		if kinds[tt.kind] != tt.path {
			t.Errorf("skipped %s = %q, want %q", tt.kind, kinds[tt.kind], tt.path)
		}
		if !strings.Contains(notices, tt.notice) {
			t.Errorf("notices do not say %q:\n%s", tt.notice, notices)
		}
	}
	log.wait(t, EventSkipped, "")
}
