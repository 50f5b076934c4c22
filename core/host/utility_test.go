package host

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// TestUtilityLimits checks the bounds the host puts on one plugin's
// utility-model calls, with a runner that answers, or waits for its context:
// the rate (a call over it waits for its turn, and is refused when the turn
// comes after its deadline), the calls at once, the deadline of one call, and
// a host with no agent. The whole path through a real plugin and model server
// is TestPluginCallsTheUtilityModel in core/loop.
func TestUtilityLimits(t *testing.T) {
	answer := func(context.Context, string, *exocortexv1.CallUtilityModelRequest, func(string) error) (string, string, error) {
		return "ok", "m", nil
	}
	block := func(ctx context.Context, _ string, _ *exocortexv1.CallUtilityModelRequest, _ func(string) error) (string, string, error) {
		<-ctx.Done()
		return "", "", ctx.Err()
	}
	// hold keeps its slot until the test ends, whatever its deadline.
	release := make(chan struct{})
	t.Cleanup(func() { close(release) })
	hold := func(context.Context, string, *exocortexv1.CallUtilityModelRequest, func(string) error) (string, string, error) {
		<-release
		return "", "", nil
	}
	tests := []struct {
		name   string
		limits UtilityLimits
		runner UtilityRunner
		// first runs in the background before the call checked (nil: none).
		first UtilityRunner
		code  codes.Code
		msg   string
	}{
		{"answers", UtilityLimits{}, answer, nil, codes.OK, ""},
		{"no agent", UtilityLimits{}, nil, nil, codes.FailedPrecondition, "runs no agent"},
		{"over the rate", UtilityLimits{PerMinute: 1, Burst: 1, Timeout: 300 * time.Millisecond}, answer, answer,
			codes.ResourceExhausted, "over its utility-model rate of 1 calls a minute (burst 1)"},
		{"calls at once", UtilityLimits{Concurrent: 1, Timeout: 300 * time.Millisecond}, answer, hold,
			codes.ResourceExhausted, "1 utility-model calls of its own were still running"},
		{"deadline", UtilityLimits{Timeout: 100 * time.Millisecond}, block, nil,
			codes.DeadlineExceeded, "no utility-model answer within 100ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := &Host{opts: Options{Utility: tt.limits}}
			s := &Services{host: h}
			req := &exocortexv1.CallUtilityModelRequest{System: "s", Message: "m"}
			var got []*exocortexv1.CallUtilityModelReply
			send := func(r *exocortexv1.CallUtilityModelReply) error { got = append(got, r); return nil }
			if tt.first != nil {
				s.SetUtilityRunner(tt.first)
				started := make(chan struct{})
				go func() {
					close(started)
					_ = s.callUtility(t.Context(), "p", true, req, func(*exocortexv1.CallUtilityModelReply) error { return nil })
				}()
				<-started
				time.Sleep(50 * time.Millisecond) // the first holds its slot (or token)
			}
			s.SetUtilityRunner(tt.runner)
			err := s.callUtility(t.Context(), "p", true, req, send)
			if status.Code(err) != tt.code || !strings.Contains(status.Convert(err).Message(), tt.msg) {
				t.Fatalf("callUtility = %v, want %s with %q", err, tt.code, tt.msg)
			}
			if tt.code == codes.OK && (len(got) != 1 || !got[0].GetDone() || got[0].GetResponse() != "ok") {
				t.Errorf("replies %v, want one done with ok", got)
			}
		})
	}
}
