package loop

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"google.golang.org/protobuf/encoding/protojson"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// contextState is the context window's state saved with a session: the
// summary of the compressed turns (its parts) and where the verbatim history starts, the
// pinned prompt blocks, the messages still waiting for long-term memory and
// the tools documented in full. A resumed session goes on from it: it neither
// re-sends the compressed turns nor compresses them again, and its first
// request repeats the last one's prefix.
type contextState struct {
	// Summaries are the summary's parts, each a message of the prompt.
	// Summary is the whole summary, the only form in session files written
	// before the summary was append-only (read as one part).
	Summaries       []string          `json:"summaries,omitempty"`
	Summary         string            `json:"summary,omitempty"`
	VerbatimFrom    int               `json:"verbatim_from"`
	Compressions    int               `json:"compressions,omitempty"`
	LastCompression *Compression      `json:"last_compression,omitempty"`
	Inserts         []*pinned         `json:"inserts,omitempty"`
	Pending         []json.RawMessage `json:"pending,omitempty"`
	Expanded        []string          `json:"expanded_tools,omitempty"`
	// Once lists the once-per-session extensions that have run (as
	// extension@hook): a resumed session is the same session, so they do not
	// run again.
	Once []string `json:"once_done,omitempty"`
}

func (a *Agent) contextSnapshot() (json.RawMessage, error) {
	st := contextState{Summaries: a.summaries, Summary: a.summaryText(), VerbatimFrom: a.verbatimFrom, Compressions: a.compressions,
		LastCompression: a.lastCompression, Inserts: a.inserts}
	for _, m := range a.pending {
		b, err := protojson.Marshal(m)
		if err != nil {
			return nil, fmt.Errorf("encoding message %s waiting for long-term memory: %w", m.GetId(), err)
		}
		st.Pending = append(st.Pending, b)
	}
	for name := range a.expanded {
		st.Expanded = append(st.Expanded, name)
	}
	sort.Strings(st.Expanded)
	for key := range a.once {
		st.Once = append(st.Once, key)
	}
	sort.Strings(st.Once)
	return json.Marshal(st)
}

// saveContext writes the context state to the session, when there is one.
func (a *Agent) saveContext(ctx context.Context) {
	s := a.opts.Session
	if s == nil {
		return
	}
	snap, err := a.contextSnapshot()
	if err == nil {
		err = s.SaveContext(ctx, snap)
	}
	if err != nil {
		a.emit(Event{Type: EventNotice, Error: err.Error(), Text: "the context window's state (summary of compressed turns) could not be saved; a resumed session compresses again"})
	}
}

// restoreContext takes the saved context state back against the session's
// history (which may be shorter, when its last lines were torn).
func (a *Agent) restoreContext(raw json.RawMessage) error {
	var st contextState
	if err := json.Unmarshal(raw, &st); err != nil {
		return err
	}
	if st.VerbatimFrom < 0 || st.VerbatimFrom > len(a.history) {
		return fmt.Errorf("it starts the verbatim history at message %d of %d", st.VerbatimFrom, len(a.history))
	}
	var pending []*exocortexv1.Message
	for i, b := range st.Pending {
		m := &exocortexv1.Message{}
		if err := protojson.Unmarshal(b, m); err != nil {
			return fmt.Errorf("message %d waiting for long-term memory: %w", i, err)
		}
		pending = append(pending, m)
	}
	summaries := st.Summaries
	if len(summaries) == 0 && st.Summary != "" {
		summaries = []string{st.Summary}
	}
	a.summaries, a.verbatimFrom, a.compressions, a.lastCompression = summaries, st.VerbatimFrom, st.Compressions, st.LastCompression
	a.pending = pending
	a.inserts = nil
	for _, p := range st.Inserts {
		if p != nil && p.At <= len(a.history) {
			a.inserts = append(a.inserts, p)
		}
	}
	a.dropCompressedInserts()
	for _, name := range st.Expanded {
		a.expanded[name] = true
	}
	for _, key := range st.Once {
		a.once[key] = true
	}
	return nil
}
