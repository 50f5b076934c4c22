package cmdhooks

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/exocortex/exocortex/toolsettings"
)

// Env is what every payload and every hook's environment carry: the session,
// the project and the approval mode, as the host sent them.
type Env struct {
	SessionID      string
	TranscriptPath string
	Project        string
	// Approval is Exocortex's mode: default, auto_edit (auto-edit) or yolo.
	Approval string
}

// permissionMode names Exocortex's approval mode as Claude Code does.
func permissionMode(approval string) string {
	switch approval {
	case "auto_edit", "auto-edit":
		return "acceptEdits"
	case "yolo":
		return "bypassPermissions"
	}
	return "default"
}

// Payload is the JSON object a hook reads on stdin: the fields common to
// every event, then the event's own (fields).
func Payload(h Hook, e Env, fields map[string]any) ([]byte, error) {
	p := map[string]any{
		"session_id":      e.SessionID,
		"transcript_path": e.TranscriptPath,
		"cwd":             e.Project,
		"hook_event_name": h.NativeEvent,
		"permission_mode": permissionMode(e.Approval),
	}
	if h.Dialect == toolsettings.DialectGemini {
		p["timestamp"] = time.Now().UTC().Format(time.RFC3339Nano)
	}
	for k, v := range fields {
		p[k] = v
	}
	b, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("encoding the %s payload: %w", h.NativeEvent, err)
	}
	return b, nil
}

// HookEnv is the environment a hook runs with: the project directory under
// each tool's name, and nothing large (the payload goes on stdin).
func HookEnv(e Env) []string {
	return []string{
		"CLAUDE_PROJECT_DIR=" + e.Project,
		"GEMINI_PROJECT_DIR=" + e.Project,
		"EXOCORTEX_PROJECT=" + e.Project,
		"EXOCORTEX_HOOK_SESSION_ID=" + e.SessionID,
	}
}
