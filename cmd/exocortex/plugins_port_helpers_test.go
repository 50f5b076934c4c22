package main

import (
	"context"
	"log/slog"
	"math"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strconv"
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

// a0Helpers is a v1.7 plugin tree of our own whose files use Agent Zero's helper
// modules, one file per stand-in of the layer (exocortex.a0).
const a0Helpers = "testdata/a0helpers"

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
	// The calls with no counterpart here are "needs a hand", each at its line,
	// and so is the tool prompts' read_prompt of names found at run time (the
	// port cannot see that the plugin's prompts/ has them); every other file is
	// adapted.
	needsHand := map[string][]string{
		"_83_no_counterpart.py": {
			"line 14: helpers.persist_chat.remove_chat has no counterpart here",
			"line 15: helpers.subagents.get_agents_list has no counterpart here",
			"line 16: helpers.settings.set_settings has no counterpart here",
			"line 17: plugins._model_config.helpers.model_config.build_chat_model has no counterpart here",
		},
		"_40_tools_prompt.py": {"line 16: reads a prompt file named at run time"},
		// A plugin's own module importing another that cannot load: the
		// reason is followed through both.
		"_88_chained_module.py": {"line 4: imports the plugin's own module shelf_handler.py, copied with the plugin, which cannot load: line 3 imports shelf_client.py, which cannot load: line 3 imports not_installed_shelf_sdk_xyz"},
	}
	for _, f := range r.Files {
		want, ok := needsHand[path.Base(f.Source)]
		if !ok {
			if f.Status == "needs a hand" {
				t.Errorf("%s needs a hand, want adapted: %v", f.Source, f.Notes)
			}
			continue
		}
		notes := strings.Join(f.Notes, "\n")
		if f.Status != "needs a hand" {
			t.Errorf("%s is %q, want needs a hand: %v", f.Source, f.Status, f.Notes)
		}
		for _, w := range want {
			if !strings.Contains(notes, w) {
				t.Errorf("%s: the report lacks %q:\n%s", f.Source, w, notes)
			}
		}
	}
	// A skill in the plugin's skills/ (Agent Zero's SKILL.md), and files in the
	// project, the agent's working directory.
	skill := filepath.Join(plugin, "skills", "shelf-keeping", "SKILL.md")
	if err := os.MkdirAll(filepath.Dir(skill), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(skill, []byte("---\nname: shelf-keeping\ndescription: keep the shelf tidy\n---\nSort by colour.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A secret of the plugin's own secrets.env, Agent Zero's usr/secrets.env format.
	if err := os.WriteFile(filepath.Join(plugin, "secrets.env"), []byte("# keeper\nSHELF_KEY=\"shelf-77aa\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	// The session's settings, as the app passes them to its plugins.
	cfg := config.Default()
	cfg.UtilityModel = "keeper-util:1b"
	project := t.TempDir()
	for _, f := range []string{"README.md", "src/main.go", "scratch.tmp"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(project, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(project, f), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	settings, err := cfg.PluginSettingsEnv(home, project)
	if err != nil {
		t.Fatal(err)
	}
	var plog sdktest.Buffer
	h, err := host.New(context.Background(), host.Options{
		Dirs:          []discover.Dir{{Path: filepath.Join(home, "plugins"), Source: discover.User}},
		Builtins:      []discover.Candidate{builtinCandidate(exe, "agent-tools"), builtinCandidate(exe, "memory-tools")},
		PluginEnv:     []string{config.HomeEnv + "=" + home, config.EnvProject + "=" + project, config.EnvEmbedder + "=none", settings, "TZ=Europe/Berlin"},
		PluginLog:     &plog,
		WatchDebounce: 100 * time.Millisecond,
		Memory:        homeMemory(home, "none", slog.New(slog.DiscardHandler)),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.Close() })
	// The host's token factor at each iteration, from its budget events.
	var mu sync.Mutex
	factor := map[int]float64{}
	observe := func(e loop.Event) {
		if e.Type == loop.EventBudget && e.Budget != nil {
			mu.Lock()
			factor[e.Iteration] = e.Budget.TokensPerByte
			mu.Unlock()
		}
	}
	srv, a := agentOn(t, h, observe, []scripted.Reply{
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
		{"helpers.subagents and tool_policy: the tool prompt of a tool the host gives the model kept, the other dropped", first,
			"A0-MARKER-tools found=2 kept=['A0-TOOL-memory_load: recall memories by a query'] response_allowed=True"},
		{"plugins._model_config: the call's model, the settings' utility model, no vision model", first,
			"A0-MARKER-models chat=" + srv.Model() + " vision={} utility=keeper-util:1b profile=agent0"},
		{"helpers.settings: the call's model and the host's settings; writes refused", first,
			"A0-MARKER-settings chat=" + srv.Model() + " util=keeper-util:1b telemetry=unset write=refused (SettingsReadOnly)"},
		{"helpers.localization: the host's zone (TZ)", first,
			"A0-MARKER-localization tz=Europe/Berlin noon_utc=2026-01-15 13:00+01:00 summer_local_1430_utc=12:30 clock_ok=True"},
		{"helpers.persist_chat: the chat's message files in the plugin's directory", first, "A0-MARKER-persist in_plugin=True chats=1"},
		{"no counterpart: each call raises naming itself", first,
			"A0-MARKER-no-counterpart remove_chat=named get_agents_list=named set_settings=named build_chat_model=named"},
		{"helpers.tokens: trim_to_tokens fits", first, "trimmed_fits=True trimmed_end=True"},
		{"helpers.history: output_text of the request's history", first, "A0-MARKER-history messages=1 first_label=operator keeper_said=True"},
		{"helpers.projects, runtime, file_tree: no project active, the workdir is the project, its tree drawn with the ignore patterns", first,
			"A0-MARKER-projects active=None dockerized=False same=True title=" + filepath.Base(project) + " tree=src/|main.go|README.md"},
		{"helpers.strings and helpers.tool: §§include replaced from the file, a missing one kept", first,
			"A0-MARKER-strings text=before INCLUDED-TEXT and §§include(missing.txt) cut=ab..hij response=done/False id=12"},
		{"helpers.message_queue, skills, mcp_handler, agent types", first,
			"A0-MARKER-queue empty=True refused=yes first=queued hello skills=['shelf-keeping'] loaded=Skill: shelf-keeping mcp=0 user=True msg=hi"},
	}
	for _, tt := range tests {
		if !strings.Contains(tt.in, tt.want) {
			t.Errorf("%s: the model's request lacks %q:\n%s\nplugin log:\n%s", tt.name, tt.want, tt.in, plog.String())
		}
	}
	// helpers.tokens: each iteration's count is the host's (ceil(bytes × its factor)).
	for i, req := range []string{first, second} {
		m := regexp.MustCompile(`A0-MARKER-tokens iteration=(\d+) bytes=(\d+) n=(\d+) approx=(\d+)`).FindStringSubmatch(req)
		if m == nil {
			t.Errorf("request %d lacks the tokens marker:\n%s", i, req)
			continue
		}
		it, _ := strconv.Atoi(m[1])
		bytes, _ := strconv.Atoi(m[2])
		n, _ := strconv.Atoi(m[3])
		mu.Lock()
		f, ok := factor[it]
		mu.Unlock()
		if !ok {
			t.Errorf("no budget event of iteration %d", it)
			continue
		}
		if want := int(math.Ceil(float64(bytes) * f)); n != want {
			t.Errorf("iteration %d: count_tokens of %d bytes = %d, the host counts %d (%.4f tokens a byte)", it, bytes, n, want, f)
		}
		if approx, _ := strconv.Atoi(m[4]); approx != int(float64(n)*1.1) {
			t.Errorf("iteration %d: approximate_tokens %d, want count × 1.1 = %d", it, approx, int(float64(n)*1.1))
		}
	}
	if f0, f1 := factor[1], factor[2]; f0 == f1 {
		t.Errorf("the host's factor did not change between the iterations (%.4f): the count is checked at one factor only", f0)
	}
	if strings.Count(first, token) != 1 { // the user's own message only
		t.Errorf("the secret reached the model outside the user's message:\n%s", first)
	}
	// helpers.secrets at tool_execute_before: the response tool got the value.
	if want := "the token is " + token; res.Response != want {
		t.Errorf("final answer %q, want %q (the placeholder unmasked for the tool)", res.Response, want)
	}
	log := plog.String()
	for _, want := range []string{"A0-LOG-print-style from the keeper", "A0-LOG-print-style error from the keeper", "A0-LOG-context-log from the keeper", "notification (warning): A0-LOG-notification from the keeper"} {
		if !strings.Contains(log, want) {
			t.Errorf("the plugin log lacks %q (helpers.print_style / context.log):\n%s", want, log)
		}
	}
	if strings.Contains(log, token) || strings.Contains(log, "shelf-77aa") {
		t.Errorf("a secret value reached the log:\n%s", log)
	}
	if notes, _ := filepath.Glob(filepath.Join(plugin, "chats", "*", "messages", "*.txt")); len(notes) != 2 {
		t.Errorf("helpers.persist_chat: message files %v, want one for each of the 2 iterations in chats/<session>/messages/", notes)
	}
	if b, err := os.ReadFile(filepath.Join(plugin, "keeper_data", "seen.txt")); err != nil || !strings.Contains(string(b), "kept at iteration") {
		t.Errorf("helpers.files wrote %q (%v) in the plugin's directory", b, err)
	}
}
