package main

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/exocortex/exocortex/config"
	"github.com/exocortex/exocortex/core/discover"
	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/core/llm/scripted"
	"github.com/exocortex/exocortex/core/loop"
	"github.com/exocortex/exocortex/scaffold/a0port"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// EnvA0Tree names an Agent Zero tree for TestPortRealTree (docs/porting.md,
// "Ported against Agent Zero v1.7's own extensions"); EnvA0Out the directory
// it writes the session's record to.
const (
	EnvA0Tree = "EXOCORTEX_A0_TREE"
	EnvA0Out  = "EXOCORTEX_A0_OUT"
)

// TestPortRealTree is the measurement of docs/porting.md against a real Agent
// Zero tree, kept outside the repository (skipped without EXOCORTEX_A0_TREE):
// it ports the tree and runs one session with the ported plugin on the real
// host (the built-in agent-tools and memory-tools, the scripted model, four
// replies: three tool calls (memory_load, code_execution with a result over
// 500 characters, memory_load with a §§secret placeholder), then the response
// tool with one), and writes to EXOCORTEX_A0_OUT the porting report, every
// model request, the plugin log and which ported extensions ran at which hook
// (ran.txt), for the table in docs/porting.md to be read from.
func TestPortRealTree(t *testing.T) {
	tree := os.Getenv(EnvA0Tree)
	if tree == "" {
		t.Skip("set " + EnvA0Tree + " to an Agent Zero tree (and " + EnvA0Out + " to a directory for the record)")
	}
	out := os.Getenv(EnvA0Out)
	if out == "" {
		out = t.TempDir()
	}
	const token = "tok-9d41e7b2"
	t.Setenv("A0_SECRET_API_TOKEN", token)
	home := t.TempDir()
	plugin := filepath.Join(home, "plugins", "a0-real")
	start := time.Now()
	r, err := a0port.Port(t.Context(), tree, plugin, "a0-real")
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("ported %d files in %v", len(r.Files), time.Since(start))
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	cfg := config.Default()
	cfg.UtilityModel = "util-model:1b"
	settings, err := cfg.PluginSettingsEnv()
	if err != nil {
		t.Fatal(err)
	}
	var plog sdktest.Buffer
	h, err := host.New(context.Background(), host.Options{
		Dirs:      []discover.Dir{{Path: filepath.Join(home, "plugins"), Source: discover.User}},
		Builtins:  []discover.Candidate{builtinCandidate(exe, "agent-tools"), builtinCandidate(exe, "memory-tools")},
		PluginEnv: []string{config.HomeEnv + "=" + home, config.EnvProject + "=" + t.TempDir(), config.EnvEmbedder + "=none", settings},
		PluginLog: &plog,
		Memory:    homeMemory(home, "none", slog.New(slog.DiscardHandler)),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	var mu sync.Mutex
	ran := map[string][]string{}
	observe := func(e loop.Event) {
		if e.Plugin == "a0-real" && e.Extension != "" {
			mu.Lock()
			if !slices.Contains(ran[e.Extension], e.Hook) {
				ran[e.Extension] = append(ran[e.Extension], e.Hook)
			}
			mu.Unlock()
		}
	}
	// The utility model answers every call of the ported files (query
	// preparation, the post-filter, memorizing) with one JSON list, which each
	// reads as what it asked for or rejects as its own code says.
	utility := make([]scripted.Reply, 12)
	for i := range utility {
		utility[i] = scripted.Reply{Content: `["the user keeps project notes in notes.md"]`}
	}
	srv, usrv, a := agentWithUtility(t, h, observe, utility, []scripted.Reply{
		{Content: `{"thoughts":["look"],"headline":"recalling","tool_name":"memory_load","tool_args":{"query":"project notes"}}`},
		{Content: `{"thoughts":["list"],"headline":"listing","tool_name":"code_execution","tool_args":{"runtime":"terminal","code":"seq 1 200"}}`},
		{Content: `{"thoughts":["check"],"headline":"checking","tool_name":"memory_load","tool_args":{"query":"token §§secret(API_TOKEN)"}}`},
		{Content: `{"thoughts":["done"],"headline":"answering","tool_name":"response","tool_args":{"text":"the token is §§secret(API_TOKEN)"}}`},
	})
	res, err := a.Monologue(context.Background(), "my api token is "+token+", remember my project notes")
	if err != nil {
		t.Fatalf("monologue: %v\nplugin log:\n%s", err, plog.String())
	}
	var reqs strings.Builder
	for i, req := range srv.Requests() {
		fmt.Fprintf(&reqs, "===== request %d\n", i+1)
		for _, m := range req.Messages {
			reqs.WriteString(m.Role + ": " + m.Content + "\n")
		}
	}
	for i, req := range usrv.Requests() {
		fmt.Fprintf(&reqs, "===== utility request %d\n", i+1)
		for _, m := range req.Messages {
			reqs.WriteString(m.Role + ": " + m.Content + "\n")
		}
	}
	var ranText strings.Builder
	for _, ext := range slices.Sorted(func(yield func(string) bool) {
		for k := range ran {
			if !yield(k) {
				return
			}
		}
	}) {
		fmt.Fprintf(&ranText, "%s %s\n", ext, strings.Join(ran[ext], ","))
	}
	fmt.Fprintf(&ranText, "final response: %s\n", res.Response)
	chats, _ := filepath.Glob(filepath.Join(plugin, "chats", "*", "messages", "*"))
	for _, c := range chats {
		b, _ := os.ReadFile(c)
		rel, _ := filepath.Rel(plugin, c)
		fmt.Fprintf(&ranText, "chat message file %s: %d bytes\n", rel, len(b))
	}
	for name, text := range map[string]string{"requests.txt": reqs.String(), "plugin.log": plog.String(), "ran.txt": ranText.String()} {
		if err := os.WriteFile(filepath.Join(out, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if b, err := os.ReadFile(filepath.Join(plugin, "PORT.md")); err == nil {
		if err := os.WriteFile(filepath.Join(out, "PORT.md"), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("record in %s:\n%s", out, ranText.String())
}
