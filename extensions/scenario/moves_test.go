package scenario

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/encoding/protojson"

	"github.com/exocortex/exocortex/core/discover"
	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/core/state"
	"github.com/exocortex/exocortex/extensions/builtin"
	"github.com/exocortex/exocortex/lint"
	"github.com/exocortex/exocortex/prompts"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
	"github.com/exocortex/exocortex/sdk/sdktest"
	"github.com/exocortex/exocortex/signals"
	"github.com/exocortex/exocortex/wiring"
)

// seedOrchestrationGate is _17_orchestration_gate as the seed deployed it: it
// adds its block at before_main_llm_call, after the prompt is built.
type seedOrchestrationGate struct{}

func (e seedOrchestrationGate) Spec() sdk.Spec {
	return sdk.Spec{Name: "_17_orchestration_gate", Hooks: []sdk.Hook{sdk.BeforeMainLLMCall(e)}, Order: 17, InjectsPrompt: true}
}

func (seedOrchestrationGate) BeforeMainLLMCall(context.Context, *sdk.Call, *exocortexv1.BeforeMainLLMCallRequest) (*exocortexv1.BeforeMainLLMCallResponse, error) {
	return nil, nil
}

func seedManifest() *exocortexv1.ManifestResponse {
	return &exocortexv1.ManifestResponse{Plugin: "seedpack", Version: "0", Extensions: []*exocortexv1.ExtensionSpec{
		{Name: "_17_orchestration_gate", Hook: exocortexv1.Hook_HOOK_BEFORE_MAIN_LLM_CALL, Order: 17, InjectsPrompt: true},
	}}
}

// TestSeedPlacementIsRefused: the seed's placement of an injecting extension is an
// error, naming the extension, in the SDK, the host and the lint.
func TestSeedPlacementIsRefused(t *testing.T) {
	// The Go SDK refuses to serve it.
	_, err := sdk.NewServer(sdk.Plugin{Name: "seedpack", Extensions: []sdk.Extension{seedOrchestrationGate{}}})
	if err == nil || !strings.Contains(err.Error(), "_17_orchestration_gate") || !strings.Contains(err.Error(), "InjectsPrompt") {
		t.Fatalf("sdk.NewServer: %v", err)
	}

	// The host refuses a plugin (any language) whose manifest declares it.
	fixture := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/core/host/testdata/fixture")
	dir := t.TempDir()
	pdir := filepath.Join(dir, "seedpack")
	if err := os.MkdirAll(pdir, 0o755); err != nil {
		t.Fatal(err)
	}
	mb, _ := protojson.Marshal(seedManifest())
	mf := filepath.Join(pdir, "manifest.json")
	if err := os.WriteFile(mf, mb, 0o644); err != nil {
		t.Fatal(err)
	}
	pj, _ := json.Marshal(discover.Manifest{Command: []string{fixture, "-manifest", mf}})
	if err := os.WriteFile(filepath.Join(pdir, "plugin.json"), pj, 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := host.New(context.Background(), host.Options{Dirs: []discover.Dir{{Path: dir, Source: discover.User}}})
	if h != nil {
		defer h.Close()
	}
	var we *host.WiringError
	if !errors.As(err, &we) || !strings.Contains(err.Error(), "extension _17_orchestration_gate declares prompt injection at before_main_llm_call") {
		t.Fatalf("host.New: %v", err)
	}

	// The lint reports it as EXO071.
	found := false
	for _, f := range lint.Check(lint.Input{Model: wiring.Model{
		Plugins:     []wiring.Plugin{{Name: "seedpack", Path: mf, Manifest: seedManifest()}},
		BuiltinKeys: state.Builtin(),
	}}) {
		if f.Code == "EXO071" && f.Extension == "_17_orchestration_gate" && f.Severity == lint.Error {
			found = true
		}
	}
	if !found {
		t.Fatal("lint did not report EXO071 for _17_orchestration_gate")
	}
}

// TestSuiteLintsCleanAndBeliefStateIsFresh lints the built-in plugins as the
// binary serves them: no error, and every reader of bst_store sees the current
// turn's classification (no EXO033/EXO034 finding for it: the tracker runs at
// message_loop_start, before all of them).
func TestSuiteLintsCleanAndBeliefStateIsFresh(t *testing.T) {
	var plugins []wiring.Plugin
	for _, name := range builtin.Names() {
		p := builtin.Plugins()[name]
		p.Logger = slog.New(slog.DiscardHandler)
		srv, err := sdk.NewServer(p)
		if err != nil {
			t.Fatalf("built-in plugin %s: %v", name, err)
		}
		m, err := srv.Manifest(context.Background(), &exocortexv1.ManifestRequest{ProtocolVersion: sdk.ProtocolVersion})
		if err != nil {
			t.Fatal(err)
		}
		plugins = append(plugins, wiring.Plugin{Name: name, Path: "(built in) " + name, Manifest: m})
	}
	ps, err := lint.LoadPrompts(prompts.Embedded())
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range lint.Check(lint.Input{Model: wiring.Model{Plugins: plugins, BuiltinKeys: state.Builtin(), Prompts: ps,
		Signals: signals.All(), Services: wiring.DefaultServices()}}) {
		if f.Severity == lint.Error {
			t.Errorf("lint error %s %s/%s: %s", f.Code, f.Plugin, f.Extension, f.Message)
		}
		if f.Key == "bst_store" && (f.Code == "EXO033" || f.Code == "EXO034") {
			t.Errorf("%s reads a stale bst_store: %s", f.Extension, f.Message)
		}
	}
}
