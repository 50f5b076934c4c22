package sessions

import (
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/exocortex/exocortex/core/loop"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// Item is one entry of a session's log, in Agent Zero's shape (its
// LogItem.output): no counts from 0, type is "user", "agent", "tool",
// "response", "info", "warning" or "error".
type Item struct {
	No        int            `json:"no"`
	ID        string         `json:"id"`
	Type      string         `json:"type"`
	Heading   string         `json:"heading"`
	Content   string         `json:"content"`
	Temp      bool           `json:"temp"`
	KVPs      map[string]any `json:"kvps"`
	Timestamp float64        `json:"timestamp"`
	AgentNo   int            `json:"agentno"`
}

// Log is a session's log and its progress line.
type Log struct {
	mu       sync.Mutex
	guid     string
	items    []Item
	progress string
	active   bool
}

func newLog() *Log { return &Log{guid: uuid.NewString()} }

// LogView is what api_log_get returns of a log.
type LogView struct {
	GUID           string `json:"guid"`
	TotalItems     int    `json:"total_items"`
	ReturnedItems  int    `json:"returned_items"`
	StartPosition  int    `json:"start_position"`
	Progress       string `json:"progress"`
	ProgressActive bool   `json:"progress_active"`
	Items          []Item `json:"items"`
}

// Last returns the last length items (all of them when length exceeds them).
func (l *Log) Last(length int) LogView {
	l.mu.Lock()
	defer l.mu.Unlock()
	start := max(0, len(l.items)-max(length, 0))
	items := append([]Item{}, l.items[start:]...)
	return LogView{GUID: l.guid, TotalItems: len(l.items), ReturnedItems: len(items), StartPosition: start,
		Progress: l.progress, ProgressActive: l.active, Items: items}
}

func (l *Log) add(typ, heading, content string, kvps map[string]any, agentNo int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.items = append(l.items, Item{No: len(l.items), ID: uuid.NewString(), Type: typ, Heading: heading, Content: content,
		KVPs: kvps, Timestamp: float64(time.Now().UnixMicro()) / 1e6, AgentNo: agentNo})
}

func (l *Log) setProgress(p string, active bool) {
	l.mu.Lock()
	l.progress, l.active = p, active
	l.mu.Unlock()
}

// fromHistory starts a resumed session's log from its saved history.
func (l *Log) fromHistory(h []*exocortexv1.Message) {
	for _, m := range h {
		switch m.GetRole() {
		case "user":
			l.add("user", "", m.GetContent(), nil, 0)
		case "assistant":
			l.add("agent", "", m.GetContent(), nil, 0)
		}
	}
}

// Progress is a line saying what the agent is doing, from a loop event, or
// "" for an event that changes nothing the caller should see. The
// OpenAI-compatible stream shows these as the agent's progress.
func Progress(e loop.Event) string {
	who := ""
	if e.Agent != "" {
		who = e.Agent + ": "
	}
	switch e.Type {
	case loop.EventToolCall:
		if e.Tool == "response" {
			return ""
		}
		return who + "using " + e.Tool
	case loop.EventToolResult:
		if e.Tool == "response" {
			return ""
		}
		if e.Error != "" {
			return who + e.Tool + " failed: " + firstLine(e.Error)
		}
		return who + e.Tool + " done"
	case loop.EventApproval:
		return who + e.Tool + " approval: " + e.Result
	}
	return ""
}

// observe records e in the log.
func (l *Log) observe(e loop.Event) {
	agentNo := agentNumber(e.Agent)
	switch e.Type {
	case loop.EventMonologueStart:
		l.setProgress("Thinking...", true)
	case loop.EventToolCall:
		if e.Tool == "response" {
			return
		}
		var args map[string]any
		_ = json.Unmarshal(e.Args, &args)
		l.add("tool", "Using tool '"+e.Tool+"'", "", args, agentNo)
		l.setProgress(Progress(e), true)
	case loop.EventToolResult:
		if e.Tool == "response" {
			return
		}
		content := e.Result
		if e.Error != "" {
			content = "error: " + e.Error
		}
		l.add("tool", e.Tool+" result", content, nil, agentNo)
		l.setProgress(Progress(e), true)
	case loop.EventApproval:
		l.add("info", "Approval for "+e.Tool, e.Text, map[string]any{"decision": e.Result}, agentNo)
	case loop.EventNotice:
		l.add("warning", "", e.Text, nil, agentNo)
	case loop.EventResponse:
		if e.Agent == "" {
			l.add("response", "", e.Text, nil, agentNo)
		}
	case loop.EventMonologueEnd:
		if e.Agent == "" {
			l.setProgress("", false)
		}
	}
}

// agentNumber is Agent Zero's agentno of an event's agent: 0 for the
// session's own, N for the subordinate named "PROFILE#N" (its depth).
func agentNumber(agent string) int {
	_, n, ok := strings.Cut(agent, "#")
	if !ok {
		return 0
	}
	no, err := strconv.Atoi(n)
	if err != nil {
		return 1
	}
	return no
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}
