package host

import (
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// TestUseMemoryRefuses checks what UseMemory refuses before running anything:
// a tool that is not a memory tool, and a memory tool no plugin serves (the
// path that runs one is TestPortedHelperStandIns in cmd/exocortex, through a
// real memory-tools plugin).
func TestUseMemoryRefuses(t *testing.T) {
	h, err := newHost(t, t.TempDir(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		tool string
		code codes.Code
	}{
		{"code_execution", codes.InvalidArgument},
		{"text_editor", codes.InvalidArgument},
		{"memory_load", codes.FailedPrecondition},
		{"memory_save", codes.FailedPrecondition},
	}
	for _, tt := range tests {
		_, err := h.Services().UseMemory(t.Context(), &exocortexv1.UseMemoryRequest{Tool: tt.tool, ArgsJson: `{"query":"x"}`})
		if status.Code(err) != tt.code {
			t.Errorf("UseMemory(%s) = %v, want %s", tt.tool, err, tt.code)
		}
	}
}
