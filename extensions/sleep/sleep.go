// Package sleep holds the sleep trigger: it decides when the memory's sleep
// consolidation should run and asks for it by writing a request file, which the
// consolidation (a separate process, run between sessions) picks up. The trigger
// never consolidates by itself: a tool call must stay fast.
//
// Sleep trigger (tool_execute_after, order 60, as in the seed). After every tool
// call it counts the call in sleep_state (persistent, so the count spans
// sessions) and notes whether the supervisor fired a loop (p4_loop_fired). It
// requests consolidation when, and at most once per MinInterval:
//   - CallThreshold tool calls were made since the last request, or
//   - a loop fired since the last request and the supervisor has recovered
//     (loop tier back to 0): the loop-period memories should be adjudicated
//     while the session is fresh.
//
// The request is $EXOCORTEX_HOME/sleep/request.json, written atomically:
//
//	{"requested_utc": "...", "session": "...", "reasons": ["..."], "tool_calls": 100, "loop_fired": true}
//
// A newer request replaces an older one not yet taken.
package sleep

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/google/renameio/v2"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

// Rules of the trigger.
const (
	CallThreshold = 100
	MinInterval   = time.Hour
)

// RequestFile is the request's path inside the home directory.
const RequestFile = "sleep/request.json"

// Request is the content of the request file.
type Request struct {
	RequestedUTC string   `json:"requested_utc"`
	Session      string   `json:"session"`
	Reasons      []string `json:"reasons"`
	ToolCalls    int32    `json:"tool_calls"`
	LoopFired    bool     `json:"loop_fired"`
}

func stateKey() sdk.Key[*exocortexv1.SleepState]    { return sdk.KeyOf[*exocortexv1.SleepState]() }
func supKey() sdk.Key[*exocortexv1.SupervisorState] { return sdk.KeyOf[*exocortexv1.SupervisorState]() }

// Trigger is the sleep trigger. Home gives the Exocortex home directory; Now the
// time (time.Now when nil).
type Trigger struct {
	Home func() (string, error)
	Now  func() time.Time
}

// File declares the request file.
func File() *exocortexv1.FileSpec {
	return &exocortexv1.FileSpec{Id: "sleep_request", Path: "$EXOCORTEX_HOME/" + RequestFile, Access: exocortexv1.Access_ACCESS_WRITE,
		User: "sleep_trigger", Doc: "A request for sleep consolidation: when, why, the session; replaced by a newer one, removed by the consolidation."}
}

// Spec declares it.
func (e Trigger) Spec() sdk.Spec {
	return sdk.Spec{
		Name:            "sleep_trigger",
		Hooks:           []sdk.Hook{sdk.ToolExecuteAfter(e)},
		Order:           60,
		Reads:           []sdk.KeyRef{stateKey(), supKey()},
		Writes:          []sdk.KeyRef{stateKey()},
		Description:     fmt.Sprintf("Requests sleep consolidation (sleep/request.json) after %d tool calls or after a loop the supervisor recovered from, at most hourly.", CallThreshold),
		EffectsDeclared: true,
	}
}

// ToolExecuteAfter counts the call and requests consolidation when due.
func (tr Trigger) ToolExecuteAfter(_ context.Context, c *sdk.Call, _ *exocortexv1.ToolExecuteAfterRequest) (*exocortexv1.ToolExecuteAfterResponse, error) {
	now := time.Now()
	if tr.Now != nil {
		now = tr.Now()
	}
	st, _ := stateKey().Get(c)
	if st == nil {
		st = &exocortexv1.SleepState{}
	}
	st.ToolCallsSince++
	sup, _ := supKey().Get(c)
	if sup.GetP4LoopFired() && sup.GetLoopTier() > 0 {
		st.LoopSeen = true
	}
	var reasons []string
	if st.ToolCallsSince >= CallThreshold {
		reasons = append(reasons, fmt.Sprintf("%d tool calls since the last consolidation", st.ToolCallsSince))
	}
	if st.LoopSeen && sup.GetLoopTier() == 0 {
		reasons = append(reasons, "a loop fired and the agent recovered: adjudicate loop-period memories")
	}
	if last, err := time.Parse(time.RFC3339, st.GetLastRequestedUtc()); err == nil && now.Sub(last) < MinInterval {
		reasons = nil
	}
	if len(reasons) > 0 && tr.Home != nil {
		home, err := tr.Home()
		if err == nil {
			err = writeRequest(filepath.Join(home, RequestFile), Request{
				RequestedUTC: now.UTC().Format(time.RFC3339), Session: c.Context().GetSessionId(),
				Reasons: reasons, ToolCalls: st.ToolCallsSince, LoopFired: st.LoopSeen,
			})
		}
		if err != nil {
			// Keep counting: the next call tries again.
			c.Logger().Warn("sleep consolidation could not be requested", "err", err)
		} else {
			c.Logger().Info("sleep consolidation requested", "reasons", reasons)
			st.ToolCallsSince, st.LoopSeen = 0, false
			st.Requests++
			st.LastRequestedUtc = now.UTC().Format(time.RFC3339)
		}
	}
	stateKey().Set(c, st)
	return nil, nil
}

// writeRequest writes the request atomically (renameio: a temporary file of its own, then a rename).
func writeRequest(path string, r Request) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	b, _ := json.MarshalIndent(r, "", "  ")
	if err := renameio.WriteFile(path, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}
