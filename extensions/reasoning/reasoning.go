// Package reasoning keeps the agent's record of what it has done and made: what
// earlier sessions left in staging.jsonl, shown when a session starts, and the
// artifact registry of this session, shown at every step and appended to
// staging.jsonl for later sessions and the sleep consolidation.
//
// session_init (message_loop_prompts_before, order 10, once per session through
// the host's once primitive). The seed ran it at before_main_llm_call, where its
// text never reached the model. It reads staging.jsonl (no lock needed) and adds
// SESSION START with the MaxEntries most recent notes, artifacts, insights and
// memorized episodes of other sessions, newest first, within BlockChars.
//
// reasoning_state (message_loop_prompts_before, order 14; the seed's 13, which
// collides with operator_profile at 13). The seed ran it at before_main_llm_call.
// It adds ARTIFACTS, the files of the registry (reasoning_state), the most
// recently touched first, with how and when, so the model does not lose track of
// what it produced in a long session.
//
// reasoning_state_update (message_loop_end, order 49, as in the seed) reads the
// iteration's successful tool call and registers what it produced:
//   - text_editor write or patch: the path (written, modified);
//   - code_execution shell commands: redirections, touch, mkdir, the targets of
//     cp, mv, install, ln and tee, -o/--output files, rm (deleted)
//     (shellparse.WrittenPaths);
//   - data_visualize: its output file.
//
// A path new to the registry is appended to staging.jsonl as an artifact record
// (the staging_note tool's record kind and payload shape); a known one is
// counted again.
package reasoning

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/exocortex/exocortex/extensions/internal/shellparse"
	"github.com/exocortex/exocortex/extensions/internal/stagelog"
	"github.com/exocortex/exocortex/extensions/internal/textfacts"
	"github.com/exocortex/exocortex/extensions/internal/toolresult"
	"github.com/exocortex/exocortex/extensions/internal/turn"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

// Sizes.
const (
	MaxEntries   = 10
	BlockChars   = 1500
	MaxArtifacts = 15
	MaxRegistry  = 200
)

func key() sdk.Key[*exocortexv1.ReasoningState] { return sdk.KeyOf[*exocortexv1.ReasoningState]() }

// Files declares the staging log for the package's extensions.
func Files() []*exocortexv1.FileSpec {
	return []*exocortexv1.FileSpec{
		stagelog.File(stagelog.StagingID, stagelog.StagingFile, exocortexv1.Access_ACCESS_READ, "session_init", "Read at session start: recent notes, artifacts, insights and episodes of earlier sessions."),
		stagelog.File(stagelog.StagingID, stagelog.StagingFile, exocortexv1.Access_ACCESS_WRITE, "reasoning_state_update",
			`Artifacts the agent produced: kind "artifact", payload {text, path, request_id, tool, action}.`),
	}
}

// payload is the part of a staging record's payload session_init shows.
type payload struct {
	Text     string `json:"text"`
	Title    string `json:"title"`
	Path     string `json:"path"`
	Type     string `json:"type"`
	User     string `json:"user"`
	Response string `json:"response"`
	Action   string `json:"action"`
	Tool     string `json:"tool"`
}

// SessionInit is session_init.
type SessionInit struct {
	Home func() (string, error)
}

// Spec declares it.
func (e SessionInit) Spec() sdk.Spec {
	return sdk.Spec{
		Name:           "session_init",
		Hooks:          []sdk.Hook{sdk.MessageLoopPromptsBefore(e)},
		Order:          10,
		InjectsPrompt:  true,
		OncePerSession: true,
		Description:    "At the session's first prompt, adds SESSION START: the latest notes, artifacts, insights and episodes earlier sessions left in staging.jsonl.",
	}
}

// Line renders one staging record for the block, "" for kinds it does not show.
func Line(r stagelog.Record) string {
	var p payload
	if r.Decode(&p) != nil {
		return ""
	}
	date := r.TS.UTC().Format("2006-01-02")
	switch r.Kind {
	case "note":
		t := p.Text
		if p.Title != "" {
			t = p.Title + ": " + t
		}
		return fmt.Sprintf("- [note %s] %s", date, textfacts.Shorten(t, 200))
	case stagelog.KindArtifact:
		t := p.Path
		if p.Text != "" {
			t += ": " + p.Text
		}
		return fmt.Sprintf("- [artifact %s] %s", date, textfacts.Shorten(t, 200))
	case stagelog.KindInsight:
		return fmt.Sprintf("- [%s %s] %s", p.Type, date, textfacts.Shorten(p.Text, 200))
	case stagelog.KindMemorize:
		return fmt.Sprintf("- [task %s] asked: %s; answered: %s", date, textfacts.Shorten(p.User, 100), textfacts.Shorten(p.Response, 120))
	}
	return ""
}

// MessageLoopPromptsBefore adds the block.
func (si SessionInit) MessageLoopPromptsBefore(ctx context.Context, c *sdk.Call, _ *exocortexv1.MessageLoopPromptsBeforeRequest) (*exocortexv1.MessageLoopPromptsBeforeResponse, error) {
	if si.Home == nil {
		return nil, nil
	}
	home, err := si.Home()
	if err != nil {
		return nil, err
	}
	session := c.Context().GetSessionId()
	var recent []stagelog.Record
	err = stagelog.Read(ctx, filepath.Join(home, stagelog.StagingFile), 0, func(r stagelog.Record) error {
		if r.Session == session || Line(r) == "" {
			return nil
		}
		recent = append(recent, r)
		if len(recent) > MaxEntries {
			recent = recent[1:]
		}
		return nil
	})
	if err != nil {
		c.Logger().Warn("session_init: staging.jsonl could not be read", "err", err)
		return nil, nil
	}
	if len(recent) == 0 {
		return nil, nil
	}
	var b strings.Builder
	b.WriteString("Left by earlier sessions, newest first:")
	for i := len(recent) - 1; i >= 0; i-- {
		line := "\n" + Line(recent[i])
		if b.Len()+len(line) > BlockChars {
			break
		}
		b.WriteString(line)
	}
	return &exocortexv1.MessageLoopPromptsBeforeResponse{PromptBlocks: []*exocortexv1.PromptBlock{{Title: "SESSION START", Content: b.String()}}}, nil
}

// State is reasoning_state.
type State struct{}

// Spec declares it.
func (e State) Spec() sdk.Spec {
	return sdk.Spec{
		Name:          "reasoning_state",
		Hooks:         []sdk.Hook{sdk.MessageLoopPromptsBefore(e)},
		Order:         14,
		Reads:         []sdk.KeyRef{key()},
		InjectsPrompt: true,
		Description:   "Adds ARTIFACTS: the files the agent created, changed or deleted this session (reasoning_state), most recent first.",
		// It reads its one declared key and returns a block: no store, no
		// file, no cache.
		EffectsDeclared: true,
	}
}

// MessageLoopPromptsBefore adds the artifact list.
func (State) MessageLoopPromptsBefore(_ context.Context, c *sdk.Call, _ *exocortexv1.MessageLoopPromptsBeforeRequest) (*exocortexv1.MessageLoopPromptsBeforeResponse, error) {
	rs, ok := key().Get(c)
	if !ok || len(rs.GetArtifacts()) == 0 {
		return nil, nil
	}
	arts := append([]*exocortexv1.Artifact(nil), rs.GetArtifacts()...)
	sort.SliceStable(arts, func(i, j int) bool { return arts[i].GetIteration() > arts[j].GetIteration() })
	if len(arts) > MaxArtifacts {
		arts = arts[:MaxArtifacts]
	}
	var lines []string
	for _, a := range arts {
		l := fmt.Sprintf("- %s (%s by %s", a.GetPath(), a.GetAction(), a.GetTool())
		if a.GetTouches() > 1 {
			l += fmt.Sprintf(", %d times", a.GetTouches())
		}
		lines = append(lines, l+")")
	}
	return &exocortexv1.MessageLoopPromptsBeforeResponse{PromptBlocks: []*exocortexv1.PromptBlock{{
		Title: "ARTIFACTS", Content: "What you have produced this session:\n" + strings.Join(lines, "\n"),
	}}}, nil
}

// Produced lists what a successful tool call produced.
func Produced(tc *exocortexv1.ToolCall) []shellparse.Written {
	args := turn.ArgsMap(tc)
	switch tc.GetName() {
	case "text_editor":
		action, _ := turn.StringArg(args, "action", "op")
		path, _ := turn.StringArg(args, "path", "file", "file_path")
		switch strings.ToLower(action) {
		case "write", "create", "overwrite":
			return []shellparse.Written{{Path: path, Action: "written"}}
		case "patch", "replace", "str_replace", "edit":
			return []shellparse.Written{{Path: path, Action: "modified"}}
		}
	case "code_execution":
		runtime, _ := turn.StringArg(args, "runtime")
		code, _ := turn.StringArg(args, "code", "command")
		if runtime == "" || runtime == "terminal" {
			return shellparse.WrittenPaths(code)
		}
	case "data_visualize":
		if out, _ := turn.StringArg(args, "output", "output_path", "path", "file"); out != "" {
			return []shellparse.Written{{Path: out, Action: "written"}}
		}
	}
	return nil
}

// Update is reasoning_state_update.
type Update struct {
	Home func() (string, error)
}

// Spec declares it.
func (e Update) Spec() sdk.Spec {
	return sdk.Spec{
		Name:        "reasoning_state_update",
		Hooks:       []sdk.Hook{sdk.MessageLoopEnd(e)},
		Order:       49,
		Reads:       []sdk.KeyRef{key()},
		Writes:      []sdk.KeyRef{key()},
		Description: "Registers the files the iteration's tool call produced in reasoning_state and appends new ones to staging.jsonl as artifacts.",
	}
}

// MessageLoopEnd registers artifacts.
func (u Update) MessageLoopEnd(ctx context.Context, c *sdk.Call, req *exocortexv1.MessageLoopEndRequest) (*exocortexv1.MessageLoopEndResponse, error) {
	tc, res := req.GetToolCall(), req.GetToolResult()
	if tc == nil || res == nil || toolresult.Failed(res) {
		return nil, nil
	}
	made := Produced(tc)
	if len(made) == 0 {
		return nil, nil
	}
	rs, _ := key().Get(c)
	if rs == nil {
		rs = &exocortexv1.ReasoningState{}
	}
	byPath := map[string]*exocortexv1.Artifact{}
	for _, a := range rs.Artifacts {
		byPath[a.GetPath()] = a
	}
	var entries []stagelog.Entry
	for _, w := range made {
		kind := "file"
		if w.Action == "directory" {
			kind = "directory"
		}
		if a, ok := byPath[w.Path]; ok {
			a.Touches++
			a.Action, a.Iteration, a.Tool = w.Action, req.GetIteration(), tc.GetName()
			continue
		}
		a := &exocortexv1.Artifact{Path: w.Path, Kind: kind, Action: w.Action, Tool: tc.GetName(), Iteration: req.GetIteration(), RequestId: c.Context().GetRequestId(), Touches: 1}
		rs.Artifacts = append(rs.Artifacts, a)
		byPath[w.Path] = a
		entries = append(entries, stagelog.Entry{Kind: stagelog.KindArtifact, Session: c.Context().GetSessionId(), Payload: map[string]string{
			"text": fmt.Sprintf("%s %s by %s", kind, w.Action, tc.GetName()), "path": w.Path, "request_id": c.Context().GetRequestId(),
			"tool": "reasoning_state_update", "action": w.Action, "ts": time.Now().UTC().Format(time.RFC3339),
		}})
	}
	if n := len(rs.Artifacts) - MaxRegistry; n > 0 {
		rs.Artifacts = rs.Artifacts[n:]
	}
	key().Set(c, rs)
	if len(entries) > 0 && u.Home != nil {
		home, err := u.Home()
		if err == nil {
			_, err = stagelog.Append(ctx, filepath.Join(home, stagelog.StagingFile), entries, nil)
		}
		if err != nil {
			// The registry is updated; staging catches up with the next new artifact.
			c.Logger().Warn("reasoning_state_update: artifacts not staged", "err", err)
		}
	}
	return nil, nil
}
