package mcpserver

import (
	"context"
	"errors"
	"io"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/exocortex/exocortex/memory"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// kindAccess is the journal's access event (memory.KindAccess): a recall
// counted, no change a client needs to hear about.
const kindAccess = memory.KindAccess

// Watch lists the memory's records as resources and follows the journal
// until ctx ends: a new or deleted record changes the list (the SDK sends
// notifications/resources/list_changed), and every change of a record sends
// notifications/resources/updated for it and for the snapshot to the
// sessions subscribed to them. When the memory service's stream breaks (its
// owner went away and another takes over) Watch resumes after the last event
// it saw. ready, when not nil, is closed once the records are listed.
func (s *Server) Watch(ctx context.Context, ready chan<- struct{}) error {
	st, err := s.opts.Memory.Stats(ctx, &exocortexv1.MemoryStatsRequest{})
	if err != nil {
		return plain("watching the memory", err)
	}
	after := st.GetJournalSeq()
	recs, err := s.records(ctx, true)
	if err != nil {
		return plain("listing the memory's records", err)
	}
	for _, r := range recs {
		s.list(r)
	}
	if ready != nil {
		close(ready)
	}
	backoff := 100 * time.Millisecond
	for {
		seq, err := s.follow(ctx, after)
		if seq > after {
			after, backoff = seq, 100*time.Millisecond
		}
		if ctx.Err() != nil {
			return nil
		}
		s.log.Warn("the memory's journal stream broke; following it again", "after", after, "err", err)
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(backoff):
		}
		backoff = min(backoff*2, 5*time.Second)
	}
}

// follow streams the journal's events after seq and applies them, returning
// the last sequence number applied.
func (s *Server) follow(ctx context.Context, seq uint64) (uint64, error) {
	stream, err := s.opts.Memory.Watch(ctx, &exocortexv1.MemoryWatchRequest{After: seq, KindPrefix: "memory.", Follow: true})
	if err != nil {
		return seq, err
	}
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return seq, errors.New("the stream ended")
		}
		if err != nil {
			return seq, err
		}
		ev := resp.GetEvent()
		seq = ev.GetSeq()
		if ev.GetKind() != kindAccess {
			s.apply(ctx, ev)
		}
	}
}

func (s *Server) apply(ctx context.Context, ev *exocortexv1.MemoryJournalEvent) {
	ids := slices.Compact(memory.EventRefs(ev.GetPayload()))
	for _, id := range ids {
		res, err := s.opts.Memory.Get(ctx, &exocortexv1.MemoryGetRequest{Id: id})
		switch {
		case err != nil:
			s.log.Warn("reading a changed record", "id", id, "err", err)
		case res.GetFound():
			s.list(res.GetRecord())
		default:
			s.unlist(id)
		}
		s.updated(ctx, MemoryURIPrefix+id)
	}
	if len(ids) > 0 {
		s.updated(ctx, SnapshotURI)
	}
}

// list registers r as a resource (a new one changes the list).
func (s *Server) list(r *exocortexv1.MemoryRecord) {
	s.mu.Lock()
	seen := s.listed[r.GetId()]
	s.listed[r.GetId()] = true
	s.mu.Unlock()
	if seen {
		return
	}
	res := recordResource(r)
	for _, srv := range s.servers() {
		srv.AddResource(res, s.readRecord)
	}
}

func (s *Server) unlist(id string) {
	s.mu.Lock()
	seen := s.listed[id]
	delete(s.listed, id)
	s.mu.Unlock()
	if !seen {
		return
	}
	for _, srv := range s.servers() {
		srv.RemoveResources(MemoryURIPrefix + id)
	}
}

func (s *Server) updated(ctx context.Context, uri string) {
	for _, srv := range s.servers() {
		if err := srv.ResourceUpdated(ctx, &mcp.ResourceUpdatedNotificationParams{URI: uri}); err != nil {
			s.log.Warn("notifying an update", "uri", uri, "err", err)
		}
	}
}

// Listed reports how many records are listed as resources.
func (s *Server) Listed() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.listed)
}
