package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/sdk/sdktest"
)

// TestLintReportsAnUnsetOrder lints a real plugin process whose extension sets
// no order: EXO044 names the plugin, the extension and the hook.
func TestLintReportsAnUnsetOrder(t *testing.T) {
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	plug := sdktest.BuildPlugin(t, "./testdata/unordered")
	home, wd := t.TempDir(), t.TempDir()
	copyExecutable(t, plug, filepath.Join(wd, "plugins", "unordered"))
	out, stderr, _ := runExo(t, exe, wd, home, "lint", "--json", "--dir", "plugins")
	r := report(t, out)
	f := find(r, "EXO044", "unordered", "")
	if f == nil {
		t.Fatalf("no EXO044 for the extension without an order; stderr:\n%s\n%s", stderr, out)
	}
	if f.Extension != "unordered_first" || !strings.Contains(f.Message, "message_loop_end") || !strings.Contains(f.Message, "order 0") {
		t.Errorf("EXO044 does not name the extension, hook and order: %+v", f)
	}
}
