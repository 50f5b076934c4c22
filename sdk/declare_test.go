package sdk_test

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// A plugin whose Spec.Hooks declares a hook its extension has no method for
// does not compile, and the compiler names the method; the same plugin with
// the method compiles. Each case is built as a package of this module added
// through an overlay (go build -overlay), as an author's plugin would be.
func TestDeclaredHookWithoutMethodDoesNotCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("builds plugins")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	const head = `package main

import (
	"context"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

type guard struct{}

func (g guard) Spec() sdk.Spec {
	return sdk.Spec{Name: "guard", Hooks: []sdk.Hook{sdk.ToolExecuteBefore(g), sdk.MessageLoopEnd(g)}}
}

func (guard) ToolExecuteBefore(context.Context, *sdk.Call, *exocortexv1.ToolExecuteBeforeRequest) (*exocortexv1.ToolExecuteBeforeResponse, error) {
	return nil, nil
}

func main() { sdk.Serve(sdk.Plugin{Name: "guard", Extensions: []sdk.Extension{guard{}}}) }
`
	tests := []struct {
		name   string
		method string // the second hook's method, as written
		want   string // in the compiler's output; "" means it compiles
	}{
		{"method present", "MessageLoopEnd", ""},
		{"method missing", "", "missing method MessageLoopEnd"},
		{"method misspelled", "MessageLoopEnds", "missing method MessageLoopEnd"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := head
			if tt.method != "" {
				src += "\nfunc (guard) " + tt.method + "(context.Context, *sdk.Call, *exocortexv1.MessageLoopEndRequest) (*exocortexv1.MessageLoopEndResponse, error) {\n\treturn nil, nil\n}\n"
			}
			out, err := buildOverlay(t, goBin, src)
			switch {
			case tt.want == "" && err != nil:
				t.Fatalf("the plugin with every declared method did not compile: %v\n%s", err, out)
			case tt.want != "" && err == nil:
				t.Fatalf("the plugin declaring MessageLoopEnd without its method compiled")
			case tt.want != "" && !strings.Contains(out, tt.want):
				t.Fatalf("the build failed, but not naming the method (want %q):\n%s", tt.want, out)
			}
		})
	}
}

// buildOverlay builds src as the main package of a directory of this module
// that exists only in an overlay, and returns the compiler's output.
func buildOverlay(t *testing.T, goBin, src string) (string, error) {
	t.Helper()
	dir := t.TempDir()
	sdkDir, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	pkgDir := filepath.Join(sdkDir, "internal", "undeclaredhook")
	file := filepath.Join(dir, "main.go")
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	overlay, _ := json.Marshal(map[string]any{"Replace": map[string]string{filepath.Join(pkgDir, "main.go"): file}})
	overlayFile := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(overlayFile, overlay, 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), goBin, "build", "-overlay", overlayFile, "-o", filepath.Join(dir, "plugin"), "./internal/undeclaredhook")
	out, err := cmd.CombinedOutput()
	return string(out), err
}
