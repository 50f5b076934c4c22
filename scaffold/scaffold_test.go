package scaffold

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/exocortex/exocortex/core/discover"
	"github.com/exocortex/exocortex/core/hooks"
	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/core/state"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk/conformance"
	"github.com/exocortex/exocortex/sdk/python"
)

func checkout(t *testing.T) string {
	t.Helper()
	wd, _ := os.Getwd()
	c := FindCheckout(wd)
	if c == "" {
		t.Fatal("no Exocortex checkout above the test's directory")
	}
	return c
}

func run(t *testing.T, dir string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s in %s: %v\n%s", name, strings.Join(args, " "), dir, err, out)
	}
	return string(out)
}

func TestOptionsRefused(t *testing.T) {
	tests := []struct {
		o    Options
		want string
	}{
		{Options{Name: "My Plugin", Lang: Go, Hook: "message_loop_end", SDKVersion: "v1.0.0"}, "use lower-case letters"},
		{Options{Name: "notes", Lang: "rust", Hook: "message_loop_end"}, `language "rust": choose go or python`},
		{Options{Name: "notes", Lang: Go, Hook: "loop_end", SDKVersion: "v1.0.0"}, "is not a hook; choose one of: "},
		{Options{Name: "notes", Lang: Go, Hook: "message_loop_end"}, "no Exocortex checkout"},
	}
	for _, tt := range tests {
		_, err := Generate(t.TempDir(), tt.o)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%+v: err = %v, want %q", tt.o, err, tt.want)
		}
	}
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "keep"), nil, 0o644)
	if _, err := Generate(dir, Options{Name: "notes", Lang: Python, Hook: "message_loop_end"}); err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("a non-empty directory: err = %v", err)
	}
}

// TestGoForEveryHook type-checks the Go plugin and its test generated for each
// of the hooks, in one go vet run over a module holding all of them.
func TestGoForEveryHook(t *testing.T) {
	if testing.Short() {
		t.Skip("type-checks fifteen generated plugins")
	}
	co := checkout(t)
	root := t.TempDir()
	var first []string
	for i, h := range HookNames() {
		dir := filepath.Join(root, fmt.Sprintf("p%02d", i))
		files, err := Generate(dir, Options{Name: "probe-" + strings.ReplaceAll(h, "_", "-"), Lang: Go, Hook: h, Order: 500, SDKDir: co})
		if err != nil {
			t.Fatalf("%s: %v", h, err)
		}
		if i == 0 {
			first = files
		}
		// One module holds them all: drop each plugin's own go.mod and go.sum.
		os.Remove(filepath.Join(dir, "go.mod"))
		os.Remove(filepath.Join(dir, "go.sum"))
	}
	if got := strings.Join(first, " "); got != ".gitignore Makefile README.md go.mod go.sum main.go main_test.go" {
		t.Errorf("files written: %s", got)
	}
	if _, err := Generate(filepath.Join(root, "mod"), Options{Name: "mod", Lang: Go, Hook: "agent_init", SDKDir: co}); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"go.mod", "go.sum"} {
		if err := os.Rename(filepath.Join(root, "mod", f), filepath.Join(root, f)); err != nil {
			t.Fatal(err)
		}
	}
	os.RemoveAll(filepath.Join(root, "mod"))
	run(t, root, "go", "vet", "./...")
}

// TestGoPluginAsGenerated: the generated Go plugin's own tests pass, `make
// build` installs it, and the real host starts it, reads its manifest and calls
// its extension, whose state change the host's store accepts.
func TestGoPluginAsGenerated(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a generated plugin")
	}
	src := filepath.Join(t.TempDir(), "notes")
	if _, err := Generate(src, Options{Name: "notes", Lang: Go, Hook: "message_loop_prompts_after", Order: 500, SDKDir: checkout(t)}); err != nil {
		t.Fatal(err)
	}
	mod, _ := os.ReadFile(filepath.Join(src, "go.mod"))
	if !strings.Contains(string(mod), "replace github.com/exocortex/exocortex => "+checkout(t)) {
		t.Errorf("go.mod does not build against the checkout:\n%s", mod)
	}
	run(t, src, "go", "test", "./...")
	pluginDir := filepath.Join(t.TempDir(), "plugins")
	run(t, src, "make", "build", "PLUGIN_DIR="+pluginDir)
	if entries, _ := os.ReadDir(pluginDir); len(entries) != 1 || entries[0].Name() != "notes" {
		t.Fatalf("make build left %v in the plugin directory", entries)
	}
	conformance.Plugin(t, pluginDir)
	resp := callThroughHost(t, pluginDir, "notes", exocortexv1.Hook_HOOK_MESSAGE_LOOP_PROMPTS_AFTER)
	blocks := resp.(*exocortexv1.MessageLoopPromptsAfterResponse).GetPromptBlocks()
	if len(blocks) != 1 || blocks[0].GetTitle() != "NOTES" || blocks[0].GetContent() != "notes ran 1 time(s) in this monologue." {
		t.Fatalf("blocks = %v", blocks)
	}
}

// pythonMissing says why Debian's Python cannot run a plugin here, or "".
func pythonMissing() string {
	out, err := exec.Command(python.Interpreter, "-c", "import grpc, google.protobuf").CombinedOutput()
	if err != nil {
		return fmt.Sprintf("%s cannot import grpc and google.protobuf (%v: %s); install them with `apt-get install -y python3-grpcio python3-protobuf`",
			python.Interpreter, err, bytes.TrimSpace(out))
	}
	return ""
}

// TestPythonForEveryHook compiles the Python plugin and test generated for each hook.
func TestPythonForEveryHook(t *testing.T) {
	if _, err := os.Stat(python.Interpreter); err != nil {
		t.Skipf("skipping: %s is not installed", python.Interpreter)
	}
	root := t.TempDir()
	var files []string
	for i, h := range HookNames() {
		dir := filepath.Join(root, fmt.Sprintf("p%02d", i))
		if _, err := Generate(dir, Options{Name: "probe", Lang: Python, Hook: h, Order: 500}); err != nil {
			t.Fatalf("%s: %v", h, err)
		}
		files = append(files, filepath.Join(dir, "main.py"), filepath.Join(dir, "test_main.py"))
	}
	args := append([]string{"-B", "-c", "import ast, sys\nfor f in sys.argv[1:]:\n    ast.parse(open(f).read(), f)"}, files...)
	run(t, root, python.Interpreter, args...)
}

// TestPythonPluginAsGenerated: the generated Python plugin's tests pass, `make
// build` installs it, and the real host starts it and calls its extension.
func TestPythonPluginAsGenerated(t *testing.T) {
	if why := pythonMissing(); why != "" {
		t.Skipf("skipping the generated Python plugin: %s", why)
	}
	for _, hook := range []exocortexv1.Hook{exocortexv1.Hook_HOOK_MESSAGE_LOOP_END, exocortexv1.Hook_HOOK_SYSTEM_PROMPT} {
		info, _ := hooks.Of(hook)
		t.Run(info.Name, func(t *testing.T) {
			src := filepath.Join(t.TempDir(), "py-notes")
			files, err := Generate(src, Options{Name: "py-notes", Lang: Python, Hook: info.Name, Order: 500})
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(files, " "); got != ".gitignore Makefile README.md exocortex/ main.py plugin.json test_main.py" {
				t.Errorf("files written: %s", got)
			}
			run(t, src, "make", "test")
			pluginDir := filepath.Join(t.TempDir(), "plugins")
			run(t, src, "make", "build", "PLUGIN_DIR="+pluginDir)
			conformance.Plugin(t, pluginDir)
			resp := callThroughHost(t, pluginDir, "py_notes", hook)
			if sp, ok := resp.(*exocortexv1.SystemPromptResponse); ok {
				if b := sp.GetPromptBlocks(); len(b) != 1 || b[0].GetTitle() != "PY NOTES" {
					t.Fatalf("blocks = %v", b)
				}
			}
		})
	}
}

// callThroughHost loads pluginDir with the real host, checks the one extension
// named ext at hook, calls it with the request of its hook and checks that the
// host's store accepts its state change (ext_calls = 1).
func callThroughHost(t *testing.T, pluginDir, ext string, hook exocortexv1.Hook) any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	h, err := host.New(ctx, host.Options{Dirs: []discover.Dir{{Path: pluginDir, Source: discover.User}}})
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if f := h.FailedPlugins(); len(f) > 0 {
		t.Fatalf("the generated plugin did not start: %v", f[0])
	}
	exts := h.Extensions(hook)
	if len(exts) != 1 || exts[0].Name() != ext || exts[0].Spec.GetOrder() != 500 {
		t.Fatalf("extensions at %v: %v", hook, exts)
	}
	e := exts[0]
	call := &exocortexv1.HookCall{Extension: ext}
	store := state.NewStore(h.Registry())
	var resp interface {
		GetChanges() *exocortexv1.StateChanges
	}
	switch hook {
	case exocortexv1.Hook_HOOK_MESSAGE_LOOP_PROMPTS_AFTER:
		resp, err = host.Call(ctx, e, &exocortexv1.MessageLoopPromptsAfterRequest{Call: call, Iteration: 1}, exocortexv1.PluginClient.MessageLoopPromptsAfter)
	case exocortexv1.Hook_HOOK_MESSAGE_LOOP_END:
		resp, err = host.Call(ctx, e, &exocortexv1.MessageLoopEndRequest{Call: call, Iteration: 1}, exocortexv1.PluginClient.MessageLoopEnd)
	case exocortexv1.Hook_HOOK_SYSTEM_PROMPT:
		resp, err = host.Call(ctx, e, &exocortexv1.SystemPromptRequest{Call: call}, exocortexv1.PluginClient.SystemPrompt)
	default:
		t.Fatalf("no request for %v", hook)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := store.Apply(e.Access, resp.GetChanges()); err != nil {
		t.Fatalf("the host's store refuses the extension's changes: %v", err)
	}
	if _, ok := store.Get(ext + "_calls"); !ok {
		t.Fatalf("%s_calls was not written", ext)
	}
	return resp
}
