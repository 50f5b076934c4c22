// Command guardplugin is a test plugin for guards that fail (core/loop's
// failclosed.go). Run as "guardplugin tools" it provides text_editor (write
// only, under $GUARD_DIR), shell (runs sh -c in $GUARD_DIR) and response. Run
// as "guardplugin guard" it serves one guard at the hook $GUARD_HOOK
// (tool_execute_before by default, or text_editor_write_before) that fails as
// $GUARD_MODE says:
//
//	error  returns an error (a raised exception, in Python terms)
//	panic  panics in the handler
//	crash  exits the process mid-call
//	hang   never answers (until the host's deadline)
//
// With GUARD_FAIL_OPEN=1 the guard declares fail_open.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

func fail(ctx context.Context) error {
	switch os.Getenv("GUARD_MODE") {
	case "panic":
		panic("the guard's rule table is corrupt")
	case "crash":
		os.Exit(3)
	case "hang":
		<-ctx.Done()
		return ctx.Err()
	}
	return errors.New("HandledException: writing outside the sandbox is forbidden")
}

func spec(name string, h sdk.Hook, tools ...string) sdk.Spec {
	return sdk.Spec{Name: name, Hooks: []sdk.Hook{h}, Order: 10, Description: "A guard that fails (test).", FailOpen: os.Getenv("GUARD_FAIL_OPEN") == "1",
		ForTools: tools}
}

type toolGuard struct{}

func (g toolGuard) Spec() sdk.Spec {
	return spec("guard", sdk.ToolExecuteBefore(g), "text_editor", "shell")
}

func (toolGuard) ToolExecuteBefore(ctx context.Context, _ *sdk.Call, _ *exocortexv1.ToolExecuteBeforeRequest) (*exocortexv1.ToolExecuteBeforeResponse, error) {
	return nil, fail(ctx)
}

type writeGuard struct{}

func (g writeGuard) Spec() sdk.Spec { return spec("guard", sdk.TextEditorWriteBefore(g)) }

func (writeGuard) TextEditorWriteBefore(ctx context.Context, _ *sdk.Call, _ *exocortexv1.TextEditorWriteBeforeRequest) (*exocortexv1.TextEditorWriteBeforeResponse, error) {
	return nil, fail(ctx)
}

func editor(_ context.Context, _ *sdk.Call, raw json.RawMessage) (*exocortexv1.ToolResult, error) {
	var a struct{ Action, Path, Content string }
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, err
	}
	if a.Action != "write" {
		return nil, fmt.Errorf("this test editor only writes, not %q", a.Action)
	}
	if err := os.WriteFile(filepath.Join(os.Getenv("GUARD_DIR"), a.Path), []byte(a.Content), 0o644); err != nil {
		return nil, err
	}
	return &exocortexv1.ToolResult{Content: "wrote " + a.Path}, nil
}

func shell(ctx context.Context, _ *sdk.Call, raw json.RawMessage) (*exocortexv1.ToolResult, error) {
	var a struct{ Command string }
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, "sh", "-c", a.Command)
	cmd.Dir = os.Getenv("GUARD_DIR")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", out, err)
	}
	return &exocortexv1.ToolResult{Content: string(out)}, nil
}

func respond(_ context.Context, _ *sdk.Call, raw json.RawMessage) (*exocortexv1.ToolResult, error) {
	var a struct{ Text string }
	if err := json.Unmarshal(raw, &a); err != nil {
		return nil, err
	}
	return &exocortexv1.ToolResult{Content: a.Text, BreakLoop: true}, nil
}

func main() {
	if len(os.Args) > 1 && os.Args[1] == "tools" {
		sdk.Serve(sdk.Plugin{Name: "guardtools", Version: "test", Tools: []sdk.Tool{
			{Name: "text_editor", Description: "Writes files (test).", Run: editor},
			{Name: "shell", Description: "Runs a shell command (test).", Run: shell},
			{Name: "response", Description: "Ends the monologue with text (test).", Run: respond},
		}})
		return
	}
	var ext sdk.Extension = toolGuard{}
	if os.Getenv("GUARD_HOOK") == "text_editor_write_before" {
		ext = writeGuard{}
	}
	sdk.Serve(sdk.Plugin{Name: "guard", Version: "test", Extensions: []sdk.Extension{ext}})
}
