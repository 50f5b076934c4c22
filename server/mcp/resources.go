package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/exocortex/exocortex/core/session"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// Resource URIs.
const (
	MemoryURIPrefix = "exocortex://memory/"
	MemoryTemplate  = MemoryURIPrefix + "{id}"
	SnapshotURI     = "exocortex://memory-snapshot"
	WiringURI       = "exocortex://wiring/WIRING.md"
	SessionsURI     = "exocortex://sessions"
)

func (s *Server) addResources(srv *mcp.Server) {
	srv.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: MemoryTemplate, Name: "memory record",
		Description: "One memory record as JSON: text, area, key, tags, status, provenance.", MIMEType: "application/json"}, s.readRecord)
	srv.AddResource(&mcp.Resource{URI: SnapshotURI, Name: "memory snapshot",
		Description: "The memory store now: records by area and status, the journal's sequence, the state hash, and every record's id, area, key and tags.",
		MIMEType:    "application/json"}, s.readSnapshot)
	if s.opts.WiringDoc != nil {
		srv.AddResource(&mcp.Resource{URI: WiringURI, Name: "WIRING.md",
			Description: "The generated wiring diagram: which extension runs at which hook, in which order, touching which keys.",
			MIMEType:    "text/markdown"}, s.readWiringDoc)
	}
	if s.opts.SessionsDir != "" {
		srv.AddResource(&mcp.Resource{URI: SessionsURI, Name: "sessions",
			Description: "The home's sessions: name, last change, size.", MIMEType: "application/json"}, s.readSessions)
	}
}

// subscribe accepts the resources the journal's events update.
func (s *Server) subscribe(_ context.Context, req *mcp.SubscribeRequest) error {
	u := req.Params.URI
	if u == SnapshotURI || (strings.HasPrefix(u, MemoryURIPrefix) && len(u) > len(MemoryURIPrefix)) {
		return nil
	}
	return fmt.Errorf("cannot subscribe to %q: only %s and %s change with the memory", u, MemoryTemplate, SnapshotURI)
}

func jsonContents(uri string, v any) (*mcp.ReadResourceResult, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", uri, err)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "application/json", Text: string(b)}}}, nil
}

func (s *Server) readRecord(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	id := strings.TrimPrefix(uri, MemoryURIPrefix)
	res, err := s.opts.Memory.Get(ctx, &exocortexv1.MemoryGetRequest{Id: id})
	if err != nil {
		return nil, plain("resources/read "+uri, err)
	}
	if !res.GetFound() {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	r := res.GetRecord()
	p := r.GetProvenance()
	return jsonContents(uri, struct {
		*Record
		Provenance Provenance `json:"provenance"`
	}{record(r), Provenance{Session: p.GetSession(), Message: p.GetMessage(), Source: p.GetSource(), Seq: p.GetSeq(), UpdatedSeq: p.GetUpdatedSeq()}})
}

// Entry is a record in the snapshot.
type Entry struct {
	ID      string    `json:"id"`
	Area    string    `json:"area"`
	Key     string    `json:"key,omitempty"`
	Tags    []string  `json:"tags,omitempty"`
	Status  string    `json:"status"`
	Updated time.Time `json:"updated"`
}

// Snapshot is the memory snapshot resource.
type Snapshot struct {
	Records    int              `json:"records"`
	ByArea     map[string]int32 `json:"by_area"`
	ByStatus   map[string]int32 `json:"by_status"`
	JournalSeq uint64           `json:"journal_seq"`
	StateHash  string           `json:"state_hash"`
	Vectors    string           `json:"vectors"`
	Entries    []Entry          `json:"entries"`
}

func (s *Server) records(ctx context.Context, all bool) ([]*exocortexv1.MemoryRecord, error) {
	stream, err := s.opts.Memory.List(ctx, &exocortexv1.MemoryListRequest{All: all})
	if err != nil {
		return nil, err
	}
	var out []*exocortexv1.MemoryRecord
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, err
		}
		out = append(out, resp.GetRecords()...)
	}
}

func (s *Server) readSnapshot(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	st, err := s.opts.Memory.Stats(ctx, &exocortexv1.MemoryStatsRequest{})
	if err != nil {
		return nil, plain("resources/read "+SnapshotURI, err)
	}
	recs, err := s.records(ctx, true)
	if err != nil {
		return nil, plain("resources/read "+SnapshotURI, err)
	}
	snap := Snapshot{Records: int(st.GetRecords()), ByArea: st.GetByArea(), ByStatus: st.GetByStatus(), JournalSeq: st.GetJournalSeq(),
		StateHash: st.GetStateHash(), Vectors: st.GetVectors(), Entries: make([]Entry, 0, len(recs))}
	for _, r := range recs {
		snap.Entries = append(snap.Entries, Entry{ID: r.GetId(), Area: r.GetArea(), Key: r.GetKey(), Tags: r.GetTags(), Status: r.GetStatus(), Updated: r.GetUpdated().AsTime().UTC()})
	}
	return jsonContents(SnapshotURI, snap)
}

func (s *Server) readWiringDoc(ctx context.Context, _ *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	b, err := s.opts.WiringDoc(ctx)
	if err != nil {
		return nil, fmt.Errorf("resources/read %s: %w", WiringURI, err)
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: WiringURI, MIMEType: "text/markdown", Text: string(b)}}}, nil
}

func (s *Server) readSessions(ctx context.Context, _ *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	list, err := session.List(s.opts.SessionsDir)
	if s.opts.ListSessions != nil {
		list, err = s.opts.ListSessions(ctx)
	}
	if err != nil {
		return nil, fmt.Errorf("resources/read %s: %w", SessionsURI, err)
	}
	if list == nil {
		list = []session.Info{}
	}
	return jsonContents(SessionsURI, list)
}

// recordResource is the listing entry of one record.
func recordResource(r *exocortexv1.MemoryRecord) *mcp.Resource {
	name := r.GetKey()
	if name == "" {
		name = oneLine(r.GetText(), 60)
	}
	return &mcp.Resource{URI: MemoryURIPrefix + r.GetId(), Name: r.GetArea() + ": " + name, MIMEType: "application/json",
		Description: oneLine(r.GetText(), 200)}
}
