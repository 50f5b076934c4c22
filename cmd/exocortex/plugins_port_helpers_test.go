package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/exocortex/exocortex/config"
	"github.com/exocortex/exocortex/core/discover"
	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/core/llm/scripted"
	"github.com/exocortex/exocortex/scaffold/a0port"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// a0Helpers is a v1.7 plugin tree of our own whose files use Agent Zero's helper
// modules, one file per stand-in of the layer (exocortex.a0).
const a0Helpers = "testdata/a0helpers"

// syncBuffer is a bytes.Buffer safe for the host's concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestPortedHelperStandIns ports the tree and runs it in a real host with the
// built-in agent-tools and memory-tools, on the scripted model: each file's
// effect, made through a stand-in of an Agent Zero helper module, reaches the
// model (or the tool, or the log) as the file's would in Agent Zero.
func TestPortedHelperStandIns(t *testing.T) {
	const token = "tok-5f3a9c1e"
	t.Setenv("A0_SECRET_KEEPER_TOKEN", token)
	home := t.TempDir()
	plugin := filepath.Join(home, "plugins", "a0-keeper")
	r, err := a0port.Port(t.Context(), a0Helpers, plugin, "a0-keeper")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range r.Files {
		if f.Status == "needs a hand" {
			t.Errorf("%s needs a hand, want adapted: %v", f.Source, f.Notes)
		}
	}
	// A secret of the plugin's own secrets.env, Agent Zero's usr/secrets.env format.
	if err := os.WriteFile(filepath.Join(plugin, "secrets.env"), []byte("# keeper\nSHELF_KEY=\"shelf-77aa\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	builtin := func(name string) discover.Candidate {
		return discover.Candidate{Name: name, Path: exe + " plugin serve " + name,
			Command: []string{exe, "plugin", "serve", name}, WorkDir: filepath.Dir(exe),
			Dir: discover.Dir{Path: "(built in)", Source: discover.Builtin}}
	}
	var plog syncBuffer
	h, err := host.New(context.Background(), host.Options{
		Dirs:          []discover.Dir{{Path: filepath.Join(home, "plugins"), Source: discover.User}},
		Builtins:      []discover.Candidate{builtin("agent-tools"), builtin("memory-tools")},
		PluginEnv:     []string{config.HomeEnv + "=" + home, config.EnvProject + "=" + t.TempDir(), config.EnvEmbedder + "=none"},
		PluginLog:     &plog,
		WatchDebounce: 100 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	srv, a := agentOn(t, h, nil, []scripted.Reply{
		{Content: `{"thoughts":["go on"],"headline":"thinking","tool_name":"unknown_tool_xyz","tool_args":{}}`},
		{Content: `{"thoughts":["done"],"headline":"answering","tool_name":"response","tool_args":{"text":"the token is §§secret(KEEPER_TOKEN)"}}`},
	})
	res, err := a.Monologue(context.Background(), "my token is "+token+" and the shelf key shelf-77aa, keep them safe")
	if err != nil {
		t.Fatalf("monologue: %v\nplugin log:\n%s", err, plog.String())
	}
	reqs := srv.Requests()
	if len(reqs) < 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	text := func(i int) string {
		var b strings.Builder
		for _, m := range reqs[i].Messages {
			b.WriteString(m.Role + ": " + m.Content + "\n")
		}
		return b.String()
	}
	first, second := text(0), text(1)
	tests := []struct {
		name, in, want string
	}{
		{"helpers.plugins: the config, config.json over default_config.yaml", first, "A0-MARKER-config mode=operator-mode limit=3 other=None"},
		{"helpers.files: written and read in the plugin's directory", first, "A0-MARKER-files kept at iteration "},
		{"helpers.files: outside the declared roots refused", first, "; exists=True outside=refused"},
		{"helpers.dirty_json: lenient reply parsed", first, "A0-MARKER-dirty-json fact=lenient ids=[3, 1] ok=True cut=[2, 4]"},
		{"helpers.errors: format_error ends with the exception", first, "A0-MARKER-errors last=RepairableException: the keeper cannot reach its shelf traced=True"},
		{"helpers.secrets: both secrets masked", first, "masked=my token is §§secret(KEEPER_TOKEN) and the shelf key §§secret(SHELF_KEY), keep them safe"},
		{"helpers.secrets: the streaming filter masks across chunks", first, "streamed=my token is §§secret(KEEPER_TOKEN) and the shelf key §§secret(SHELF_KEY)"},
		{"helpers.secrets: keys named, values not", first, "keys=['KEEPER_TOKEN', 'SHELF_KEY'] SecretsManager(keys=['KEEPER_TOKEN', 'SHELF_KEY'])"},
		{"memory: the fragment found by an Agent Zero filter", first, "A0-MARKER-memory found=[\"the keeper's code word is heliotrope\"] area=fragments plain=True forgot=1 after=0 key=True default=0.7"},
		{"a file importing another file of the plugin", first, "A0-MARKER-cross-import from _71_plugin_config"},
		{"helpers.defer: the background task's result at the next iteration", second, "A0-MARKER-defer result=42 on a0-Background ready=True"},
	}
	for _, tt := range tests {
		if !strings.Contains(tt.in, tt.want) {
			t.Errorf("%s: the model's request lacks %q:\n%s\nplugin log:\n%s", tt.name, tt.want, tt.in, plog.String())
		}
	}
	if strings.Count(first, token) != 1 { // the user's own message only
		t.Errorf("the secret reached the model outside the user's message:\n%s", first)
	}
	// helpers.secrets at tool_execute_before: the response tool got the value.
	if want := "the token is " + token; res.Response != want {
		t.Errorf("final answer %q, want %q (the placeholder unmasked for the tool)", res.Response, want)
	}
	log := plog.String()
	for _, want := range []string{"A0-LOG-print-style from the keeper", "A0-LOG-print-style error from the keeper", "A0-LOG-context-log from the keeper"} {
		if !strings.Contains(log, want) {
			t.Errorf("the plugin log lacks %q (helpers.print_style / context.log):\n%s", want, log)
		}
	}
	if strings.Contains(log, token) || strings.Contains(log, "shelf-77aa") {
		t.Errorf("a secret value reached the log:\n%s", log)
	}
	if b, err := os.ReadFile(filepath.Join(plugin, "keeper_data", "seen.txt")); err != nil || !strings.Contains(string(b), "kept at iteration") {
		t.Errorf("helpers.files wrote %q (%v) in the plugin's directory", b, err)
	}
}
