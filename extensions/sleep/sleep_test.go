package sleep

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
	"github.com/exocortex/exocortex/sdk/sdktest"
)

func TestTriggerThroughProtocol(t *testing.T) {
	home := t.TempDir()
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	tr := Trigger{Home: func() (string, error) { return home, nil }, Now: func() time.Time { return now }}
	client := sdktest.Serve(t, sdk.Plugin{Name: "supervision", Extensions: []sdk.Extension{tr}})
	var st *exocortexv1.SleepState
	call := func(sup *exocortexv1.SupervisorState) {
		t.Helper()
		entries := []*exocortexv1.StateEntry{sdktest.State(supKey(), sup)}
		if st != nil {
			entries = append(entries, sdktest.State(stateKey(), st))
		}
		resp, err := client.ToolExecuteAfter(t.Context(), &exocortexv1.ToolExecuteAfterRequest{
			Call: sdktest.Call("sleep_trigger", entries...), ToolCall: &exocortexv1.ToolCall{Name: "x"}, Result: &exocortexv1.ToolResult{},
		})
		if err != nil {
			t.Fatal(err)
		}
		st, _ = sdktest.Written(t, resp.GetChanges(), stateKey())
	}
	req := filepath.Join(home, RequestFile)
	// A loop fires (tier 1), then the supervisor recovers: a request.
	call(&exocortexv1.SupervisorState{LoopTier: 1, P4LoopFired: true})
	if _, err := os.Stat(req); err == nil || !st.GetLoopSeen() {
		t.Fatalf("requested during the loop, or loop not noted: %v", st)
	}
	call(&exocortexv1.SupervisorState{LoopTier: 0, P4LoopFired: true})
	b, err := os.ReadFile(req)
	if err != nil {
		t.Fatal(err)
	}
	var r Request
	if err := json.Unmarshal(b, &r); err != nil || !r.LoopFired || r.ToolCalls != 2 || !strings.Contains(r.Reasons[0], "loop") || r.Session != "sdktest-session" {
		t.Fatalf("request %s (%v)", b, err)
	}
	if st.GetToolCallsSince() != 0 || st.GetRequests() != 1 {
		t.Fatalf("state after the request: %v", st)
	}
	// The call threshold, but not within the hour.
	os.Remove(req)
	st.ToolCallsSince = CallThreshold
	call(&exocortexv1.SupervisorState{})
	if _, err := os.Stat(req); err == nil {
		t.Fatal("requested again within the hour")
	}
	now = now.Add(2 * MinInterval)
	call(&exocortexv1.SupervisorState{})
	if _, err := os.Stat(req); err != nil {
		t.Fatalf("no request after %d calls: %v", CallThreshold, err)
	}
}
