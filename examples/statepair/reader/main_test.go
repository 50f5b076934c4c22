package main

import (
	"strings"
	"testing"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk/sdktest"
	"github.com/exocortex/exocortex/signals"
)

func TestFailureAlarm(t *testing.T) {
	client := sdktest.Serve(t, plugin())
	tests := []struct {
		name     string
		failures map[string]int32 // nil: no failure_tracker value
		want     []string         // substrings of the intervention; nil: none
	}{
		{"no tracker yet", nil, nil},
		{"one failure", map[string]int32{"shell": 1}, nil},
		{"two in a row", map[string]int32{"shell": 2, "search": 1}, []string{"shell (2 times)"}},
		{"two tools", map[string]int32{"shell": 3, "browser": 2}, []string{"browser (2 times), shell (3 times)"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var state []*exocortexv1.StateEntry
			if tt.failures != nil {
				state = append(state, sdktest.State(tracker(), &exocortexv1.FailureTracker{Failures: tt.failures}))
			}
			resp, err := client.MessageLoopEnd(t.Context(), &exocortexv1.MessageLoopEndRequest{
				Call: sdktest.Call("statepair_failure_alarm", state...), Iteration: 3})
			if err != nil {
				t.Fatal(err)
			}
			if tt.want == nil {
				if resp.Intervention != nil {
					t.Errorf("unexpected intervention %q", resp.GetIntervention())
				}
				return
			}
			for _, w := range tt.want {
				if !strings.Contains(resp.GetIntervention(), w) {
					t.Errorf("intervention %q does not mention %q", resp.GetIntervention(), w)
				}
			}
		})
	}
}

func TestRepeatAlarm(t *testing.T) {
	client := sdktest.Serve(t, plugin())
	tests := []struct {
		name  string
		added []*exocortexv1.Message
		fires bool
	}{
		{"nothing added", nil, false},
		{"plain messages", []*exocortexv1.Message{{Role: "assistant", Content: "LOOP DETECTED."}}, false},
		{"misformat signal", []*exocortexv1.Message{{Role: "user", Signal: signals.Misformat}}, false},
		{"repeat signal", []*exocortexv1.Message{
			{Role: "assistant", Content: "{}"},
			{Role: "user", Content: "any wording at all", Signal: signals.Repeat},
		}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := client.MessageLoopEnd(t.Context(), &exocortexv1.MessageLoopEndRequest{
				Call: sdktest.Call("statepair_repeat_alarm"), Added: tt.added})
			if err != nil {
				t.Fatal(err)
			}
			if fired := resp.Intervention != nil; fired != tt.fires {
				t.Errorf("intervention %q, want one: %v", resp.GetIntervention(), tt.fires)
			}
		})
	}
}

func TestManifestDeclaresTheSignalAndTheRead(t *testing.T) {
	m, err := sdktest.Serve(t, plugin()).Manifest(t.Context(), &exocortexv1.ManifestRequest{ProtocolVersion: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.GetExtensions()) != 2 {
		t.Fatalf("extensions: %v", m.GetExtensions())
	}
	alarm, repeat := m.GetExtensions()[0], m.GetExtensions()[1]
	if alarm.GetName() != "statepair_failure_alarm" || alarm.GetOrder() != 500 || alarm.GetHook() != exocortexv1.Hook_HOOK_MESSAGE_LOOP_END ||
		len(alarm.GetReads()) != 1 || alarm.GetReads()[0] != "failure_tracker" || len(alarm.GetWrites()) != 0 {
		t.Errorf("failure alarm: %v", alarm)
	}
	if repeat.GetName() != "statepair_repeat_alarm" || len(repeat.GetConsumesSignals()) != 1 || repeat.GetConsumesSignals()[0] != signals.Repeat {
		t.Errorf("repeat alarm: %v", repeat)
	}
}
