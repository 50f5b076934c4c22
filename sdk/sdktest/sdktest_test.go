package sdktest_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/protobuf/types/known/wrapperspb"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

type echo struct{}

func note() sdk.Key[*wrapperspb.StringValue] {
	return sdk.NewKey[*wrapperspb.StringValue]("echo_note", exocortexv1.Scope_SCOPE_SESSION, "Echoed back.")
}

func (e echo) Spec() sdk.Spec {
	return sdk.Spec{Name: "echo", Hooks: []sdk.Hook{sdk.MonologueStart(e)}, Reads: []sdk.KeyRef{note()}, Writes: []sdk.KeyRef{note()}}
}

// MonologueStart writes the note it got with "!" appended, or resets it when the
// user message says so.
func (echo) MonologueStart(_ context.Context, c *sdk.Call, req *exocortexv1.MonologueStartRequest) (*exocortexv1.MonologueStartResponse, error) {
	if req.GetUserMessage().GetContent() == "forget" {
		note().Reset(c)
		return nil, nil
	}
	v, _ := note().Get(c)
	note().Set(c, wrapperspb.String(v.GetValue()+"!"+c.Context().GetSessionId()))
	return nil, nil
}

func TestStateHelpersRoundTrip(t *testing.T) {
	client := sdktest.Serve(t, sdk.Plugin{Name: "p", Extensions: []sdk.Extension{echo{}}})
	hc := sdktest.Call("echo", sdktest.State(note(), wrapperspb.String("hi")))
	if hc.GetContext().GetContextId() == "" || hc.GetContext().GetTimestampUtc() == "" {
		t.Errorf("context not filled in: %v", hc.GetContext())
	}
	resp, err := client.MonologueStart(t.Context(), &exocortexv1.MonologueStartRequest{Call: hc, UserMessage: &exocortexv1.Message{}})
	if err != nil {
		t.Fatal(err)
	}
	v, ok := sdktest.Written(t, resp.GetChanges(), note())
	if !ok || v.GetValue() != "hi!sdktest-session" {
		t.Errorf("Written = %v, %v", v, ok)
	}
	if sdktest.WasReset(resp.GetChanges(), note()) {
		t.Error("WasReset true for a write")
	}

	resp, err = client.MonologueStart(t.Context(), &exocortexv1.MonologueStartRequest{Call: sdktest.Call("echo"),
		UserMessage: &exocortexv1.Message{Content: "forget"}})
	if err != nil {
		t.Fatal(err)
	}
	if !sdktest.WasReset(resp.GetChanges(), note()) {
		t.Errorf("WasReset false: %v", resp.GetChanges())
	}
	if _, ok := sdktest.Written(t, resp.GetChanges(), note()); ok {
		t.Error("Written reports a value for a reset")
	}
	if sdktest.Call("a").GetContext().GetContextId() == sdktest.Call("a").GetContext().GetContextId() {
		t.Error("two calls share a context id")
	}
}

func TestServeFailsForAnInvalidPlugin(t *testing.T) {
	ft := &fakeT{TB: t}
	func() {
		defer func() { _ = recover() }() // fakeT.Fatal stops the helper by panicking
		sdktest.Serve(ft, sdk.Plugin{Name: "empty"})
	}()
	if !strings.Contains(ft.fatal, `plugin "empty"`) {
		t.Errorf("Serve's failure message: %q", ft.fatal)
	}
}

// fakeT records a Fatal instead of ending the test.
type fakeT struct {
	testing.TB
	fatal string
}

func (f *fakeT) Fatal(args ...any) {
	f.fatal = fmt.Sprint(args...)
	panic("fatal")
}

func TestBuildPluginCachesPerRun(t *testing.T) {
	const pkg = "github.com/exocortex/exocortex/sdk/internal/testplugin"
	first := sdktest.BuildPlugin(t, pkg)
	info1, err := os.Stat(first)
	if err != nil || info1.Mode()&0o111 == 0 {
		t.Fatalf("binary %s: %v, mode %v", first, err, info1.Mode())
	}
	// The second build of the same package is a copy of the cached binary: the
	// same bytes at another path, with the cached original untouched when the
	// copy is removed.
	second := sdktest.BuildPlugin(t, pkg)
	if first == second {
		t.Fatal("both calls returned the same path")
	}
	b1, _ := os.ReadFile(first)
	b2, _ := os.ReadFile(second)
	if string(b1) != string(b2) {
		t.Error("second binary differs from the first")
	}
	if err := os.Remove(first); err != nil {
		t.Fatal(err)
	}
	third := sdktest.BuildPlugin(t, "../internal/testplugin") // the same package, by directory
	if _, err := os.Stat(third); err != nil {
		t.Fatal(err)
	}
	// It is a plugin: run by hand, it says so.
	out, _ := exec.Command(third).CombinedOutput()
	if !strings.Contains(string(out), "This binary is a plugin") {
		t.Errorf("running %s by hand: %s", filepath.Base(third), out)
	}
}

func TestBuildPluginReportsCompileErrors(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\nfunc main() { undefined() }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// A directory outside this module builds in its own module.
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module broken\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ft := &fakeT{TB: t}
	func() {
		defer func() { _ = recover() }()
		sdktest.BuildPlugin(ft, dir)
	}()
	if !strings.Contains(ft.fatal, "undefined") || !strings.Contains(ft.fatal, dir) {
		t.Errorf("BuildPlugin failure: %q", ft.fatal)
	}
}
