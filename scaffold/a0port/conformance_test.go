package a0port

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/exocortex/exocortex/core/hooks"
	"github.com/exocortex/exocortex/sdk/conformance"
)

// TestPortedPluginConforms ports a tree with one Agent Zero file at every hook
// point (each counting its calls in agent data and changing what Agent Zero hands
// its hook: extras, the system prompt list, tool_args, the tool Response,
// stream_data, call_data, content_data, msg, exception_data) and holds the
// ported plugin, a real Python process, to the conformance suite's
// plugin-agnostic checks (sdk/conformance.Plugin): protocol, manifest, every
// extension answering its own hook with its own response type and state the
// host's store accepts, batches and dispatch.
func TestPortedPluginConforms(t *testing.T) {
	dir := t.TempDir()
	r, err := Port(t.Context(), "testdata/allhooks", filepath.Join(dir, "a0-allhooks"), "a0-allhooks")
	if err != nil {
		t.Fatal(err)
	}
	ported := map[string]bool{}
	for _, f := range r.Files {
		if f.Status != statusNotPorted {
			ported[f.Hook] = true
		}
	}
	for _, h := range hooks.All() {
		if _, err := os.Stat(filepath.Join("testdata/allhooks/usr/extensions/python", h.Name)); err != nil {
			t.Errorf("the fixture has no file at hook %s: add one", h.Name)
		} else if !ported[h.Name] {
			t.Errorf("the file at %s was not ported", h.Name)
		}
	}
	conformance.Plugin(t, dir)
}
