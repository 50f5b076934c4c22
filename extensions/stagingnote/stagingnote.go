// Package stagingnote provides staging_note: the agent writes a note, or records
// an artifact it produced, into $EXOCORTEX_HOME/staging.jsonl, the inbox that
// session start-up and consolidation read (package staging).
//
// Each call appends one record:
//
//	{"v":1,"seq":7,"ts":"...","kind":"note","session":"SESSION","payload":{
//	  "text":"...","title":"...","path":"...","tags":["..."],
//	  "request_id":"...","message_id":"...","agent_profile":"...","tool":"staging_note"}}
//
// kind is "note" or "artifact" (an artifact names the file it produced in path);
// session is the calling session's id. staging.jsonl has one writer at a time
// (staging.Open locks it), and other plugins and commands write it too, so the
// tool opens the log, appends and closes it on every call (package stagelog),
// waiting a little for a writer that holds the lock before it reports who does.
package stagingnote

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/exocortex/exocortex/extensions/internal/stagelog"
	"github.com/exocortex/exocortex/extensions/internal/toolargs"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

// ToolName is the tool's name.
const ToolName = "staging_note"

// FileName is the staging log inside the home directory.
const FileName = stagelog.StagingFile

// Record kinds written by the tool.
const (
	KindNote     = "note"
	KindArtifact = stagelog.KindArtifact
)

// Payload is the payload of a staging_note record.
type Payload struct {
	Text         string   `json:"text,omitempty"`
	Title        string   `json:"title,omitempty"`
	Path         string   `json:"path,omitempty"`
	Tags         []string `json:"tags,omitempty"`
	RequestID    string   `json:"request_id,omitempty"`
	MessageID    string   `json:"message_id,omitempty"`
	AgentProfile string   `json:"agent_profile,omitempty"`
	Tool         string   `json:"tool"`
}

// Note is the staging_note tool.
type Note struct {
	home   func() (string, error)
	logger *slog.Logger
}

// New returns the tool; home gives the Exocortex home directory on each call.
func New(home func() (string, error)) *Note {
	// Recovery notices (a torn last line cut off) go to the host's log.
	return &Note{home: home, logger: slog.New(sdk.NewHostLogHandler(os.Stderr, ToolName))}
}

// WithLogger sends the recovery notices to l instead of the process's stderr
// (a plugin served inside the host: its stderr is the operator's terminal).
func (n *Note) WithLogger(l *slog.Logger) *Note {
	if l != nil {
		n.logger = l
	}
	return n
}

// File declares staging.jsonl for the plugin's manifest.
func File() *exocortexv1.FileSpec {
	return stagelog.File(stagelog.StagingID, FileName, exocortexv1.Access_ACCESS_WRITE, ToolName,
		`Notes and artifacts the agent records: kind "note" or "artifact", payload {text, title, path, tags, request_id, message_id, agent_profile, tool}.`)
}

type args struct {
	Kind  toolargs.Text    `json:"kind"`
	Text  toolargs.Text    `json:"text"`
	Note  toolargs.Text    `json:"note"`
	Title toolargs.Text    `json:"title"`
	Path  toolargs.Text    `json:"path"`
	Tags  toolargs.Strings `json:"tags"`
}

// Tool is the staging_note tool.
func (n *Note) Tool() sdk.Tool {
	return sdk.Tool{
		Name:        ToolName,
		Description: "Record a note, or an artifact you produced, in the staging log that later sessions and memory consolidation read.",
		Parameters: `{"type":"object","properties":{` +
			`"kind":{"type":"string","enum":["note","artifact"],"description":"note (default) or artifact."},` +
			`"text":{"type":"string","description":"The note, or what the artifact is."},` +
			`"title":{"type":"string","description":"A short title."},` +
			`"path":{"type":"string","description":"artifact: the file it is."},` +
			`"tags":{"type":"array","items":{"type":"string"}}},` +
			`"required":["text"]}`,
		PromptFile: "agent.system.tool.staging_note.md",
		Run:        n.run,
	}
}

func (n *Note) run(ctx context.Context, c *sdk.Call, raw json.RawMessage) (*exocortexv1.ToolResult, error) {
	var a args
	if err := toolargs.Decode(ToolName, raw, &a); err != nil {
		return nil, err
	}
	kind := strings.ToLower(strings.TrimSpace(string(a.Kind)))
	if kind == "" {
		kind = KindNote
	}
	if kind != KindNote && kind != KindArtifact {
		return nil, fmt.Errorf(`%s: kind %q: use "note" or "artifact"`, ToolName, kind)
	}
	text := strings.TrimSpace(string(a.Text))
	if text == "" {
		text = strings.TrimSpace(string(a.Note))
	}
	path := strings.TrimSpace(string(a.Path))
	if text == "" && !(kind == KindArtifact && path != "") {
		return nil, fmt.Errorf(`%s: "text" is empty: write the note`, ToolName)
	}
	if kind == KindArtifact && path == "" {
		return nil, fmt.Errorf(`%s: an artifact needs "path", the file it is`, ToolName)
	}
	home, err := n.home()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ToolName, err)
	}
	cx := c.Context()
	p := Payload{Text: text, Title: strings.TrimSpace(string(a.Title)), Path: path, Tags: a.Tags,
		RequestID: cx.GetRequestId(), MessageID: cx.GetMessageId(), AgentProfile: cx.GetAgentProfile(), Tool: ToolName}
	file := filepath.Join(home, FileName)
	rec, err := n.append(ctx, file, kind, cx.GetSessionId(), p)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ToolName, err)
	}
	return &exocortexv1.ToolResult{Content: fmt.Sprintf("Recorded %s #%d in %s.", kind, rec.Seq, file)}, nil
}

// append appends one record through stagelog, which opens the log, appends and
// closes it, waiting a little while another writer holds the lock.
func (n *Note) append(ctx context.Context, file, kind, session string, p Payload) (stagelog.Record, error) {
	recs, err := stagelog.Append(ctx, file, []stagelog.Entry{{Kind: kind, Session: session, Payload: p}}, n.logger)
	if err != nil {
		return stagelog.Record{}, err
	}
	return recs[0], nil
}
