package service

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/exocortex/exocortex/memory"
	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
	"github.com/exocortex/exocortex/staging"
)

// Remote is the store's Go API over a MemoryService client: the methods of
// *memory.Store that the host-side clients use (the CLI, the terminal's
// /memory, sleep), each taking a context and returning the service's errors
// as RemoteError. C may be a *Client or any other connection to the service.
type Remote struct {
	C exocortexv1.MemoryServiceClient
}

// Put saves one record (see memory.Store.Put).
func (r Remote) Put(ctx context.Context, in memory.Input, src memory.Source) (*memory.Record, error) {
	recs, err := r.PutBatch(ctx, []memory.Input{in}, src)
	if err != nil {
		return nil, err
	}
	return recs[0], nil
}

// PutBatch saves records in one journal write.
func (r Remote) PutBatch(ctx context.Context, ins []memory.Input, src memory.Source) ([]*memory.Record, error) {
	req := &exocortexv1.MemorySaveRequest{Source: SourceProto(src), Records: make([]*exocortexv1.MemoryInput, len(ins))}
	for i, in := range ins {
		req.Records[i] = InputProto(in)
	}
	resp, err := r.C.Save(ctx, req)
	if err != nil {
		return nil, Error(err)
	}
	return Records(resp.GetRecords()), nil
}

// Get returns the record with id; false when there is none.
func (r Remote) Get(ctx context.Context, id string) (*memory.Record, bool, error) {
	return r.get(ctx, &exocortexv1.MemoryGetRequest{Id: id})
}

// GetByKey returns the record with key in area; false when there is none.
func (r Remote) GetByKey(ctx context.Context, area, key string) (*memory.Record, bool, error) {
	return r.get(ctx, &exocortexv1.MemoryGetRequest{Area: area, Key: key})
}

func (r Remote) get(ctx context.Context, req *exocortexv1.MemoryGetRequest) (*memory.Record, bool, error) {
	resp, err := r.C.Get(ctx, req)
	if err != nil {
		return nil, false, Error(err)
	}
	return Record(resp.GetRecord()), resp.GetFound(), nil
}

// Search runs hybrid recall exactly as the owner's store does.
func (r Remote) Search(ctx context.Context, query string, o memory.SearchOptions) (memory.Result, error) {
	resp, err := r.C.Search(ctx, &exocortexv1.MemorySearchRequest{Query: query, Options: OptionsProto(o)})
	if err != nil {
		return memory.Result{}, Error(err)
	}
	return Result(resp), nil
}

// Archive, Restore and Delete change one record's status.
func (r Remote) Archive(ctx context.Context, id, reason, supersededBy string, src memory.Source) error {
	_, err := r.C.Archive(ctx, &exocortexv1.MemoryArchiveRequest{Id: id, Reason: reason, SupersededBy: supersededBy, Source: SourceProto(src)})
	return Error(err)
}

func (r Remote) Restore(ctx context.Context, id, reason string, src memory.Source) error {
	_, err := r.C.Restore(ctx, &exocortexv1.MemoryRestoreRequest{Id: id, Reason: reason, Source: SourceProto(src)})
	return Error(err)
}

func (r Remote) Delete(ctx context.Context, id, reason string, src memory.Source) error {
	_, err := r.C.Delete(ctx, &exocortexv1.MemoryDeleteRequest{Id: id, Reason: reason, Source: SourceProto(src)})
	return Error(err)
}

// MemoryForget deletes what matches query (Agent Zero's memory_forget).
func (r Remote) MemoryForget(ctx context.Context, query string, threshold float64, filter string, src memory.Source) (string, error) {
	resp, err := r.C.Forget(ctx, &exocortexv1.MemoryForgetRequest{Query: query, Threshold: threshold, Filter: filter, Source: SourceProto(src)})
	if err != nil {
		return "", Error(err)
	}
	return resp.GetText(), nil
}

// History lists the journal events that touched id.
func (r Remote) History(ctx context.Context, id string) ([]memory.HistoryEntry, error) {
	resp, err := r.C.History(ctx, &exocortexv1.MemoryHistoryRequest{Id: id})
	if err != nil {
		return nil, Error(err)
	}
	out := make([]memory.HistoryEntry, len(resp.GetEntries()))
	for i, e := range resp.GetEntries() {
		out[i] = HistoryEntry(e)
	}
	return out, nil
}

// Status is the owner's description of the store: Stats (with the embedder
// named for people), and where its journal is.
type Status struct {
	memory.Stats
	JournalPath string
	OwnerPID    int
	// Shared is the store's shared journal (nil: its journal is the file).
	Shared *memory.SharedStatus
}

// Stats describes the store.
func (r Remote) Stats(ctx context.Context) (Status, error) {
	resp, err := r.C.Stats(ctx, &exocortexv1.MemoryStatsRequest{})
	if err != nil {
		return Status{}, Error(err)
	}
	st := Status{Stats: Stats(resp), JournalPath: resp.GetJournalPath(), OwnerPID: int(resp.GetOwnerPid())}
	if resp.GetJournalShared() {
		st.Shared = &memory.SharedStatus{Journal: resp.GetJournal(), StreamSeq: resp.GetJournalStreamSeq(), Applied: resp.GetJournalSeq(),
			Lag: resp.GetJournalLag(), Offline: resp.GetJournalOffline(), Promoter: resp.GetPromoter()}
	}
	return st, nil
}

// Check runs the store's file and full-text checks; the error lists what they
// found (nil: sound).
func (r Remote) Check(ctx context.Context, files, fulltext bool) error {
	resp, err := r.C.Check(ctx, &exocortexv1.MemoryCheckRequest{Files: files, Fulltext: fulltext})
	if err != nil {
		return Error(err)
	}
	if len(resp.GetProblems()) == 0 {
		return nil
	}
	return errors.New(strings.Join(resp.GetProblems(), "\n"))
}

// Records returns every record of every area and status, sorted by id.
func (r Remote) Records(ctx context.Context) ([]*memory.Record, error) {
	return r.List(ctx, &exocortexv1.MemoryListRequest{All: true})
}

// List returns the records req admits.
func (r Remote) List(ctx context.Context, req *exocortexv1.MemoryListRequest) ([]*memory.Record, error) {
	stream, err := r.C.List(ctx, req)
	if err != nil {
		return nil, Error(err)
	}
	var out []*memory.Record
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return nil, Error(err)
		}
		out = append(out, Records(resp.GetRecords())...)
	}
}

// Vectors returns the index's vectors of ids (absent ones are left out).
func (r Remote) Vectors(ctx context.Context, ids []string) (map[string][]float32, error) {
	resp, err := r.C.Vectors(ctx, &exocortexv1.MemoryVectorsRequest{Ids: ids})
	if err != nil {
		return nil, Error(err)
	}
	out := make(map[string][]float32, len(ids))
	for _, v := range resp.GetVectors() {
		if v.GetFound() {
			out[v.GetId()] = v.GetValues()
		}
	}
	return out, nil
}

// Embed embeds texts with the owner's embedder; model is "" without one.
func (r Remote) Embed(ctx context.Context, texts []string) (model string, vecs [][]float32, err error) {
	resp, err := r.C.Embed(ctx, &exocortexv1.MemoryEmbedRequest{Texts: texts})
	if err != nil {
		return "", nil, Error(err)
	}
	vecs = make([][]float32, len(resp.GetVectors()))
	for i, v := range resp.GetVectors() {
		if v.GetFound() {
			vecs[i] = v.GetValues()
		}
	}
	return resp.GetModel(), vecs, nil
}

// Append writes journal entries as they are (see memory.Store.Append).
func (r Remote) Append(ctx context.Context, entries []staging.Entry) ([]staging.Record, error) {
	req := &exocortexv1.MemoryAppendRequest{Entries: make([]*exocortexv1.MemoryJournalEntry, len(entries))}
	for i, e := range entries {
		payload, err := staging.EncodePayload(e.Payload)
		if err != nil {
			return nil, fmt.Errorf("memory append: entry %d (%s): %w", i+1, e.Kind, err)
		}
		req.Entries[i] = &exocortexv1.MemoryJournalEntry{Kind: e.Kind, Session: e.Session, Payload: payload, Ts: ts(e.TS)}
	}
	resp, err := r.C.Append(ctx, req)
	if err != nil {
		return nil, Error(err)
	}
	out := make([]staging.Record, len(resp.GetEvents()))
	for i, e := range resp.GetEvents() {
		out[i] = staging.Record{V: staging.SchemaVersion, Seq: e.GetSeq(), TS: fromTS(e.GetTs()), Kind: e.GetKind(), Session: e.GetSession(), Payload: e.GetPayload()}
	}
	return out, nil
}

// Import streams JSONL records from in to the owner, calling progress as
// batches are committed (see memory.Store.Import).
func (r Remote) Import(ctx context.Context, in io.Reader, src memory.Source, progress func(memory.ImportProgress)) (memory.ImportReport, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := r.C.Import(ctx)
	if err != nil {
		return memory.ImportReport{}, Error(err)
	}
	sent := make(chan error, 1)
	go func() {
		buf := make([]byte, chunk)
		first := true
		for {
			n, rerr := in.Read(buf)
			if n > 0 || first {
				msg := &exocortexv1.MemoryImportRequest{Data: append([]byte(nil), buf[:n]...)}
				if first {
					msg.Source, first = SourceProto(src), false
				}
				if err := stream.Send(msg); err != nil {
					sent <- nil // the answer says why
					return
				}
			}
			if errors.Is(rerr, io.EOF) {
				sent <- stream.CloseSend()
				return
			}
			if rerr != nil {
				sent <- fmt.Errorf("memory import: reading the input: %w", rerr)
				cancel()
				return
			}
		}
	}()
	var rep memory.ImportReport
	for {
		resp, err := stream.Recv()
		if err != nil {
			cancel()
			select {
			case serr := <-sent:
				if serr != nil {
					return rep, serr
				}
			default: // still reading the input, which the answer makes moot
			}
			if errors.Is(err, io.EOF) {
				return rep, errors.New("memory import: the service ended the import without a report")
			}
			return rep, Error(err)
		}
		if p := resp.GetProgress(); p != nil && progress != nil {
			progress(memory.ImportProgress{Lines: int(p.GetLines()), Imported: int(p.GetImported()), Bad: int(p.GetBad()),
				Bytes: p.GetBytes(), Committed: p.GetCommitted()})
		}
		if p := resp.GetReport(); p != nil {
			rep = memory.ImportReport{Lines: int(p.GetLines()), Imported: int(p.GetImported()), Skipped: int(p.GetSkipped())}
			for _, b := range p.GetBad() {
				rep.Bad = append(rep.Bad, memory.BadInput{Line: int(b.GetLine()), Reason: b.GetReason()})
			}
			if serr := <-sent; serr != nil {
				return rep, serr
			}
			return rep, nil
		}
	}
}

// Export writes the active records as JSONL to w and returns how many.
func (r Remote) Export(ctx context.Context, w io.Writer) (int, error) {
	stream, err := r.C.Export(ctx, &exocortexv1.MemoryExportRequest{})
	if err != nil {
		return 0, Error(err)
	}
	n := 0
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, Error(err)
		}
		if len(resp.GetData()) > 0 {
			if _, err := w.Write(resp.GetData()); err != nil {
				return n, fmt.Errorf("memory export: %w", err)
			}
		}
		n += int(resp.GetRecords())
	}
}
