package recall

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/sdk"
)

// Archive is history_archive, ECE's memory preservation: what leaves the
// short-term context is archived to long-term memory before it is lost. When
// the host compresses the history, it offers the messages leaving the prompt's
// verbatim window in the archive field of message_loop_prompts_before; this
// extension writes each to the fragments area, with its provenance (session,
// message id, position in the session's history, who said it), in one journal
// append through the memory service (MemoryService.Append of memory.upsert.v1
// events, so each record keeps its own session, message and reason), and
// returns their ids, so the host knows they are safe. Recall finds
// them like any memory when a later prompt asks about them.
//
// The record id is derived from the message id, so offering a message again
// (the host retries what was not acknowledged; a resumed session compresses
// anew) replaces the record instead of adding a duplicate.
type Archive struct{}

// KindUpsert is the journal kind of a record's creation or replacement
// (memory.KindUpsert), which history_archive appends.
const KindUpsert = "memory.upsert.v1"

// upsert is the payload of a memory.upsert.v1 event as history_archive writes
// it (memory.UpsertEvent's fields it uses).
type upsert struct {
	ID       string         `json:"id"`
	Area     string         `json:"area"`
	Text     string         `json:"text"`
	Tags     []string       `json:"tags,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty"`
	Session  string         `json:"session,omitempty"`
	Message  string         `json:"message,omitempty"`
	Source   string         `json:"source,omitempty"`
	Reason   string         `json:"reason,omitempty"`
}

// ArchiveOrder runs it before every other extension of the hook.
const ArchiveOrder = 5

// Spec declares it.
func (e Archive) Spec() sdk.Spec {
	return sdk.Spec{
		Name:         "history_archive",
		Hooks:        []sdk.Hook{sdk.MessageLoopPromptsBefore(e)},
		Order:        ArchiveOrder,
		ReadsHistory: true,
		Description:  "Writes the messages leaving the prompt's verbatim window (history compression) to the fragments area of long-term memory, with session, message id and position, before the prompt goes without them.",
	}
}

// FragmentID is the record id of an archived message.
func FragmentID(messageID string) string { return "msg-" + messageID }

// MessageLoopPromptsBefore writes the offered messages.
func (ar Archive) MessageLoopPromptsBefore(ctx context.Context, c *sdk.Call, req *exocortexv1.MessageLoopPromptsBeforeRequest) (*exocortexv1.MessageLoopPromptsBeforeResponse, error) {
	if len(req.GetArchive()) == 0 {
		return nil, nil
	}
	var entries []*exocortexv1.MemoryJournalEntry
	var ids []string
	for _, m := range req.GetArchive() {
		if m.GetId() == "" || m.GetContent() == "" {
			continue
		}
		session := m.GetMetadata()["session"]
		if session == "" {
			session = c.Context().GetSessionId()
		}
		meta := map[string]any{"role": m.GetRole(), "sender": m.GetSenderId(), "message_id": m.GetId()}
		if p, err := strconv.Atoi(m.GetMetadata()["position"]); err == nil {
			meta["position"] = p
		}
		if m.GetToolName() != "" {
			meta["tool"] = m.GetToolName()
		}
		if m.GetTimestampUtc() != "" {
			meta["timestamp_utc"] = m.GetTimestampUtc()
		}
		payload, err := json.Marshal(upsert{
			ID: FragmentID(m.GetId()), Area: AreaFragments, Text: speakerOf(m) + ": " + m.GetContent(),
			Tags: []string{"history", m.GetRole()}, Metadata: meta,
			Session: session, Message: m.GetId(), Source: "extension:history_archive",
			Reason: "left the prompt's verbatim window (history compression)",
		})
		if err != nil {
			return nil, fmt.Errorf("archiving message %s: %w", m.GetId(), err)
		}
		entries = append(entries, &exocortexv1.MemoryJournalEntry{Kind: KindUpsert, Session: session, Payload: payload})
		ids = append(ids, m.GetId())
	}
	if len(entries) == 0 {
		return nil, nil
	}
	mem, err := c.Memory().Client()
	if err == nil {
		_, err = mem.Append(ctx, &exocortexv1.MemoryAppendRequest{Entries: entries})
	}
	if err != nil {
		// Not acknowledged: the host offers them again next iteration.
		return nil, fmt.Errorf("archiving %d messages to the fragments area: %w", len(entries), err)
	}
	return &exocortexv1.MessageLoopPromptsBeforeResponse{Archived: ids}, nil
}

func speakerOf(m *exocortexv1.Message) string {
	switch {
	case m.GetRole() == "tool":
		return "Result of tool " + m.GetToolName()
	case m.GetRole() == "assistant":
		return "Agent"
	case m.GetSenderId() == "operator":
		return "Operator"
	}
	return "Message (" + m.GetRole() + ")"
}
