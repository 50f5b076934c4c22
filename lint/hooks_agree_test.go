package lint

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/exocortex/exocortex/core/hooks"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
	"github.com/exocortex/exocortex/sdk/python"
)

// hookView is what one party knows of a hook.
type hookView struct {
	Name   string `json:"name"`
	Method string `json:"method"`
	Prompt bool   `json:"prompt"`
	Tool   bool   `json:"tool"`
}

// The host's hook table (core/hooks), the Go SDK, the Python SDK and the lint
// agree on the hooks: the same names, RPCs, prompt hooks and tool hooks, and
// the same firing order. All of them follow from the protocol by `make
// generate`, so a hook added to proto/ reaches every one of them or this fails
// naming the party that lags.
func TestHooksAgreeAcrossHostSDKsAndLint(t *testing.T) {
	var host []hookView
	for _, in := range hooks.All() {
		host = append(host, hookView{in.Name, in.Method, in.InjectsPrompt, in.ForTools})
	}
	byEnum := func(vs []hookView) []hookView {
		out := slices.Clone(vs)
		slices.SortFunc(out, func(a, b hookView) int {
			return int(exocortexv1.Hook_value["HOOK_"+strings.ToUpper(a.Name)]) - int(exocortexv1.Hook_value["HOOK_"+strings.ToUpper(b.Name)])
		})
		return out
	}
	want := byEnum(host)
	if n := len(exocortexv1.Hook_name) - 1; len(want) != n {
		t.Fatalf("core/hooks has %d hooks, the protocol's Hook enum %d", len(want), n)
	}

	var goSDK []hookView
	for _, h := range sdk.Hooks() {
		in, _ := hooks.Of(h)
		goSDK = append(goSDK, hookView{sdk.HookName(h), in.Method, sdk.IsPromptHook(h), sdk.IsToolHook(h)})
	}
	compare(t, "the Go SDK (sdk.Hooks, IsPromptHook, IsToolHook)", goSDK, want)

	var lintNames []string
	for name := range hookNames() {
		lintNames = append(lintNames, name)
	}
	var wantNames, wantTools []string
	for _, v := range host {
		wantNames = append(wantNames, v.Name)
		if v.Tool {
			wantTools = append(wantTools, v.Name)
		}
	}
	slices.Sort(lintNames)
	sorted := slices.Sorted(slices.Values(wantNames))
	if !slices.Equal(lintNames, sorted) {
		t.Errorf("the lint's hook names %v, the host's %v", lintNames, sorted)
	}
	for _, name := range wantTools {
		if !strings.Contains(forToolsHooks(), name) {
			t.Errorf("the lint's for_tools hooks (%s) lack %s", forToolsHooks(), name)
		}
	}

	py, order := pythonHooks(t)
	if py == nil {
		return
	}
	compare(t, "the Python SDK (exocortex.hooks.HOOKS, _hooks_gen)", py, want)
	if !slices.Equal(order, wantNames) {
		t.Errorf("the Python SDK's FIRING_ORDER %v, the host's %v", order, wantNames)
	}
}

func compare(t *testing.T, who string, got, want []hookView) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s has %d hooks, the host %d: run `make generate`", who, len(got), len(want))
	}
	for i := range min(len(got), len(want)) {
		if got[i] != want[i] {
			t.Errorf("%s, hook %d: %+v, the host's %+v: run `make generate`", who, i, got[i], want[i])
		}
	}
}

// pythonHooks asks the Python SDK for its view of the hooks, in enum order,
// and its firing order; nil when Debian's Python with grpc is not here (a
// failure under EXOCORTEX_CONFORMANCE_PYTHON=require, as in make test).
func pythonHooks(t *testing.T) ([]hookView, []string) {
	t.Helper()
	script := `
import json
from exocortex.hooks import HOOKS
from exocortex._hooks_gen import TOOL_HOOKS, FIRING_ORDER
print(json.dumps({"hooks": [{"name": h.name, "method": h.method, "prompt": h.prompt, "tool": h.hook in TOOL_HOOKS} for h in HOOKS],
                  "order": list(FIRING_ORDER)}))
`
	dir, err := filepath.Abs("../sdk/python")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), python.Interpreter, "-c", script)
	cmd.Env = append(os.Environ(), "PYTHONPATH="+dir)
	out, err := cmd.Output()
	if err != nil {
		why := err.Error()
		if ee, ok := err.(*exec.ExitError); ok {
			why += ": " + string(ee.Stderr)
		}
		if os.Getenv("EXOCORTEX_CONFORMANCE_PYTHON") == "require" {
			t.Fatalf("the Python SDK's hooks could not be read with %s: %s", python.Interpreter, why)
		}
		t.Skipf("the Python SDK's hooks could not be read with %s (install python3-grpcio python3-protobuf): %s", python.Interpreter, why)
		return nil, nil
	}
	var got struct {
		Hooks []hookView `json:"hooks"`
		Order []string   `json:"order"`
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("the Python SDK's hooks: %v in %s", err, out)
	}
	return got.Hooks, got.Order
}
