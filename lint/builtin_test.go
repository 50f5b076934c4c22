package lint

import (
	"context"
	"log/slog"
	"testing"

	"github.com/exocortex/exocortex/core/state"
	"github.com/exocortex/exocortex/extensions/builtin"
	"github.com/exocortex/exocortex/prompts"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
	"github.com/exocortex/exocortex/signals"
	"github.com/exocortex/exocortex/wiring"
)

// builtinInput asks each built-in plugin for its manifest in process (through
// the SDK's real server, as the plugin process would answer it) and adds the real
// prompts, signals and state keys.
func builtinInput(t testing.TB) Input {
	t.Helper()
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
			t.Fatalf("built-in plugin %s: manifest: %v", name, err)
		}
		plugins = append(plugins, wiring.Plugin{Name: name, Path: "(built in) " + name, Manifest: m})
	}
	ps, err := LoadPrompts(prompts.Embedded())
	if err != nil {
		t.Fatal(err)
	}
	return Input{Model: wiring.Model{Plugins: plugins, BuiltinKeys: state.Builtin(), Prompts: ps,
		Signals: signals.All(), Services: wiring.DefaultServices()}}
}

// TestBuiltinsAreClean lints the extensions shipped in the binary: no error at
// all (warnings are logged).
func TestBuiltinsAreClean(t *testing.T) {
	in := builtinInput(t)
	got := Check(in)
	for _, f := range got {
		if f.Severity == Error {
			t.Errorf("lint error in the built-in extensions: %s %s/%s %s %s\n%s\nfix: %s", f.Code, f.Plugin, f.Extension, f.Key, f.File, f.Message, f.Fix)
		}
	}
	t.Logf("built-ins:\n%s", text(t, got))
}
