// Package deltas tells clients what changed in memory, as the TOOL seed's
// delta stream does: every memory event of the home's journal becomes one
// notification per record it touched,
//
//	{"ns": "main", "item_id": "…", "version": 42, "event_type": "upsert", "seq": 42}
//
// where ns is the record's memory area, version the sequence number of the
// change (equal to the record's provenance.updated_seq after an upsert, so a
// client can tell whether its copy is current) and seq the journal's sequence
// number. A client pulls them with GET /api/v1/deltas?since=SEQ, or keeps
// GET /api/v1/deltas/stream open (server-sent events).
//
// The stream never skips silently. Each event's SSE id is its seq (or
// "seq.i" for all but the last record of one journal event), so a client
// that reconnects with Last-Event-ID resumes right after the last delta it
// got: the handler replays the journal from there, then follows live events.
// Live events come from one watch of the memory service, fanned out to every
// stream through a bounded buffer; a stream whose client reads too slowly to
// keep up is sent what it has in its buffer, then
//
//	event: catchup
//	data: {"since": 41, "reason": "…"}
//
// and is closed: the client fetches GET /api/v1/deltas?since=41 and
// reconnects. Comments (": keep-alive") keep idle connections open.
package deltas

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/exocortex/exocortex/memory"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/server/route"
)

// Delta is one change of one memory record.
type Delta struct {
	// NS is the record's memory area ("" when the record is gone and its area unknown).
	NS     string `json:"ns"`
	ItemID string `json:"item_id"`
	// Version is the sequence number of the change.
	Version uint64 `json:"version"`
	// EventType is the journal event's kind without "memory." and its version:
	// upsert, archive, restore, delete, access, merge.
	EventType string `json:"event_type"`
	Seq       uint64 `json:"seq"`
}

// Options tune a Service; zero values take the defaults.
type Options struct {
	// Buffer is how many journal events a stream may have waiting before it is
	// told to catch up (default 256).
	Buffer int
	// KeepAlive is the interval of the stream's keep-alive comments (default 15s).
	KeepAlive time.Duration
	Logger    *slog.Logger
}

// Service serves the delta routes from the memory service mem.
type Service struct {
	mem  exocortexv1.MemoryServiceClient
	opts Options
	log  *slog.Logger
	hub  *hub

	mu    sync.Mutex
	areas map[string]string // record id → area, learned from the events
}

// New returns the delta service; Close stops its watch.
func New(mem exocortexv1.MemoryServiceClient, opts Options) *Service {
	if opts.Buffer <= 0 {
		opts.Buffer = 256
	}
	if opts.KeepAlive <= 0 {
		opts.KeepAlive = 15 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	s := &Service{mem: mem, opts: opts, log: opts.Logger, areas: map[string]string{}}
	s.hub = newHub(s, opts.Buffer)
	return s
}

// Close stops the live watch and ends every open stream.
func (s *Service) Close() error {
	s.hub.close()
	return nil
}

// Routes are the delta routes.
func (s *Service) Routes() []route.Route {
	return []route.Route{
		{Method: "GET", Pattern: "/api/v1/deltas", Role: route.Agent, Summary: "The memory deltas after a sequence number", Handler: httpFunc(s.since)},
		{Method: "GET", Pattern: "/api/v1/deltas/stream", Role: route.Agent, Stream: true,
			Summary: "Memory deltas as server-sent events, resuming from Last-Event-ID", Handler: httpFunc(s.stream)},
	}
}

// batch is the deltas of one journal event.
type batch struct {
	seq    uint64
	deltas []Delta
}

// translate turns a journal event into its deltas (none for an event that
// names no record).
func (s *Service) translate(ctx context.Context, ev *exocortexv1.MemoryJournalEvent) batch {
	var p struct {
		ID   string   `json:"id"`
		IDs  []string `json:"ids"`
		Into string   `json:"into"`
		From []string `json:"from"`
		Area string   `json:"area"`
	}
	b := batch{seq: ev.GetSeq()}
	if json.Unmarshal(ev.GetPayload(), &p) != nil {
		return b
	}
	typ := strings.TrimPrefix(ev.GetKind(), memory.KindPrefix)
	if i := strings.LastIndex(typ, ".v"); i > 0 {
		typ = typ[:i]
	}
	var ids []string
	for _, id := range append(append([]string{p.ID, p.Into}, p.IDs...), p.From...) {
		if id != "" {
			ids = append(ids, id)
		}
	}
	for _, id := range ids {
		ns := p.Area
		if ns == "" || id != p.ID {
			ns = s.area(ctx, id)
		} else {
			s.learn(id, ns)
		}
		b.deltas = append(b.deltas, Delta{NS: ns, ItemID: id, Version: ev.GetSeq(), EventType: typ, Seq: ev.GetSeq()})
	}
	return b
}

func (s *Service) learn(id, area string) {
	s.mu.Lock()
	s.areas[id] = area
	s.mu.Unlock()
}

// area is the memory area of record id: as an earlier event said, or as the
// store has it.
func (s *Service) area(ctx context.Context, id string) string {
	s.mu.Lock()
	a, ok := s.areas[id]
	s.mu.Unlock()
	if ok {
		return a
	}
	res, err := s.mem.Get(ctx, &exocortexv1.MemoryGetRequest{Id: id})
	if err != nil || !res.GetFound() {
		return ""
	}
	s.learn(id, res.GetRecord().GetArea())
	return res.GetRecord().GetArea()
}

// errStop ends a read early without an error.
var errStop = errors.New("stop")

// read calls f with the deltas of each memory event after seq after, up to
// the journal's end (follow false) or until ctx ends (follow true).
func (s *Service) read(ctx context.Context, after uint64, follow bool, f func(batch) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	st, err := s.mem.Watch(ctx, &exocortexv1.MemoryWatchRequest{After: after, KindPrefix: memory.KindPrefix, Follow: follow})
	if err != nil {
		return err
	}
	for {
		resp, err := st.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
		if err := f(s.translate(ctx, resp.GetEvent())); err != nil {
			if errors.Is(err, errStop) {
				return nil
			}
			return err
		}
	}
}
