package loop

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/core/discover"
	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/core/llm"
	"github.com/exocortex/exocortex/core/llm/scripted"
	"github.com/exocortex/exocortex/core/session"
	"github.com/exocortex/exocortex/prompts"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk/sdktest"
	"github.com/exocortex/exocortex/secrets"
)

const leakValue = "leak-Value/9q+Rt7"

// TestSecretsEveryPathMasked lists the paths out of the loop and checks each
// one with a plugin that knows the secret and tries every way a plugin answers
// (testdata/leakplugin): the system_prompt and message_loop_prompts_after
// blocks, a hist_add_before rewrite, a tool_execute_before rewrite of the
// arguments, a tool_execute_after annotation, a tool's result and error, the
// final response. Afterwards the value, raw and base64-encoded, is in no
// model request (the main model's and the utility model's), not in the
// history, the session file or an event, and not in what the plugin was sent;
// the tool that declares TOK received the value, the one that declares none
// the placeholder, and an unknown name is an error naming the known secrets.
func TestSecretsEveryPathMasked(t *testing.T) {
	bin := sdktest.BuildPlugin(t, "./testdata/leakplugin")
	dir, work := t.TempDir(), t.TempDir()
	installPlugin(t, dir, "leakplugin", bin)
	store, err := secrets.Load(secrets.Config{"TOK": {Env: "LEAK_TEST_TOK"}}, secrets.LoadOptions{Env: func(k string) (string, bool) {
		return leakValue, k == "LEAK_TEST_TOK"
	}})
	if err != nil {
		t.Fatal(err)
	}
	seen, args := filepath.Join(work, "seen.jsonl"), filepath.Join(work, "args.jsonl")
	h, err := host.New(t.Context(), host.Options{Dirs: []discover.Dir{{Path: dir, Source: discover.User}}, Secrets: store,
		PluginEnv: []string{"LEAK_VALUE=" + leakValue, "LEAK_SEEN=" + seen, "LEAK_ARGS=" + args}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	srv, err := scripted.NewServer(scripted.Script{Source: t.Name(), Replies: []scripted.Reply{
		toolCallReply("plain", map[string]any{"x": "§§secret(TOK)"}),
		toolCallReply("vault", map[string]any{"x": "§§secret(TOK)"}),
		toolCallReply("vault", map[string]any{"x": "§§secret(NOPE)"}),
		toolCallReply("response", map[string]any{"text": "bye"}),
		// A plugin's utility call (below), its answer holding the value.
		{Content: "the utility model's answer " + leakValue},
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	c, _ := llm.New(srv.URL())
	sess, err := session.Open(t.Context(), filepath.Join(work, "sessions"), "leak")
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	a, err := New(Options{Host: h, LLM: c, Prompts: prompts.NewLoader(), Model: srv.Model(), Observer: rec.observe, MaxIterations: 8, Session: sess})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Monologue(context.Background(), "go, and here is my token "+leakValue); err != nil {
		t.Fatal(err)
	}
	// A plugin's utility-model call whose prompt holds the value.
	answer, _, err := a.CallUtility(context.Background(), "leakplugin",
		&exocortexv1.CallUtilityModelRequest{System: "util system " + leakValue, Message: "util message " + leakValue}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if answer != "the utility model's answer §§secret(TOK)" {
		t.Errorf("the utility answer is %q", answer)
	}
	forms := []string{leakValue, base64.StdEncoding.EncodeToString([]byte(leakValue)), base64.StdEncoding.EncodeToString([]byte("k=" + leakValue))[4:16]}
	check := func(where, text string) {
		t.Helper()
		for _, f := range forms {
			if strings.Contains(text, f) {
				t.Errorf("%s holds the secret (%q):\n%.2000s", where, f, text)
			}
		}
	}
	var reqs strings.Builder
	for _, r := range srv.Requests() {
		b, _ := json.Marshal(r)
		reqs.Write(b)
	}
	check("the model requests", reqs.String())
	for _, want := range []string{"sys §§secret(TOK)", "extra §§secret(TOK)", "[hist §§secret(TOK)", "after §§secret(TOK)", "result §§secret(TOK)", "error §§secret(TOK)",
		"here is my token §§secret(TOK)", "names no secret: the known secrets are TOK", "Secrets you may use in tool arguments",
		"util system §§secret(TOK)", "util message §§secret(TOK)"} {
		if !strings.Contains(reqs.String(), want) {
			t.Errorf("no model request has %q", want)
		}
	}
	var hist strings.Builder
	for _, m := range a.History() {
		hist.WriteString(m.GetContent() + "\n")
	}
	check("the history", hist.String())
	b, _ := json.Marshal(rec.events)
	check("the events", string(b))
	check("what the plugin was sent", readFile(t, seen))
	files, _ := filepath.Glob(filepath.Join(work, "sessions", "*"))
	for _, f := range files {
		check(f, readFile(t, f))
	}
	// The tools: vault got the value, plain the placeholder (and the leak the
	// extension put in its arguments came back masked).
	got := readFile(t, args)
	var plain, vault string
	for _, line := range strings.Split(strings.TrimSpace(got), "\n") {
		var r struct {
			Tool string          `json:"tool"`
			Args json.RawMessage `json:"args"`
		}
		_ = json.Unmarshal([]byte(line), &r)
		switch {
		case r.Tool == "plain":
			plain = string(r.Args)
		case r.Tool == "vault" && vault == "":
			vault = string(r.Args)
		}
	}
	if !strings.Contains(plain, `"x":"§§secret(TOK)"`) || strings.Contains(plain, leakValue) {
		t.Errorf("the tool that declares no secret got %s", plain)
	}
	if !strings.Contains(vault, `"x":"`+leakValue+`"`) {
		t.Errorf("the tool that declares TOK got %s, want the value in x", vault)
	}
	if strings.Count(got, `"tool":"vault"`) != 1 {
		t.Errorf("the call with an unknown secret reached the tool:\n%s", got)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestSecretsCompressionMasked: history compression asks the utility model
// (a server of its own) for summaries of a history the leaking plugin wrote
// into; the summary requests carry no value, and a summary that holds one
// (the utility model's answer) is masked before it enters the prompt.
func TestSecretsCompressionMasked(t *testing.T) {
	bin := sdktest.BuildPlugin(t, "./testdata/leakplugin")
	dir, work := t.TempDir(), t.TempDir()
	installPlugin(t, dir, "leakplugin", bin)
	store, err := secrets.Load(secrets.Config{"TOK": {Env: "LEAK_TEST_TOK"}}, secrets.LoadOptions{Env: func(k string) (string, bool) {
		return leakValue, k == "LEAK_TEST_TOK"
	}})
	if err != nil {
		t.Fatal(err)
	}
	h, err := host.New(t.Context(), host.Options{Dirs: []discover.Dir{{Path: dir, Source: discover.User}}, Secrets: store,
		PluginEnv: []string{"LEAK_VALUE=" + leakValue, "LEAK_SEEN=" + filepath.Join(work, "seen"), "LEAK_ARGS=" + filepath.Join(work, "args")}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.Close)
	long := strings.Repeat("a long thought that fills the history ", 40)
	var replies []scripted.Reply
	for i := 0; i < 10; i++ {
		b, _ := json.Marshal(map[string]any{"thoughts": []string{long, fmt.Sprint(i)}, "headline": "go", "tool_name": "plain", "tool_args": map[string]any{"i": i}})
		replies = append(replies, scripted.Reply{Content: string(b)})
	}
	replies = append(replies, toolCallReply("response", map[string]any{"text": "bye"}))
	srv, err := scripted.NewServer(scripted.Script{Source: t.Name(), Replies: replies})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	var sums []scripted.Reply
	for i := 0; i < 20; i++ {
		sums = append(sums, scripted.Reply{Content: "Summary: the agent ran plain with " + leakValue + "."})
	}
	util, err := scripted.NewServer(scripted.Script{Source: t.Name() + " utility", Model: "util", Replies: sums})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { util.Close() })
	c, _ := llm.New(srv.URL())
	uc, _ := llm.New(util.URL())
	rec := &recorder{}
	a, err := New(Options{Host: h, LLM: c, UtilityLLM: uc, UtilityModel: "util", Prompts: prompts.NewLoader(), Model: srv.Model(),
		Observer: rec.observe, MaxIterations: 12, NumCtx: 4096})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Monologue(context.Background(), "go"); err != nil {
		t.Fatal(err)
	}
	compressed := false
	for _, e := range rec.events {
		compressed = compressed || e.Type == EventCompression && e.Compression.Method == "utility"
	}
	if !compressed {
		t.Fatalf("no compression by the utility model happened (%d utility requests)", len(util.Requests()))
	}
	for name, s := range map[string]*scripted.Server{"the main model": srv, "the utility model": util} {
		b, _ := json.Marshal(s.Requests())
		if strings.Contains(string(b), leakValue) {
			t.Errorf("%s's requests hold the secret", name)
		}
	}
	b, _ := json.Marshal(srv.Requests())
	if !strings.Contains(string(b), "the agent ran plain with §§secret(TOK)") {
		t.Error("the utility model's summary, masked, is in no later request")
	}
	eb, _ := json.Marshal(rec.events)
	if strings.Contains(string(eb), leakValue) {
		t.Error("an event holds the secret")
	}
}
