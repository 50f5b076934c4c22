package signals_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/exocortex/exocortex/prompts"
	"github.com/exocortex/exocortex/signals"
	"github.com/exocortex/exocortex/signals/internal/gen"
)

// TestGeneratedFilesAreCurrent fails when a prompt's signal: line changed but
// go generate was not run, so the constants can never drift from the prompts.
func TestGeneratedFilesAreCurrent(t *testing.T) {
	sigs, err := gen.Collect(os.DirFS("../prompts"), "prompts")
	if err != nil {
		t.Fatal(err)
	}
	goSrc, err := gen.Go(sigs)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []struct {
		path string
		want []byte
	}{
		{"signals_gen.go", goSrc},
		{filepath.Join("..", "sdk", "python", "exocortex", "signals.py"), gen.Python(sigs)},
	} {
		got, err := os.ReadFile(f.path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, f.want) {
			t.Errorf("%s is stale: run `go generate ./signals` (make generate)", f.path)
		}
	}
}

func TestAllAndKnown(t *testing.T) {
	all := signals.All()
	if len(all) == 0 {
		t.Fatal("no signals")
	}
	for i, s := range all {
		if !signals.Known(s.Value) {
			t.Errorf("Known(%q) = false", s.Value)
		}
		if i > 0 && all[i-1].Value >= s.Value {
			t.Errorf("All is not sorted: %q before %q", all[i-1].Value, s.Value)
		}
	}
	for _, s := range []string{"", "Repeat", "REPEAT", "repeat ", "LOOP DETECTED."} {
		if signals.Known(s) {
			t.Errorf("Known(%q) = true", s)
		}
	}
	// A fresh slice each call: a caller cannot corrupt the registry.
	all[0].Value = "changed"
	if signals.All()[0].Value == "changed" {
		t.Error("All returned shared storage")
	}
	if signals.Repeat != "repeat" || signals.ToolNotFound != "tool_not_found" {
		t.Error("constant values do not match their snake_case names")
	}
}

// TestEverySignalHasItsPrompt loads each signal's message through the prompt
// loader, the path the loop uses to send it.
func TestEverySignalHasItsPrompt(t *testing.T) {
	l := prompts.NewLoader()
	for _, s := range signals.All() {
		p, err := l.LoadSignal(s.Value)
		if err != nil {
			t.Errorf("%s: %v", s.Name, err)
			continue
		}
		if "prompts/"+p.Name+prompts.Ext != s.PromptFile {
			t.Errorf("%s: loaded %s, generated file says %s", s.Name, p.Name, s.PromptFile)
		}
	}
}
