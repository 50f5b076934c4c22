package lint

import (
	"strings"
	"testing"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// TestWhatReachesToolHooks: EXO071 at a tool-side hook says what that hook's
// changes reach instead of the prompt (seam 7).
func TestWhatReachesToolHooks(t *testing.T) {
	tests := []struct {
		hook exocortexv1.Hook
		want string
	}{
		{exocortexv1.Hook_HOOK_TEXT_EDITOR_WRITE_BEFORE, "what text_editor writes"},
		{exocortexv1.Hook_HOOK_TEXT_EDITOR_PATCH_BEFORE, "refuses the call"},
		{exocortexv1.Hook_HOOK_TEXT_EDITOR_READ_AFTER, "tool result the model reads at the next model call"},
		{exocortexv1.Hook_HOOK_HIST_ADD_TOOL_RESULT, "tool result the model reads at the next model call"},
		{exocortexv1.Hook_HOOK_TOOL_OUTPUT_UPDATE, "what the operator is shown"},
		{exocortexv1.Hook_HOOK_TEXT_EDITOR_WRITE_AFTER, "only state"},
		{exocortexv1.Hook_HOOK_TEXT_EDITOR_PATCH_AFTER, "only state"},
		{exocortexv1.Hook_HOOK_EMBEDDING_MODEL_CHANGED, "only state"},
	}
	for _, tt := range tests {
		if got := whatReaches(tt.hook); !strings.Contains(got, tt.want) || !strings.Contains(got, "never reach the model") {
			t.Errorf("whatReaches(%v) = %q, want it to say %q", tt.hook, got, tt.want)
		}
	}
}
