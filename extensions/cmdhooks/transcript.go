package cmdhooks

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

// transcript keeps the session's transcript the hooks' transcript_path
// names: one JSON line per message added to the history (the operator's,
// the model's replies, tool results, injected signals), after every other
// hist_add_before extension changed it, as Claude Code's transcripts are
// (type, message {role, content}, timestamp, sessionId, uuid).
type transcript struct{ b *Bridge }

func (t transcript) Spec() sdk.Spec {
	return sdk.Spec{Name: "command_hooks_transcript", Hooks: []sdk.Hook{sdk.HistAddBefore(t)}, Order: 10000,
		Description: "Writes the session's JSONL transcript that command hooks read (transcript_path)."}
}

// line is one transcript record.
type line struct {
	Type      string `json:"type"`
	SessionID string `json:"sessionId"`
	UUID      string `json:"uuid"`
	Timestamp string `json:"timestamp"`
	Message   struct {
		Role    string `json:"role"`
		Content string `json:"content"`
	} `json:"message"`
	ToolName string `json:"toolName,omitempty"`
	Signal   string `json:"signal,omitempty"`
}

func (t transcript) HistAddBefore(_ context.Context, c *sdk.Call, req *exocortexv1.HistAddBeforeRequest) (*exocortexv1.HistAddBeforeResponse, error) {
	e := t.b.env(c)
	m := req.GetMessage()
	var l line
	l.Type, l.SessionID, l.UUID = m.GetRole(), e.SessionID, m.GetId()
	l.Timestamp = m.GetTimestampUtc()
	if l.Timestamp == "" {
		l.Timestamp = time.Now().UTC().Format(time.RFC3339Nano)
	}
	l.Message.Role, l.Message.Content = m.GetRole(), m.GetContent()
	l.ToolName, l.Signal = m.GetToolName(), m.GetSignal()
	if err := appendLine(e.TranscriptPath, l); err != nil {
		return nil, err
	}
	return &exocortexv1.HistAddBeforeResponse{}, nil
}

// touch creates the transcript at path if it does not exist.
func touch(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("creating the transcript's directory for %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("creating the transcript %s: %w", path, err)
	}
	return f.Close()
}

func appendLine(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("encoding a transcript line: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("creating the transcript's directory for %s: %w", path, err)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return fmt.Errorf("opening the transcript %s: %w", path, err)
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("writing the transcript %s: %w", path, err)
	}
	return f.Close()
}
