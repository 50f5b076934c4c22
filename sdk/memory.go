package sdk

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"

	"google.golang.org/grpc/status"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// MemoryAnyArea in Plugin.MemoryWriteAreas lets the plugin write every area.
const MemoryAnyArea = "*"

// memoryAreaRE is the form of an area name (memory.ValidArea's, which the SDK
// does not import: the store is the host's).
var memoryAreaRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// statusError is a memory service's error as people read it: its message
// without the transport's prefix ("rpc error: code = ... desc = "). It unwraps
// to the gRPC error, so status.FromError and status.Code still see its code.
type statusError struct{ err error }

func (e statusError) Error() string { return status.Convert(e.err).Message() }
func (e statusError) Unwrap() error { return e.err }

// GRPCStatus is the status of the error it wraps.
func (e statusError) GRPCStatus() *status.Status { return status.Convert(e.err) }

func plainErr(err error) error {
	if _, ok := status.FromError(err); !ok {
		return err
	}
	return statusError{err}
}

// Memory is the home's memory store as a plugin reaches it: the host's
// exocortex.v1.MemoryService (proto/exocortex/v1/memory.proto), served on the
// same connection as the Host service, with every write carrying the call's
// session and message as its provenance. The plugin must declare
// Plugin.UsesMemory, and may write only the areas of Plugin.MemoryWriteAreas;
// the host refuses anything else with an error naming the plugin and the area.
//
//	hits, err := c.Memory().Search(ctx, "where is the deploy script", &exocortexv1.MemorySearchOptions{Limit: 5})
//	recs, err := c.Memory().Save(ctx, &exocortexv1.MemoryInput{Area: "main", Key: "deploy", Text: "make release"})
//
// Every method of the service is on Client, with the request messages of
// memory.proto; the methods here are the common ones, shaped for Go.
type Memory struct {
	c      *Call
	source string
}

// Memory returns the memory store as this call reaches it. Writes are
// attributed to the call's session and message, with source "" (the host names
// the plugin: "plugin:NAME"); As sets another source.
func (c *Call) Memory() *Memory { return &Memory{c: c} }

// As returns m with writes attributed to source (e.g. "extension:recall",
// "tool:memory_save").
func (m *Memory) As(source string) *Memory { return &Memory{c: m.c, source: source} }

// Client returns the generated client of the host's memory service, for the
// methods Memory does not wrap (Compile, History, Watch, Update, ...). Fill each
// request's source with Source.
func (m *Memory) Client() (exocortexv1.MemoryServiceClient, error) {
	if m.c.host == nil {
		return nil, errors.New("the host's memory service is not reachable from this call")
	}
	return m.c.host.memoryClient()
}

// Source is the provenance of m's writes: the call's session and message and
// m's source.
func (m *Memory) Source() *exocortexv1.MemorySource {
	cx := m.c.Context()
	return &exocortexv1.MemorySource{Session: cx.GetSessionId(), Message: cx.GetMessageId(), Source: m.source}
}

// Search runs hybrid recall for query (a blank query lists what the filter
// admits); opts may be nil (the store's defaults: ten active records outside
// the library). With opts.RecordAccess the access is recorded with m's source.
func (m *Memory) Search(ctx context.Context, query string, opts *exocortexv1.MemorySearchOptions) (*exocortexv1.MemorySearchResponse, error) {
	cl, err := m.Client()
	if err != nil {
		return nil, err
	}
	if opts == nil {
		opts = &exocortexv1.MemorySearchOptions{}
	}
	if opts.GetRecordAccess() && opts.GetSource() == nil {
		opts.Source = m.Source()
	}
	resp, err := cl.Search(ctx, &exocortexv1.MemorySearchRequest{Query: query, Options: opts})
	if err != nil {
		return nil, fmt.Errorf("searching memory for %q: %w", query, plainErr(err))
	}
	return resp, nil
}

// Get returns the record with id; ok is false when there is none.
func (m *Memory) Get(ctx context.Context, id string) (rec *exocortexv1.MemoryRecord, ok bool, err error) {
	return m.get(ctx, &exocortexv1.MemoryGetRequest{Id: id}, "record "+id)
}

// GetByKey returns the record holding key in area; ok is false when there is
// none.
func (m *Memory) GetByKey(ctx context.Context, area, key string) (rec *exocortexv1.MemoryRecord, ok bool, err error) {
	return m.get(ctx, &exocortexv1.MemoryGetRequest{Area: area, Key: key}, fmt.Sprintf("key %q of area %s", key, area))
}

func (m *Memory) get(ctx context.Context, req *exocortexv1.MemoryGetRequest, what string) (*exocortexv1.MemoryRecord, bool, error) {
	cl, err := m.Client()
	if err != nil {
		return nil, false, err
	}
	resp, err := cl.Get(ctx, req)
	if err != nil {
		return nil, false, fmt.Errorf("getting memory %s: %w", what, plainErr(err))
	}
	return resp.GetRecord(), resp.GetFound(), nil
}

// Save upserts records in one journal write (a record with an id, or with a key
// its area holds, is updated) and returns them as stored, in order.
func (m *Memory) Save(ctx context.Context, records ...*exocortexv1.MemoryInput) ([]*exocortexv1.MemoryRecord, error) {
	if len(records) == 0 {
		return nil, nil
	}
	cl, err := m.Client()
	if err != nil {
		return nil, err
	}
	resp, err := cl.Save(ctx, &exocortexv1.MemorySaveRequest{Records: records, Source: m.Source()})
	if err != nil {
		return nil, fmt.Errorf("saving %d memory record(s): %w", len(records), plainErr(err))
	}
	return resp.GetRecords(), nil
}

// Archive takes the record id out of recall (reversibly), saying why.
func (m *Memory) Archive(ctx context.Context, id, reason string) error {
	cl, err := m.Client()
	if err != nil {
		return err
	}
	if _, err := cl.Archive(ctx, &exocortexv1.MemoryArchiveRequest{Id: id, Reason: reason, Source: m.Source()}); err != nil {
		return fmt.Errorf("archiving memory record %s: %w", id, plainErr(err))
	}
	return nil
}

// Delete removes the record id from the state, saying why (the journal keeps
// its history).
func (m *Memory) Delete(ctx context.Context, id, reason string) error {
	cl, err := m.Client()
	if err != nil {
		return err
	}
	if _, err := cl.Delete(ctx, &exocortexv1.MemoryDeleteRequest{Id: id, Reason: reason, Source: m.Source()}); err != nil {
		return fmt.Errorf("deleting memory record %s: %w", id, plainErr(err))
	}
	return nil
}

// RecordAccess counts a recall of the records ids (memory maintenance keeps
// what is used).
func (m *Memory) RecordAccess(ctx context.Context, ids ...string) error {
	if len(ids) == 0 {
		return nil
	}
	cl, err := m.Client()
	if err != nil {
		return err
	}
	if _, err := cl.RecordAccess(ctx, &exocortexv1.MemoryRecordAccessRequest{Ids: ids, Source: m.Source()}); err != nil {
		return fmt.Errorf("recording the access of %d memory record(s): %w", len(ids), plainErr(err))
	}
	return nil
}

// Census counts the active records the filter admits (nil: every area but the
// library) and their tags, per area.
func (m *Memory) Census(ctx context.Context, filter *exocortexv1.MemoryFilter) (map[string]*exocortexv1.MemoryAreaCensus, error) {
	cl, err := m.Client()
	if err != nil {
		return nil, err
	}
	resp, err := cl.Census(ctx, &exocortexv1.MemoryCensusRequest{Filter: filter})
	if err != nil {
		return nil, fmt.Errorf("counting memory records: %w", plainErr(err))
	}
	return resp.GetAreas(), nil
}

// List calls fn for each record req admits, in batches as the service sends
// them, sorted by id; an error from fn stops the listing and is returned.
func (m *Memory) List(ctx context.Context, req *exocortexv1.MemoryListRequest, fn func(*exocortexv1.MemoryRecord) error) error {
	cl, err := m.Client()
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx) // ends the stream when fn stops it
	defer cancel()
	stream, err := cl.List(ctx, req)
	if err != nil {
		return fmt.Errorf("listing memory records: %w", plainErr(err))
	}
	for {
		resp, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("listing memory records: %w", plainErr(err))
		}
		for _, r := range resp.GetRecords() {
			if err := fn(r); err != nil {
				return err
			}
		}
	}
}
