package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/exocortex/exocortex/core/llm/scripted"
	"github.com/exocortex/exocortex/sdk/sdktest"
	"github.com/exocortex/exocortex/toolsettings"
)

// web_search's API key reaches the one plugin that declares it, from the host
// (Host.GetSettingSecret), and nothing else: the plugin settings do not carry
// it, its variable is not in any plugin's environment (a shell the tools start
// finds it unset), and a provider answer
// that repeats it reaches the model, the events and the files masked. The key
// comes from the operator's environment (EXOCORTEX_SEARCH_API_KEY) and, in
// the second case, from config.yaml itself.
func TestWebSearchKeyFromHost(t *testing.T) {
	exe := sdktest.BuildPlugin(t, "github.com/exocortex/exocortex/cmd/exocortex")
	const key = "tvly-e2e-Kq7Zp9Wm4vX2"
	for _, from := range []string{"environment", "config.yaml"} {
		t.Run(from, func(t *testing.T) {
			var mu sync.Mutex
			var auth []string
			tavily := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				mu.Lock()
				auth = append(auth, r.Header.Get("Authorization"))
				mu.Unlock()
				// A provider that repeats the key: the host masks it.
				_ = json.NewEncoder(w).Encode(map[string]any{"results": []map[string]string{
					{"title": "Echo", "url": "https://example.com/echo", "content": "your key is " + key}}})
			}))
			defer tavily.Close()
			call, _ := json.Marshal(map[string]any{"thoughts": []string{"search"}, "headline": "search",
				"tool_name": "web_search", "tool_args": map[string]any{"query": "exocortex"}})
			// The tools' process does not have the key's variable.
			shell, _ := json.Marshal(map[string]any{"thoughts": []string{"look"}, "headline": "look",
				"tool_name": "code_execution", "tool_args": map[string]any{"runtime": "terminal", "code": "echo seen:${" + toolsettings.EnvSearchKey + ":-none}"}})
			answer, _ := json.Marshal(map[string]any{"thoughts": []string{"done"}, "headline": "done",
				"tool_name": "response", "tool_args": map[string]any{"text": "searched"}})
			srv, err := scripted.Start("ollama", scripted.Script{Source: "search", Replies: []scripted.Reply{
				{Content: string(call)},
				{Content: string(shell)},
				{Content: string(answer)},
			}})
			if err != nil {
				t.Fatal(err)
			}
			defer srv.Close()
			var wire wireLog
			addr := wire.start(t, srv.URL())
			home, project := t.TempDir(), t.TempDir()
			cfg := "model: " + srv.Model() + "\nprovider: ollama\nollama_host: " + addr + "\n" +
				"tools:\n  web_search:\n    provider: tavily\n    url: " + tavily.URL + "\n"
			env := append(os.Environ(), "EXOCORTEX_HOME="+home)
			if from == "config.yaml" {
				cfg += "    api_key: " + key + "\n"
			} else {
				env = append(env, toolsettings.EnvSearchKey+"="+key)
			}
			if err := os.WriteFile(filepath.Join(home, "config.yaml"), []byte(cfg), 0o600); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(exe, "run", "-p", "Search the web.", "--json")
			cmd.Dir, cmd.Env = project, env
			stdout, stderr := runScripted(t, cmd, srv)
			mu.Lock()
			got := strings.Join(auth, ",")
			mu.Unlock()
			if got != "Bearer "+key {
				t.Errorf("the provider saw Authorization %q, want the key from the host once", got)
			}
			wire.mu.Lock()
			bodies := strings.Join(wire.bodies, "\n")
			wire.mu.Unlock()
			for _, want := range []string{"your key is §§secret(" + toolsettings.APIKeySetting + ")", "seen:none"} {
				if !strings.Contains(bodies, want) {
					t.Errorf("no model request has %q: the search's result, masked, and the shell's answer", want)
				}
			}
			forms := leakForms(key)
			assertNoLeak(t, "the model requests", bodies, forms)
			assertNoLeak(t, "run --json", stdout.String(), forms)
			assertNoLeak(t, "stderr", stderr.String(), forms)
			if from == "environment" {
				walkNoLeak(t, home, forms) // config.yaml holds the key in the other case
			}
		})
	}
}
