package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-plugin"

	"github.com/exocortex/exocortex/core/discover"
	"github.com/exocortex/exocortex/core/host"
	"github.com/exocortex/exocortex/extensions/builtin"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

// TestInProcessPluginCrashRestart serves a built-in in the host's process and
// checks the crash policy a process has: a call past its deadline fails and
// counts as a crash, the next call starts the plugin afresh (its state from
// nothing, its environment the plugin environment), and Close stops every
// server it started.
func TestInProcessPluginCrashRestart(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	var mu sync.Mutex
	var served []<-chan struct{}
	serve := func(ctx context.Context, env []string, stderr io.Writer) (*plugin.ReattachConfig, <-chan struct{}, error) {
		getenv := builtin.Getenv(env)
		n := 0 // per start: a restart begins from nothing
		p := sdk.Plugin{Name: "counter", Version: "1", Tools: []sdk.Tool{
			{Name: "count", Description: "counts its calls", Run: func(context.Context, *sdk.Call, json.RawMessage) (*exocortexv1.ToolResult, error) {
				n++
				return &exocortexv1.ToolResult{Content: fmt.Sprintf("%d %s", n, getenv("COUNTER_TEST"))}, nil
			}},
			{Name: "hang", Description: "never answers in time", Run: func(context.Context, *sdk.Call, json.RawMessage) (*exocortexv1.ToolResult, error) {
				<-release
				return &exocortexv1.ToolResult{}, nil
			}},
		}}
		rc, done, err := sdk.ServeInProcess(ctx, p, stderr)
		if err == nil {
			mu.Lock()
			served = append(served, done)
			mu.Unlock()
		}
		return rc, done, err
	}
	ctx := context.Background()
	h, err := host.New(ctx, host.Options{
		Builtins:  []discover.Candidate{{Name: "counter", Path: "(test) counter", Dir: discover.Dir{Path: "(built in)", Source: discover.Builtin}}},
		InProcess: map[string]host.InProcessServer{"counter": serve},
		PluginEnv: []string{"COUNTER_TEST=first", "COUNTER_TEST=sent"},
	})
	if err != nil {
		t.Fatal(err)
	}
	call := func(name string, timeout time.Duration) (string, error) {
		tool, ok := h.Tool(name)
		if !ok {
			t.Fatalf("no tool %s", name)
		}
		resp, err := h.ExecuteTool(ctx, tool, &exocortexv1.ExecuteToolRequest{ToolCall: &exocortexv1.ToolCall{Name: name}}, timeout)
		return resp.GetResult().GetContent(), err
	}
	for _, c := range []struct {
		tool, want string
		fails      bool
	}{
		{"count", "1 sent", false},
		{"count", "2 sent", false},
		{"hang", "", true},
		{"count", "1 sent", false}, // restarted: a fresh plugin
	} {
		got, err := call(c.tool, 500*time.Millisecond)
		if (err != nil) != c.fails || (!c.fails && got != c.want) {
			t.Fatalf("%s: %q, %v; want %q (fails: %v)", c.tool, got, err, c.want, c.fails)
		}
	}
	st := h.Status()
	if len(st) != 1 || st[0].State != host.StateRunning || st[0].Crashes != 1 || st[0].Restarts != 1 {
		t.Errorf("status %+v, want counter running after one crash and one restart", st)
	}
	h.Close()
	mu.Lock()
	defer mu.Unlock()
	if len(served) != 2 {
		t.Fatalf("%d servers started, want 2 (the first and the restart)", len(served))
	}
	for i, done := range served {
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			t.Errorf("server %d still serving after Close", i)
		}
	}
	if strings.Contains(st[0].LastError, "panic") {
		t.Errorf("last error %q", st[0].LastError)
	}
}
