package main

import (
	"context"
	"encoding/json"
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
	"github.com/exocortex/exocortex/lint"
	"github.com/exocortex/exocortex/prompts"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/scaffold/a0port"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

// realTreeFigures is docs/porting.md's measurement of one session with a
// ported real tree: per file of the report, its status, whether the layer
// serves it, whether it loaded (the plugin's manifest has it), whether its hook
// fired, whether it failed, and whether the status says what happened (ported
// as is or adapted: loads and runs without an error; not ported or
// overridden: not served; needs a hand: the port's own prediction, that it
// cannot load or not, came true); then the totals.
func realTreeFigures(t *testing.T, h *host.Host, plugin string, r *a0port.Report, ran, failed map[string][]string) string {
	t.Helper()
	var points []struct{ File, Name, Hook string }
	if b, err := os.ReadFile(filepath.Join(plugin, "a0", "points.json")); err == nil {
		_ = json.Unmarshal(b, &points)
	}
	loaded := map[string]bool{}
	running := false
	for _, st := range h.Status() {
		if st.Name == "a0-real" {
			running = st.State == host.StateRunning
			for _, e := range st.Extensions {
				loaded[e.Name] = loaded[e.Name] || !e.Disabled
			}
		}
	}
	predicted := map[string]bool{}
	for _, wh := range r.Wiring {
		for _, e := range wh.Extensions {
			predicted[e.Source] = predicted[e.Source] || e.Runs
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "plugin running under the wiring check: %v\n", running)
	var inReport, loadedN, ranOK, ranErr, idle, match int
	for _, f := range r.Files {
		inReport++
		name := ""
		for _, p := range points {
			if strings.HasSuffix(f.Source, strings.TrimPrefix(p.File, "extensions/python/")) && strings.HasSuffix(p.File, filepath.Base(f.Source)) && p.Hook == f.Hook {
				name = p.Name
			}
		}
		ld := name != "" && loaded[name]
		errs := failed[name]
		outcome := "not served"
		switch {
		case name == "":
		case !ld:
			outcome = "does not load"
		case len(errs) > 0:
			outcome = "error: " + errs[0]
		case len(ran[name]) == 0:
			outcome = "loads; its hook did not fire"
		default:
			outcome = "ran, no error"
		}
		if ld {
			loadedN++
			switch {
			case len(errs) > 0:
				ranErr++
			case len(ran[name]) > 0:
				ranOK++
			default:
				idle++
			}
		}
		ok := false
		switch f.Status {
		case "ported as is", "adapted by the layer":
			ok = ld && len(errs) == 0
		case "not ported", "overridden":
			ok = name == ""
		case "needs a hand":
			// The port's own prediction, that it loads or not (the wiring's
			// runs), came true.
			ok = name != "" && predicted[f.Source] == ld
		}
		if ok {
			match++
		}
		fmt.Fprintf(&b, "file %s | %s | %s | status matches: %v\n", f.Source, f.Status, outcome, ok)
	}
	fmt.Fprintf(&b, "files in the report: %d\nfiles that load: %d (ran with no error %d, loaded but their hook did not fire %d, ran with an error %d)\nstatuses that match the run: %d of %d\n",
		inReport, loadedN, ranOK, idle, ranErr, match, inReport)
	return b.String()
}

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
// 500 characters and reasoning before it, memory_load with a §§secret
// placeholder), a reply that is no tool call, then the response tool with
// one; then a second task whose
// model call fails), and writes to EXOCORTEX_A0_OUT the porting report, every
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
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	// As a user ports it: the command, which also checks the tree against the
	// plugins installed here (the built-ins) and says what the host would refuse.
	if _, errOut, code := runExo(t, exe, t.TempDir(), home, "plugins", "port", tree, "--out", plugin, "--name", "a0-real"); code != 0 {
		t.Fatalf("plugins port: exit %d: %s", code, errOut)
	}
	var r a0port.Report
	if b, err := os.ReadFile(filepath.Join(plugin, "port.json")); err != nil || json.Unmarshal(b, &r) != nil {
		t.Fatalf("reading the report: %v", err)
	}
	t.Logf("ported %d files in %v", len(r.Files), time.Since(start))
	cfg := config.Default()
	cfg.UtilityModel = "util-model:1b"
	project := t.TempDir()
	settings, err := cfg.PluginSettingsEnv(home, project)
	if err != nil {
		t.Fatal(err)
	}
	var plog sdktest.Buffer
	h, err := host.New(context.Background(), host.Options{
		Dirs:        []discover.Dir{{Path: filepath.Join(home, "plugins"), Source: discover.User}},
		Builtins:    []discover.Candidate{builtinCandidate(exe, "agent-tools"), builtinCandidate(exe, "memory-tools")},
		PluginEnv:   []string{config.HomeEnv + "=" + home, config.EnvProject + "=" + project, config.EnvEmbedder + "=none", settings},
		PluginLog:   &plog,
		WiringCheck: lint.HostCheck(prompts.Embedded()),
		Memory:      homeMemory(home, "none", slog.New(slog.DiscardHandler)),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	var mu sync.Mutex
	ran := map[string][]string{}
	failed := map[string][]string{}
	observe := func(e loop.Event) {
		if e.Plugin == "a0-real" && e.Extension != "" {
			mu.Lock()
			if !slices.Contains(ran[e.Extension], e.Hook) {
				ran[e.Extension] = append(ran[e.Extension], e.Hook)
			}
			if e.Error != "" {
				failed[e.Extension] = append(failed[e.Extension], e.Hook+": "+e.Error)
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
		{Content: `{"thoughts":["list"],"headline":"listing","tool_name":"code_execution","tool_args":{"runtime":"terminal","code":"seq 1 200"}}`,
			Thinking: "the notes may be long; list them first"},
		{Content: `{"thoughts":["check"],"headline":"checking","tool_name":"memory_load","tool_args":{"query":"token §§secret(API_TOKEN)"}}`},
		// A reply that is not a tool call: error_format makes the correction.
		{Content: "I will answer now."},
		{Content: `{"thoughts":["done"],"headline":"answering","tool_name":"response","tool_args":{"text":"the token is §§secret(API_TOKEN)"}}`},
		// A second task, whose model call fails: message_loop_exception (the
		// handle_exception points) fires; what the tree's files make of it is
		// recorded (Agent Zero's own tree ends the monologue on a critical
		// error, its retry plugin retries once).
		{Error: "the model is overloaded", Status: 400},
		{Content: `{"thoughts":["done"],"headline":"answering","tool_name":"response","tool_args":{"text":"retried"}}`},
	})
	// A monologue that fails (a guard that does not load stops every tool, the
	// answer too) is recorded all the same, and fails the test at the end.
	// As the terminal runs a session: the welcome card's banners, the
	// operator's message through user_message_ui, the monologue, then a tick
	// of the job loop (startup_migration fired with agent_init).
	banners, bannersErr := a.Banners(context.Background(), &exocortexv1.FrontendContext{Client: "terminal", Hostname: "localhost"})
	text, uiErr := a.UserMessageUI(context.Background(), "my api token is "+token+", remember my project notes")
	res, monoErr := a.Monologue(context.Background(), text)
	tickErr := a.JobTick(context.Background(), 1)
	second, secondErr := a.Monologue(context.Background(), "and once more")
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
	for _, b := range banners {
		fmt.Fprintf(&ranText, "banner %s (%s, %d): %s\n", b.GetId(), b.GetType(), b.GetPriority(), b.GetTitle())
	}
	for what, err := range map[string]error{"banners": bannersErr, "user_message_ui": uiErr, "job_loop": tickErr} {
		if err != nil {
			fmt.Fprintf(&ranText, "%s: %v\n", what, err)
		}
	}
	for _, m := range a.History() {
		if m.GetRole() == "assistant" && m.GetSenderId() != "" {
			fmt.Fprintf(&ranText, "first assistant message: %.80s\n", m.GetContent())
			break
		}
	}
	if res == nil {
		res = &loop.Result{}
	}
	fmt.Fprintf(&ranText, "final response: %s\n", res.Response)
	if second != nil {
		fmt.Fprintf(&ranText, "second task (its model call fails): response %q\n", second.Response)
	}
	if secondErr != nil {
		fmt.Fprintf(&ranText, "second task (its model call fails): %v\n", secondErr)
	}
	if monoErr != nil {
		fmt.Fprintf(&ranText, "monologue failed: %v\n", monoErr)
	}
	for _, m := range a.History() {
		if strings.Contains(m.GetContent(), "guards fail closed") {
			fmt.Fprintf(&ranText, "stopped by a guard: %s\n", m.GetContent())
		}
	}
	ranText.WriteString(realTreeFigures(t, h, plugin, &r, ran, failed))
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
	if monoErr != nil {
		t.Errorf("monologue: %v (the record in %s says what stopped it)", monoErr, out)
	}
}
