package service

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/exocortex/exocortex/memory"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/staging"
)

// Server serves MemoryService over one open store. Owner runs it on the home's
// socket; a test or a host may serve it on any listener.
type Server struct {
	exocortexv1.UnimplementedMemoryServiceServer
	store *memory.Store
	// embedder names the store's embedder for people (memory.Stats.Embedder).
	embedder string

	umu sync.Mutex // serialises Update's read-modify-write

	nmu     sync.Mutex
	changed chan struct{} // closed and replaced after each write
}

// NewServer serves store. embedder names its embedder in Stats ("" leaves the
// field empty).
func NewServer(store *memory.Store, embedder string) *Server {
	return &Server{store: store, embedder: embedder, changed: make(chan struct{})}
}

// wrote wakes the watchers.
func (s *Server) wrote() {
	s.nmu.Lock()
	close(s.changed)
	s.changed = make(chan struct{})
	s.nmu.Unlock()
}

func (s *Server) waitChange() <-chan struct{} {
	s.nmu.Lock()
	defer s.nmu.Unlock()
	return s.changed
}

// statusOf maps the store's errors to gRPC statuses, so the client can tell
// them apart (Error turns them back).
func statusOf(err error) error {
	if err == nil {
		return nil
	}
	var ie *memory.InputError
	switch {
	case errors.Is(err, memory.ErrNotFound):
		return status.Error(codes.NotFound, err.Error())
	case errors.As(err, &ie):
		return status.Error(codes.InvalidArgument, err.Error())
	case errors.Is(err, context.Canceled):
		return status.Error(codes.Canceled, err.Error())
	case errors.Is(err, context.DeadlineExceeded):
		return status.Error(codes.DeadlineExceeded, err.Error())
	}
	if _, ok := status.FromError(err); ok {
		return err
	}
	return status.Error(codes.Unknown, err.Error())
}

func (s *Server) Search(ctx context.Context, req *exocortexv1.MemorySearchRequest) (*exocortexv1.MemorySearchResponse, error) {
	o := options(req.GetOptions())
	res, err := s.store.Search(ctx, req.GetQuery(), o)
	if err != nil {
		return nil, statusOf(err)
	}
	if o.RecordAccess && len(res.Hits) > 0 {
		s.wrote()
	}
	return &exocortexv1.MemorySearchResponse{Query: res.Query, Mode: string(res.Mode), Notice: res.Notice,
		Hits: hitsProto(res), Block: res.Block, Tokens: int32(res.Tokens), Dropped: int32(res.Dropped)}, nil
}

func (s *Server) Compile(ctx context.Context, req *exocortexv1.MemoryCompileRequest) (*exocortexv1.MemoryCompileResponse, error) {
	o := options(req.GetOptions())
	o.TokenBudget = 0 // the budget applies after the threshold
	res, err := s.store.Search(ctx, req.GetQuery(), o)
	if err != nil {
		return nil, statusOf(err)
	}
	hits := hitsProto(res)
	kept := res.Hits[:0:0]
	var keptProto []*exocortexv1.MemoryHit
	for i, h := range res.Hits {
		if req.GetThreshold() > 0 && hits[i].GetMatch() < req.GetThreshold() {
			continue
		}
		kept = append(kept, h)
		keptProto = append(keptProto, hits[i])
	}
	block, tokens, n := memory.RenderBlock(kept, int(req.GetTokenBudget()))
	return &exocortexv1.MemoryCompileResponse{Block: block, Tokens: int32(tokens), Hits: keptProto[:n],
		Dropped: int32(len(res.Hits) - n), Notice: res.Notice}, nil
}

func (s *Server) Get(ctx context.Context, req *exocortexv1.MemoryGetRequest) (*exocortexv1.MemoryGetResponse, error) {
	var r *memory.Record
	var ok bool
	var err error
	switch {
	case req.GetId() != "":
		r, ok, err = s.store.Get(ctx, req.GetId())
	case req.GetKey() != "":
		area := req.GetArea()
		if area == "" {
			area = memory.AreaMain
		}
		r, ok, err = s.store.GetByKey(ctx, area, req.GetKey())
	default:
		return nil, status.Error(codes.InvalidArgument, "memory get: give an id, or a key (and its area)")
	}
	if err != nil {
		return nil, statusOf(err)
	}
	return &exocortexv1.MemoryGetResponse{Found: ok, Record: RecordProto(r)}, nil
}

func (s *Server) List(req *exocortexv1.MemoryListRequest, stream exocortexv1.MemoryService_ListServer) error {
	var recs []*memory.Record
	keep := func(r *memory.Record) bool {
		return (req.GetSession() == "" || r.Provenance.Session == req.GetSession()) &&
			(req.GetSource() == "" || r.Provenance.Source == req.GetSource())
	}
	// The session and the source are part of the filter, tested before a
	// record is decoded in full: a session's few records out of 100k cost a
	// pass over the records' fields, not a copy of every record.
	f := filter(req.GetFilter())
	f.Session, f.Source = req.GetSession(), req.GetSource()
	if req.GetAll() {
		all, err := s.store.Records(stream.Context())
		if err != nil {
			return statusOf(err)
		}
		for _, r := range all {
			if keep(r) {
				recs = append(recs, r)
			}
		}
	} else {
		var err error
		if recs, err = s.store.List(stream.Context(), f); err != nil {
			return statusOf(err)
		}
	}
	batch := int(req.GetBatch())
	if batch <= 0 {
		batch = 1000
	}
	for {
		n := min(batch, len(recs))
		out := &exocortexv1.MemoryListResponse{Records: make([]*exocortexv1.MemoryRecord, n)}
		for i, r := range recs[:n] {
			out.Records[i] = RecordProto(r)
		}
		if err := stream.Send(out); err != nil {
			return err
		}
		if recs = recs[n:]; len(recs) == 0 {
			return nil
		}
	}
}

func (s *Server) Census(ctx context.Context, req *exocortexv1.MemoryCensusRequest) (*exocortexv1.MemoryCensusResponse, error) {
	out := &exocortexv1.MemoryCensusResponse{Areas: map[string]*exocortexv1.MemoryAreaCensus{}}
	census, err := s.store.Census(ctx, filter(req.GetFilter()))
	if err != nil {
		return nil, statusOf(err)
	}
	for area, c := range census {
		out.Areas[area] = &exocortexv1.MemoryAreaCensus{Records: int32(c.Records), Tags: counts(c.Tags)}
	}
	return out, nil
}

func (s *Server) Save(ctx context.Context, req *exocortexv1.MemorySaveRequest) (*exocortexv1.MemorySaveResponse, error) {
	ins := make([]memory.Input, len(req.GetRecords()))
	for i, p := range req.GetRecords() {
		ins[i] = input(p)
	}
	recs, err := s.store.PutBatch(ctx, ins, source(req.GetSource()))
	if err != nil {
		return nil, statusOf(err)
	}
	s.wrote()
	out := &exocortexv1.MemorySaveResponse{Records: make([]*exocortexv1.MemoryRecord, len(recs))}
	for i, r := range recs {
		out.Records[i] = RecordProto(r)
		out.Seq = max(out.Seq, r.Provenance.UpdatedSeq)
	}
	return out, nil
}

func (s *Server) Update(ctx context.Context, req *exocortexv1.MemoryUpdateRequest) (*exocortexv1.MemoryUpdateResponse, error) {
	s.umu.Lock()
	defer s.umu.Unlock()
	r, ok, err := s.store.Get(ctx, req.GetId())
	if err != nil {
		return nil, statusOf(err)
	}
	if !ok {
		return nil, statusOf(fmt.Errorf("memory update: record %s: %w", req.GetId(), memory.ErrNotFound))
	}
	imp := r.Importance
	created := r.Created
	in := memory.Input{ID: r.ID, Area: r.Area, Text: r.Text, Key: r.Key, Tags: r.Tags, Metadata: r.Metadata,
		Importance: &imp, Created: &created, Status: r.Status}
	if req.Text != nil {
		in.Text = req.GetText()
	}
	if req.Key != nil {
		in.Key = req.GetKey()
	}
	if req.GetTags() != nil {
		in.Tags = req.GetTags().GetTags()
	}
	if req.GetMetadata() != nil {
		in.Metadata = structMeta(req.GetMetadata())
	}
	if req.Importance != nil {
		v := req.GetImportance()
		in.Importance = &v
	}
	rec, err := s.store.Put(ctx, in, source(req.GetSource()))
	if err != nil {
		return nil, statusOf(err)
	}
	s.wrote()
	return &exocortexv1.MemoryUpdateResponse{Record: RecordProto(rec)}, nil
}

func (s *Server) Archive(ctx context.Context, req *exocortexv1.MemoryArchiveRequest) (*exocortexv1.MemoryArchiveResponse, error) {
	if err := s.store.Archive(ctx, req.GetId(), req.GetReason(), req.GetSupersededBy(), source(req.GetSource())); err != nil {
		return nil, statusOf(err)
	}
	s.wrote()
	return &exocortexv1.MemoryArchiveResponse{}, nil
}

func (s *Server) Restore(ctx context.Context, req *exocortexv1.MemoryRestoreRequest) (*exocortexv1.MemoryRestoreResponse, error) {
	if err := s.store.Restore(ctx, req.GetId(), req.GetReason(), source(req.GetSource())); err != nil {
		return nil, statusOf(err)
	}
	s.wrote()
	return &exocortexv1.MemoryRestoreResponse{}, nil
}

func (s *Server) Delete(ctx context.Context, req *exocortexv1.MemoryDeleteRequest) (*exocortexv1.MemoryDeleteResponse, error) {
	if err := s.store.Delete(ctx, req.GetId(), req.GetReason(), source(req.GetSource())); err != nil {
		return nil, statusOf(err)
	}
	s.wrote()
	return &exocortexv1.MemoryDeleteResponse{}, nil
}

func (s *Server) Forget(ctx context.Context, req *exocortexv1.MemoryForgetRequest) (*exocortexv1.MemoryForgetResponse, error) {
	text, err := s.store.MemoryForget(ctx, req.GetQuery(), req.GetThreshold(), req.GetFilter(), source(req.GetSource()))
	if err != nil {
		return nil, statusOf(err)
	}
	s.wrote()
	return &exocortexv1.MemoryForgetResponse{Text: text}, nil
}

func (s *Server) Merge(ctx context.Context, req *exocortexv1.MemoryMergeRequest) (*exocortexv1.MemoryMergeResponse, error) {
	err := s.store.Merge(ctx, memory.MergeEvent{Into: req.GetInto(), From: req.GetFrom(), Text: req.GetText(),
		Reason: req.GetReason(), Source: source(req.GetSource())})
	if err != nil {
		return nil, statusOf(err)
	}
	s.wrote()
	return &exocortexv1.MemoryMergeResponse{}, nil
}

func (s *Server) RecordAccess(ctx context.Context, req *exocortexv1.MemoryRecordAccessRequest) (*exocortexv1.MemoryRecordAccessResponse, error) {
	if err := s.store.RecordAccess(ctx, req.GetIds(), source(req.GetSource())); err != nil {
		return nil, statusOf(err)
	}
	s.wrote()
	return &exocortexv1.MemoryRecordAccessResponse{}, nil
}

func (s *Server) Append(ctx context.Context, req *exocortexv1.MemoryAppendRequest) (*exocortexv1.MemoryAppendResponse, error) {
	entries := make([]staging.Entry, len(req.GetEntries()))
	for i, e := range req.GetEntries() {
		var payload any
		if len(e.GetPayload()) > 0 {
			payload = json.RawMessage(e.GetPayload())
		}
		entries[i] = staging.Entry{Kind: e.GetKind(), Session: e.GetSession(), Payload: payload, TS: fromTS(e.GetTs())}
	}
	recs, err := s.store.Append(ctx, entries)
	if err != nil {
		return nil, statusOf(err)
	}
	s.wrote()
	out := &exocortexv1.MemoryAppendResponse{Events: make([]*exocortexv1.MemoryJournalEvent, len(recs))}
	for i, r := range recs {
		out.Events[i] = eventProto(r)
	}
	return out, nil
}

func (s *Server) History(ctx context.Context, req *exocortexv1.MemoryHistoryRequest) (*exocortexv1.MemoryHistoryResponse, error) {
	hist, err := s.store.History(ctx, req.GetId())
	if err != nil {
		return nil, statusOf(err)
	}
	out := &exocortexv1.MemoryHistoryResponse{Entries: make([]*exocortexv1.MemoryHistoryEntry, len(hist))}
	for i, h := range hist {
		out.Entries[i] = &exocortexv1.MemoryHistoryEntry{Summary: h.Summary(), Event: &exocortexv1.MemoryJournalEvent{
			Seq: h.Seq, Ts: ts(h.TS), Kind: h.Kind, Session: h.Session, Payload: h.Payload}}
	}
	r, ok, err := s.store.Get(ctx, req.GetId())
	if err != nil {
		return nil, statusOf(err)
	}
	if ok {
		out.Record = RecordProto(r)
	}
	return out, nil
}

func (s *Server) Stats(ctx context.Context, req *exocortexv1.MemoryStatsRequest) (*exocortexv1.MemoryStatsResponse, error) {
	st, err := s.store.Stats(ctx)
	if err != nil {
		return nil, statusOf(err)
	}
	st.Embedder = s.embedder
	out := statsProto(st)
	out.JournalPath = s.store.JournalPath()
	out.Journal = s.store.JournalPath()
	if sh, ok := s.store.Shared(ctx); ok {
		out.Journal, out.JournalShared = sh.Journal, true
		out.JournalStreamSeq, out.JournalLag, out.JournalOffline, out.Promoter = sh.StreamSeq, sh.Lag, sh.Offline, sh.Promoter
	}
	out.OwnerPid = int32(os.Getpid())
	if ch, ok := s.store.EmbeddingChange(); ok {
		out.EmbeddingChange = &exocortexv1.MemoryEmbeddingChange{From: ch.OldModel, To: ch.NewModel}
	}
	return out, nil
}

func (s *Server) Check(ctx context.Context, req *exocortexv1.MemoryCheckRequest) (*exocortexv1.MemoryCheckResponse, error) {
	out := &exocortexv1.MemoryCheckResponse{}
	add := func(err error) {
		if err != nil {
			out.Problems = append(out.Problems, strings.Split(err.Error(), "\n")...)
		}
	}
	if req.GetFiles() {
		add(s.store.CheckFiles())
	}
	if req.GetFulltext() {
		add(s.store.CheckFulltext())
	}
	return out, nil
}

func (s *Server) Vectors(ctx context.Context, req *exocortexv1.MemoryVectorsRequest) (*exocortexv1.MemoryVectorsResponse, error) {
	out := &exocortexv1.MemoryVectorsResponse{Vectors: make([]*exocortexv1.MemoryVector, len(req.GetIds()))}
	for i, id := range req.GetIds() {
		v, ok, err := s.store.Vector(ctx, id)
		if err != nil {
			return nil, statusOf(err)
		}
		out.Vectors[i] = &exocortexv1.MemoryVector{Id: id, Found: ok, Values: v}
	}
	return out, nil
}

func (s *Server) Embed(ctx context.Context, req *exocortexv1.MemoryEmbedRequest) (*exocortexv1.MemoryEmbedResponse, error) {
	e := s.store.Embedder()
	if e == nil {
		return &exocortexv1.MemoryEmbedResponse{}, nil
	}
	vecs, err := e.Embed(ctx, req.GetTexts())
	if err != nil {
		return nil, statusOf(fmt.Errorf("memory embed: %w", err))
	}
	out := &exocortexv1.MemoryEmbedResponse{Model: e.ModelID(), Vectors: make([]*exocortexv1.MemoryVector, len(vecs))}
	for i, v := range vecs {
		out.Vectors[i] = &exocortexv1.MemoryVector{Found: v != nil, Values: v}
	}
	return out, nil
}

func (s *Server) Import(stream exocortexv1.MemoryService_ImportServer) error {
	first, err := stream.Recv()
	if errors.Is(err, io.EOF) {
		return stream.Send(&exocortexv1.MemoryImportResponse{Reply: &exocortexv1.MemoryImportResponse_Report{Report: &exocortexv1.MemoryImportReport{}}})
	}
	if err != nil {
		return err
	}
	pr, pw := io.Pipe()
	go func() {
		data := first.GetData()
		for {
			if len(data) > 0 {
				if _, err := pw.Write(data); err != nil {
					return
				}
			}
			msg, err := stream.Recv()
			if errors.Is(err, io.EOF) {
				pw.Close()
				return
			}
			if err != nil {
				pw.CloseWithError(err)
				return
			}
			data = msg.GetData()
		}
	}()
	defer pr.Close()
	var sendErr error
	rep, err := s.store.Import(stream.Context(), pr, source(first.GetSource()), func(p memory.ImportProgress) {
		s.wrote()
		if sendErr == nil {
			sendErr = stream.Send(&exocortexv1.MemoryImportResponse{Reply: &exocortexv1.MemoryImportResponse_Progress{Progress: &exocortexv1.MemoryImportProgress{
				Lines: int32(p.Lines), Imported: int32(p.Imported), Bad: int32(p.Bad), Bytes: p.Bytes, Committed: p.Committed}}})
		}
	})
	if err != nil {
		return statusOf(err)
	}
	if sendErr != nil {
		return sendErr
	}
	out := &exocortexv1.MemoryImportReport{Lines: int32(rep.Lines), Imported: int32(rep.Imported), Skipped: int32(rep.Skipped)}
	for _, b := range rep.Bad {
		out.Bad = append(out.Bad, &exocortexv1.MemoryBadInput{Line: int32(b.Line), Reason: b.Reason})
	}
	return stream.Send(&exocortexv1.MemoryImportResponse{Reply: &exocortexv1.MemoryImportResponse_Report{Report: out}})
}

// chunkWriter sends what is written in messages of at most chunk bytes.
type chunkWriter struct {
	send func([]byte) error
}

const chunk = 256 << 10

func (w chunkWriter) Write(p []byte) (int, error) {
	n := 0
	for len(p) > 0 {
		k := min(len(p), chunk)
		if err := w.send(append([]byte(nil), p[:k]...)); err != nil {
			return n, err
		}
		n += k
		p = p[k:]
	}
	return n, nil
}

func (s *Server) Export(req *exocortexv1.MemoryExportRequest, stream exocortexv1.MemoryService_ExportServer) error {
	w := chunkWriter{send: func(b []byte) error { return stream.Send(&exocortexv1.MemoryExportResponse{Data: b}) }}
	bw := bufio.NewWriterSize(w, chunk)
	n, err := s.store.Export(stream.Context(), bw)
	if err == nil {
		err = bw.Flush()
	}
	if err != nil {
		return statusOf(err)
	}
	return stream.Send(&exocortexv1.MemoryExportResponse{Records: int32(n)})
}

// watchPoll bounds how long Watch waits for a write it was not told of (one
// made by the store without this server).
const watchPoll = time.Second

func (s *Server) Watch(req *exocortexv1.MemoryWatchRequest, stream exocortexv1.MemoryService_WatchServer) error {
	ctx := stream.Context()
	after := req.GetAfter()
	for {
		changed := s.waitChange()
		err := s.store.ReadJournal(ctx, after, func(r staging.Record) error {
			after = r.Seq
			if !strings.HasPrefix(r.Kind, req.GetKindPrefix()) {
				return nil
			}
			return stream.Send(&exocortexv1.MemoryWatchResponse{Event: eventProto(r)})
		})
		if err != nil {
			return statusOf(err)
		}
		if !req.GetFollow() {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-changed:
		case <-time.After(watchPoll):
		}
	}
}

func (s *Server) ToolSave(ctx context.Context, req *exocortexv1.MemoryToolSaveRequest) (*exocortexv1.MemoryToolResponse, error) {
	text, err := s.store.MemorySave(ctx, req.GetKey(), req.GetValue(), req.GetTags(), source(req.GetSource()))
	if err != nil {
		return nil, statusOf(err)
	}
	s.wrote()
	return &exocortexv1.MemoryToolResponse{Text: text}, nil
}

func (s *Server) ToolRetrieve(ctx context.Context, req *exocortexv1.MemoryToolRetrieveRequest) (*exocortexv1.MemoryToolResponse, error) {
	text, err := s.store.MemoryRetrieve(ctx, req.GetKey(), req.GetTags())
	if err != nil {
		return nil, statusOf(err)
	}
	return &exocortexv1.MemoryToolResponse{Text: text}, nil
}

func (s *Server) ToolLoad(ctx context.Context, req *exocortexv1.MemoryToolLoadRequest) (*exocortexv1.MemoryToolResponse, error) {
	text, err := s.store.MemoryLoad(ctx, req.GetQuery(), req.GetThreshold(), int(req.GetLimit()), req.GetFilter(), source(req.GetSource()))
	if err != nil {
		return nil, statusOf(err)
	}
	return &exocortexv1.MemoryToolResponse{Text: text}, nil
}

func (s *Server) ToolForget(ctx context.Context, req *exocortexv1.MemoryToolForgetRequest) (*exocortexv1.MemoryToolResponse, error) {
	text, err := s.store.MemoryForget(ctx, req.GetQuery(), req.GetThreshold(), req.GetFilter(), source(req.GetSource()))
	if err != nil {
		return nil, statusOf(err)
	}
	s.wrote()
	return &exocortexv1.MemoryToolResponse{Text: text}, nil
}

func (s *Server) ToolDelete(ctx context.Context, req *exocortexv1.MemoryToolDeleteRequest) (*exocortexv1.MemoryToolResponse, error) {
	text, err := s.store.MemoryDelete(ctx, req.GetKey(), source(req.GetSource()))
	if err != nil {
		return nil, statusOf(err)
	}
	s.wrote()
	return &exocortexv1.MemoryToolResponse{Text: text}, nil
}
