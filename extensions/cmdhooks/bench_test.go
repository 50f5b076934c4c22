package cmdhooks

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
	"github.com/exocortex/exocortex/toolsettings"
)

// nativeGuard is the same check as the benchmark's hook scripts, as a native
// extension: a shell command containing "rm -rf" is blocked.
type nativeGuard struct{}

func (g nativeGuard) Spec() sdk.Spec {
	return sdk.Spec{Name: "native_guard", Hooks: []sdk.Hook{sdk.ToolExecuteBefore(g)}, Order: 901}
}

func (nativeGuard) ToolExecuteBefore(_ context.Context, _ *sdk.Call, req *exocortexv1.ToolExecuteBeforeRequest) (*exocortexv1.ToolExecuteBeforeResponse, error) {
	call, err := Translate(toolsettings.DialectClaude, req.GetToolCall().GetName(), req.GetToolCall().GetArgsJson(), "")
	if err != nil {
		return nil, err
	}
	if cmd, _ := call.Input["command"].(string); strings.Contains(cmd, "rm -rf") {
		return &exocortexv1.ToolExecuteBeforeResponse{Block: &exocortexv1.ToolBlock{Reason: "no rm -rf"}}, nil
	}
	return &exocortexv1.ToolExecuteBeforeResponse{}, nil
}

// BenchmarkToolCallGuard is the cost a guard adds to one tool call at
// tool_execute_before, through the SDK's server as a plugin process serves
// it (the gRPC round trip to the plugin, the same for both, is left out: see
// BenchmarkExtensionCall in core/loop): the check as a native extension,
// and as a command hook in shell and in Python (payload, process start,
// the script, reading its answer).
func BenchmarkToolCallGuard(b *testing.B) {
	dir := b.TempDir()
	shell := filepath.Join(dir, "guard.sh")
	py := filepath.Join(dir, "guard.py")
	for p, text := range map[string]string{
		shell: "#!/bin/sh\ngrep -q 'rm -rf' && { echo 'no rm -rf' >&2; exit 2; }\nexit 0\n",
		py:    "#!/usr/bin/env python3\nimport json, sys\nif 'rm -rf' in json.load(sys.stdin)['tool_input']['command']:\n    print('no rm -rf', file=sys.stderr); sys.exit(2)\n",
	} {
		write(b, dir, filepath.Base(p), text)
	}
	req := func(ext string) *exocortexv1.ToolExecuteBeforeRequest {
		return &exocortexv1.ToolExecuteBeforeRequest{Call: &exocortexv1.HookCall{Extension: ext, Context: &exocortexv1.Context{SessionId: "bench"}},
			ToolCall: &exocortexv1.ToolCall{Id: "c", Name: "code_execution", ArgsJson: `{"runtime":"terminal","code":"ls -la"}`}}
	}
	bridge := &Bridge{Settings: toolsettings.CommandHooks{}.WithDefaults(), Project: dir, Home: dir}
	cases := []struct {
		name string
		ext  sdk.Extension
		id   string
	}{
		{"native-extension", nativeGuard{}, "native_guard"},
		{"command-hook-sh", preTool{bridge, Hook{Event: PreToolUse, NativeEvent: PreToolUse, Dialect: "claude", Matcher: "Bash", Command: shell, Timeout: time.Minute, Index: 1}}, "hook_claude_pre_tool_use_1"},
	}
	// The interpreter itself, not a version manager's shim in front of it
	// (pyenv's adds hundreds of milliseconds a run).
	if out, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output(); err == nil {
		python := strings.TrimSpace(string(out))
		cases = append(cases, struct {
			name string
			ext  sdk.Extension
			id   string
		}{"command-hook-python", preTool{bridge, Hook{Event: PreToolUse, NativeEvent: PreToolUse, Dialect: "claude", Matcher: "Bash", Command: python + " " + py, Timeout: time.Minute, Index: 2}}, "hook_claude_pre_tool_use_2"})
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			srv, err := sdk.NewServer(sdk.Plugin{Name: "bench", Extensions: []sdk.Extension{c.ext}})
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			ds := make([]time.Duration, 0, b.N)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				start := time.Now()
				resp, err := srv.ToolExecuteBefore(ctx, req(c.id))
				if err != nil || resp.GetBlock() != nil {
					b.Fatalf("%v %v", resp, err)
				}
				ds = append(ds, time.Since(start))
			}
			b.StopTimer()
			slices.Sort(ds)
			b.ReportMetric(float64(ds[len(ds)/2].Nanoseconds())/1e3, "p50-µs")
			b.ReportMetric(float64(ds[len(ds)*99/100].Nanoseconds())/1e3, "p99-µs")
		})
	}
}
