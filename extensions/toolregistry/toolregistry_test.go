package toolregistry

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/extensions/internal/hooktest"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

func TestRegistryThroughProtocol(t *testing.T) {
	home := t.TempDir()
	if err := os.WriteFile(filepath.Join(home, ManifestFile), []byte(`{"programs":[{"name":"ffmpeg","use":"convert video"},{"name":"nosuchprog","use":"x"}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	reg := NewRegistry(func() (string, error) { return home, nil })
	reg.LookPath = func(n string) (string, error) {
		if n == "ffmpeg" {
			return "/usr/bin/ffmpeg", nil
		}
		return "", errors.New("not found")
	}
	client := sdktest.Serve(t, sdk.Plugin{Name: "cognition", Extensions: []sdk.Extension{reg, Tiered{}}})
	tools := []*exocortexv1.ToolSpec{
		{Name: "text_editor", Description: "Edit files.", PromptFile: "agent.system.tool.text_editor.md"},
		{Name: "weather", Description: "Current weather for a city. Uses an API.", ParametersJsonSchema: `{"type":"object","required":["city"]}`},
	}
	for i := 0; i < 2; i++ { // the second call comes from the cache
		resp, err := client.SystemPrompt(t.Context(), &exocortexv1.SystemPromptRequest{Call: sdktest.Call("tool_registry"), Tools: tools})
		if err != nil {
			t.Fatal(err)
		}
		cat, ok := sdktest.Written(t, resp.GetChanges(), catalogKey())
		if !ok || len(cat.GetTools()) != 2 {
			t.Fatalf("catalog %v", cat)
		}
		bs := resp.GetPromptBlocks()
		if len(bs) != 2 || bs[0].GetContent() != "- weather(city): Current weather for a city." || !strings.Contains(bs[1].GetContent(), "- ffmpeg: convert video") || strings.Contains(bs[1].GetContent(), "nosuchprog") {
			t.Fatalf("blocks %v", bs)
		}
	}
	if p, err := ParseManifest([]byte(`{"jq": "query JSON"}`)); err != nil || len(p) != 1 || p[0].Name != "jq" {
		t.Fatalf("flat manifest: %v %v", p, err)
	}
	if _, err := ParseManifest([]byte(`[1]`)); err == nil {
		t.Fatal("a list of numbers parsed")
	}
	if p, err := ParseManifest([]byte(Template)); err != nil || len(p) != 0 {
		t.Fatalf("template: %v %v", p, err)
	}
	// A home without the file gets the template, once.
	empty := t.TempDir()
	reg2 := NewRegistry(func() (string, error) { return empty, nil })
	c2 := sdktest.Serve(t, sdk.Plugin{Name: "cognition", Extensions: []sdk.Extension{reg2}})
	if _, err := c2.SystemPrompt(t.Context(), &exocortexv1.SystemPromptRequest{Call: sdktest.Call("tool_registry")}); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(filepath.Join(empty, ManifestFile)); err != nil || string(b) != Template {
		t.Fatalf("template not written: %q %v", b, err)
	}
}

func TestTieredThroughProtocol(t *testing.T) {
	client := sdktest.Serve(t, sdk.Plugin{Name: "cognition", Extensions: []sdk.Extension{Tiered{}}})
	cat := &exocortexv1.ToolCatalog{Tools: []*exocortexv1.ToolSpec{
		{Name: "text_editor", Description: "Edit files.", ParametersJsonSchema: `{"type":"object"}`},
		{Name: "code_execution", Description: "Run code.", ParametersJsonSchema: `{"type":"object","required":["runtime"]}`},
		{Name: "web_search", Description: "Search."},
	}}
	ledger := &exocortexv1.EvidenceLedger{Entries: []*exocortexv1.Evidence{{ToolName: "code_execution", ArgsJson: `{"runtime":"terminal","code":"ls"}`, Ok: true}}}
	hist := hooktest.Msgs("user", "go", "assistant", "{}", "tool:code_execution", "a b", "assistant", "{}", "tool:text_editor", "ok", "assistant", "{}", "tool:code_execution", "c")
	resp, err := client.MessageLoopPromptsAfter(t.Context(), &exocortexv1.MessageLoopPromptsAfterRequest{
		Call:    sdktest.Call("tiered_tool_injection", sdktest.State(catalogKey(), cat), sdktest.State(ledgerKey(), ledger)),
		History: hist,
	})
	if err != nil {
		t.Fatal(err)
	}
	seen, ok := sdktest.Written(t, resp.GetChanges(), seenKey())
	if !ok || seen.GetCalls()["code_execution"] != 2 || strings.Join(seen.GetRecent(), ",") != "text_editor,code_execution" || seen.GetHistorySeen() != int32(len(hist)) {
		t.Fatalf("seen %v", seen)
	}
	bs := resp.GetPromptBlocks()
	if len(bs) != 1 {
		t.Fatalf("blocks %v", bs)
	}
	got := bs[0].GetContent()
	if strings.Index(got, "### code_execution") > strings.Index(got, "### text_editor") || !strings.Contains(got, `Last call that worked: {"runtime":"terminal","code":"ls"}`) || strings.Contains(got, "web_search") {
		t.Fatalf("specs:\n%s", got)
	}
	// The same history again: nothing new counted.
	resp, err = client.MessageLoopPromptsAfter(t.Context(), &exocortexv1.MessageLoopPromptsAfterRequest{
		Call: sdktest.Call("tiered_tool_injection", sdktest.State(seenKey(), seen)), History: hist,
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := sdktest.Written(t, resp.GetChanges(), seenKey()); ok {
		t.Fatal("counted the same history twice")
	}
}
