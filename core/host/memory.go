package host

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// Memory for plugins. A plugin that declares uses_memory in its manifest reaches
// the home's memory store through the host: the host serves
// exocortex.v1.MemoryService (memory.proto) to it on the broker stream of the
// Host service, and forwards each call to the memory service it holds (this
// process owns the home's store, or is a client of the process that does:
// memory/service.Connect). The plugin gets exactly what every other client
// gets, the built-in memory extensions included, with two rules the host
// keeps:
//   - a plugin that does not declare uses_memory is refused every call;
//   - a write (save, update, archive, restore, delete, merge, forget, append,
//     import, the memory tools that write) to an area outside the plugin's
//     memory_write_areas is refused, naming the plugin, the area and the field.
//     Reads reach every area (the store itself keeps the library apart).
// A write without a source in its provenance is attributed to "plugin:NAME".

// MemoryConnector returns the memory service the host forwards its plugins'
// memory calls to. It is called on a plugin's first memory call and again
// after it failed; a client it returned is kept.
type MemoryConnector func(ctx context.Context) (exocortexv1.MemoryServiceClient, error)

// memoryState is the part of Services the memory forwarding keeps.
type memoryState struct {
	memMu      sync.Mutex
	memConnect MemoryConnector
	memClient  exocortexv1.MemoryServiceClient
}

// SetMemory plugs in the memory service the plugins' memory calls go to.
func (s *Services) SetMemory(f MemoryConnector) {
	s.memMu.Lock()
	s.memConnect, s.memClient = f, nil
	s.memMu.Unlock()
}

// WarmMemory connects to the memory service now, ahead of the plugins' first
// call (which waits for it instead of connecting itself): an agent's host
// runs it beside its start-up, so the store's open and the embedder's load
// overlap the first model call. A failure is left for the first call to meet
// again.
//
// Once connected it primes the store: the census the memory catalog shows (the
// store keeps it until a write) and a first search (at 100k records the first
// touch of the mapped vector graphs and full-text segments costs tens of
// milliseconds, which the first prompt's recall would otherwise wait for).
// The results are dropped; such a search records no access.
func (s *Services) WarmMemory(ctx context.Context) {
	c, err := s.memory(ctx)
	if err != nil {
		s.memLog("the memory service is not reachable yet (the first memory call tries again)", err)
		return
	}
	_, _ = c.Census(ctx, &exocortexv1.MemoryCensusRequest{})
	_, _ = c.Search(ctx, &exocortexv1.MemorySearchRequest{Query: WarmQuery, Options: &exocortexv1.MemorySearchOptions{Limit: 1}})
}

// Memory returns the home's memory service, connecting on first use: the
// connection the plugins' memory calls go through, which a process serving
// memory to other clients too (exocortex serve's REST surfaces) shares.
func (s *Services) Memory(ctx context.Context) (exocortexv1.MemoryServiceClient, error) {
	return s.memory(ctx)
}

// WarmQuery is the search WarmMemory runs once the memory service answers.
const WarmQuery = "memory"

// memory returns the memory service, connecting on first use. Once connected,
// an embedding model change the store reports (it was built with another
// model and re-embedded its records) goes to the embedding sink, which fires
// embedding_model_changed.
func (s *Services) memory(ctx context.Context) (exocortexv1.MemoryServiceClient, error) {
	s.memMu.Lock()
	defer s.memMu.Unlock()
	if s.memClient != nil {
		return s.memClient, nil
	}
	if s.memConnect == nil {
		return nil, status.Error(codes.FailedPrecondition, "this host has no memory service to forward to (it was started without a home's memory)")
	}
	c, err := s.memConnect(context.WithoutCancel(ctx))
	if err != nil {
		if _, ok := status.FromError(err); ok {
			return nil, err
		}
		return nil, status.Errorf(codes.Unavailable, "connecting to the home's memory service: %v", err)
	}
	s.memClient = c
	go s.reportEmbeddingChange(context.WithoutCancel(ctx), c)
	return c, nil
}

// reportEmbeddingChange passes the store's embedding model change, if any, to
// the embedding sink.
func (s *Services) reportEmbeddingChange(ctx context.Context, c exocortexv1.MemoryServiceClient) {
	st, err := c.Stats(ctx, &exocortexv1.MemoryStatsRequest{})
	if err != nil || st.GetEmbeddingChange() == nil {
		return
	}
	s.mu.RLock()
	f := s.embedding
	s.mu.RUnlock()
	if f != nil {
		ch := st.GetEmbeddingChange()
		f(&EmbeddingChange{Store: st.GetDir(), OldModel: ch.GetFrom(), NewModel: ch.GetTo()})
	}
}

func (s *Services) memLog(msg string, err error) {
	s.mu.RLock()
	h := s.host
	s.mu.RUnlock()
	if h != nil {
		h.logger.Info(msg, "err", err)
	}
}

// closeMemory closes the memory service's client, if it is one that closes
// (memory/service.Client: an owner saves and lets the store go).
func (s *Services) closeMemory() error {
	s.memMu.Lock()
	defer s.memMu.Unlock()
	c, ok := s.memClient.(io.Closer)
	s.memClient = nil
	if !ok {
		return nil
	}
	return c.Close()
}

// memoryGate is MemoryService as one plugin sees it.
type memoryGate struct {
	exocortexv1.UnimplementedMemoryServiceServer
	s      *Services
	plugin string
	// manifest is the plugin's current manifest (it changes on a reload).
	manifest func() *exocortexv1.ManifestResponse
}

// memoryFor is the memory service p's process is given.
func (s *Services) memoryFor(p *Plugin) exocortexv1.MemoryServiceServer {
	return s.MemoryFor(p.Name(), p.Manifest)
}

// MemoryFor is the memory service as the plugin named plugin sees it, under
// the declarations manifest returns: what the host serves to that plugin's
// process. It is exported for tests that serve a plugin in-process.
func (s *Services) MemoryFor(plugin string, manifest func() *exocortexv1.ManifestResponse) exocortexv1.MemoryServiceServer {
	return &memoryGate{s: s, plugin: plugin, manifest: manifest}
}

// declared checks that the plugin declared uses_memory.
func (g *memoryGate) declared(rpc string) error {
	if g.manifest().GetUsesMemory() {
		return nil
	}
	return status.Errorf(codes.PermissionDenied, "plugin %s called the memory service (%s), but its manifest does not declare uses_memory: "+
		"declare it, with the areas it writes (Go: sdk.Plugin{UsesMemory: true, MemoryWriteAreas: []string{\"main\"}}; Python: Plugin(uses_memory=True, memory_write_areas=[\"main\"]))", g.plugin, rpc)
}

// client checks that the plugin declared uses_memory and returns the service.
func (g *memoryGate) client(ctx context.Context, rpc string) (exocortexv1.MemoryServiceClient, error) {
	if err := g.declared(rpc); err != nil {
		return nil, err
	}
	return g.s.memory(ctx)
}

// AreaRefusedError is the error of a plugin's memory write to an area its
// manifest does not declare in memory_write_areas.
type AreaRefusedError struct {
	Plugin, Area, RPC string
	Declared          []string
}

func (e *AreaRefusedError) Error() string {
	declared := "none"
	if len(e.Declared) > 0 {
		declared = strings.Join(e.Declared, ", ")
	}
	if e.Area == "*" {
		return fmt.Sprintf("plugin %s: memory %s may reach any area, so it needs memory_write_areas \"*\" in the plugin's manifest (declared: %s)", e.Plugin, e.RPC, declared)
	}
	return fmt.Sprintf("plugin %s may not write memory area %q (%s): its manifest's memory_write_areas declare %s; add %q (or \"*\") to write it", e.Plugin, e.Area, e.RPC, declared, e.Area)
}

// GRPCStatus makes the error a PermissionDenied status on the wire.
func (e *AreaRefusedError) GRPCStatus() *status.Status {
	return status.New(codes.PermissionDenied, e.Error())
}

// mayWrite checks that the plugin declared area ("" is main; "*" asks for every
// area).
func (g *memoryGate) mayWrite(rpc string, areas ...string) error {
	declared := g.manifest().GetMemoryWriteAreas()
	if slices.Contains(declared, anyArea) {
		return nil
	}
	for _, a := range areas {
		if a == "" {
			a = areaMain
		}
		if !slices.Contains(declared, a) {
			return &AreaRefusedError{Plugin: g.plugin, Area: a, RPC: rpc, Declared: declared}
		}
	}
	return nil
}

// The area names and journal kinds the gate knows (package memory's; a test
// checks they agree).
const (
	anyArea     = "*"
	areaMain    = "main"
	kindUpsert  = "memory.upsert.v1"
	kindAccess  = "memory.access.v1"
	kindArchive = "memory.archive.v1"
	kindRestore = "memory.restore.v1"
	kindDelete  = "memory.delete.v1"
)

// areaOf is the area of the record id (for a write naming it by id).
func (g *memoryGate) areaOf(ctx context.Context, c exocortexv1.MemoryServiceClient, id string) (string, error) {
	resp, err := c.Get(ctx, &exocortexv1.MemoryGetRequest{Id: id})
	if err != nil {
		return "", err
	}
	if !resp.GetFound() {
		return "", status.Errorf(codes.NotFound, "no memory record with id %q", id)
	}
	return resp.GetRecord().GetArea(), nil
}

// writeByID checks a write to the records ids and returns the service.
func (g *memoryGate) writeByID(ctx context.Context, rpc string, ids ...string) (exocortexv1.MemoryServiceClient, error) {
	c, err := g.client(ctx, rpc)
	if err != nil {
		return nil, err
	}
	if slices.Contains(g.manifest().GetMemoryWriteAreas(), anyArea) {
		return c, nil
	}
	for _, id := range ids {
		a, err := g.areaOf(ctx, c, id)
		if err != nil {
			return nil, err
		}
		if err := g.mayWrite(rpc, a); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// source fills in the provenance's source of a write that names none.
func (g *memoryGate) source(src *exocortexv1.MemorySource) *exocortexv1.MemorySource {
	if src == nil {
		src = &exocortexv1.MemorySource{}
	}
	if src.GetSource() == "" {
		src.Source = "plugin:" + g.plugin
	}
	return src
}

// Reads.

// read forwards a call that needs uses_memory only.
func read[Resp any](ctx context.Context, g *memoryGate, rpc string, call func(exocortexv1.MemoryServiceClient) (Resp, error)) (Resp, error) {
	c, err := g.client(ctx, rpc)
	if err != nil {
		var none Resp
		return none, err
	}
	return call(c)
}

func (g *memoryGate) Search(ctx context.Context, req *exocortexv1.MemorySearchRequest) (*exocortexv1.MemorySearchResponse, error) {
	c, err := g.client(ctx, "Search")
	if err != nil {
		return nil, err
	}
	if o := req.GetOptions(); o.GetRecordAccess() {
		o.Source = g.source(o.GetSource())
	}
	return c.Search(ctx, req)
}

func (g *memoryGate) Compile(ctx context.Context, req *exocortexv1.MemoryCompileRequest) (*exocortexv1.MemoryCompileResponse, error) {
	c, err := g.client(ctx, "Compile")
	if err != nil {
		return nil, err
	}
	if o := req.GetOptions(); o.GetRecordAccess() {
		o.Source = g.source(o.GetSource())
	}
	return c.Compile(ctx, req)
}

func (g *memoryGate) Get(ctx context.Context, req *exocortexv1.MemoryGetRequest) (*exocortexv1.MemoryGetResponse, error) {
	return read(ctx, g, "Get", func(c exocortexv1.MemoryServiceClient) (*exocortexv1.MemoryGetResponse, error) {
		return c.Get(ctx, req)
	})
}

func (g *memoryGate) Census(ctx context.Context, req *exocortexv1.MemoryCensusRequest) (*exocortexv1.MemoryCensusResponse, error) {
	return read(ctx, g, "Census", func(c exocortexv1.MemoryServiceClient) (*exocortexv1.MemoryCensusResponse, error) {
		return c.Census(ctx, req)
	})
}

func (g *memoryGate) History(ctx context.Context, req *exocortexv1.MemoryHistoryRequest) (*exocortexv1.MemoryHistoryResponse, error) {
	return read(ctx, g, "History", func(c exocortexv1.MemoryServiceClient) (*exocortexv1.MemoryHistoryResponse, error) {
		return c.History(ctx, req)
	})
}

func (g *memoryGate) Stats(ctx context.Context, req *exocortexv1.MemoryStatsRequest) (*exocortexv1.MemoryStatsResponse, error) {
	return read(ctx, g, "Stats", func(c exocortexv1.MemoryServiceClient) (*exocortexv1.MemoryStatsResponse, error) {
		return c.Stats(ctx, req)
	})
}

func (g *memoryGate) Check(ctx context.Context, req *exocortexv1.MemoryCheckRequest) (*exocortexv1.MemoryCheckResponse, error) {
	return read(ctx, g, "Check", func(c exocortexv1.MemoryServiceClient) (*exocortexv1.MemoryCheckResponse, error) {
		return c.Check(ctx, req)
	})
}

func (g *memoryGate) Vectors(ctx context.Context, req *exocortexv1.MemoryVectorsRequest) (*exocortexv1.MemoryVectorsResponse, error) {
	return read(ctx, g, "Vectors", func(c exocortexv1.MemoryServiceClient) (*exocortexv1.MemoryVectorsResponse, error) {
		return c.Vectors(ctx, req)
	})
}

func (g *memoryGate) Embed(ctx context.Context, req *exocortexv1.MemoryEmbedRequest) (*exocortexv1.MemoryEmbedResponse, error) {
	return read(ctx, g, "Embed", func(c exocortexv1.MemoryServiceClient) (*exocortexv1.MemoryEmbedResponse, error) {
		return c.Embed(ctx, req)
	})
}

func (g *memoryGate) ToolRetrieve(ctx context.Context, req *exocortexv1.MemoryToolRetrieveRequest) (*exocortexv1.MemoryToolResponse, error) {
	return read(ctx, g, "ToolRetrieve", func(c exocortexv1.MemoryServiceClient) (*exocortexv1.MemoryToolResponse, error) {
		return c.ToolRetrieve(ctx, req)
	})
}

// ToolLoad is a search; the access it records is not a write of an area.
func (g *memoryGate) ToolLoad(ctx context.Context, req *exocortexv1.MemoryToolLoadRequest) (*exocortexv1.MemoryToolResponse, error) {
	c, err := g.client(ctx, "ToolLoad")
	if err != nil {
		return nil, err
	}
	req.Source = g.source(req.GetSource())
	return c.ToolLoad(ctx, req)
}

// RecordAccess counts a recall: it changes no record's content, so it needs
// uses_memory only.
func (g *memoryGate) RecordAccess(ctx context.Context, req *exocortexv1.MemoryRecordAccessRequest) (*exocortexv1.MemoryRecordAccessResponse, error) {
	c, err := g.client(ctx, "RecordAccess")
	if err != nil {
		return nil, err
	}
	req.Source = g.source(req.GetSource())
	return c.RecordAccess(ctx, req)
}

// Writes.

func (g *memoryGate) Save(ctx context.Context, req *exocortexv1.MemorySaveRequest) (*exocortexv1.MemorySaveResponse, error) {
	c, err := g.client(ctx, "Save")
	if err != nil {
		return nil, err
	}
	for _, in := range req.GetRecords() {
		if err := g.mayWrite("Save", in.GetArea()); err != nil {
			return nil, err
		}
		// A record named by id keeps its area: the write changes that one.
		if in.GetId() != "" && !slices.Contains(g.manifest().GetMemoryWriteAreas(), anyArea) {
			if resp, err := c.Get(ctx, &exocortexv1.MemoryGetRequest{Id: in.GetId()}); err == nil && resp.GetFound() {
				if err := g.mayWrite("Save", resp.GetRecord().GetArea()); err != nil {
					return nil, err
				}
			}
		}
	}
	req.Source = g.source(req.GetSource())
	return c.Save(ctx, req)
}

func (g *memoryGate) Update(ctx context.Context, req *exocortexv1.MemoryUpdateRequest) (*exocortexv1.MemoryUpdateResponse, error) {
	c, err := g.writeByID(ctx, "Update", req.GetId())
	if err != nil {
		return nil, err
	}
	req.Source = g.source(req.GetSource())
	return c.Update(ctx, req)
}

func (g *memoryGate) Archive(ctx context.Context, req *exocortexv1.MemoryArchiveRequest) (*exocortexv1.MemoryArchiveResponse, error) {
	c, err := g.writeByID(ctx, "Archive", req.GetId())
	if err != nil {
		return nil, err
	}
	req.Source = g.source(req.GetSource())
	return c.Archive(ctx, req)
}

func (g *memoryGate) Restore(ctx context.Context, req *exocortexv1.MemoryRestoreRequest) (*exocortexv1.MemoryRestoreResponse, error) {
	c, err := g.writeByID(ctx, "Restore", req.GetId())
	if err != nil {
		return nil, err
	}
	req.Source = g.source(req.GetSource())
	return c.Restore(ctx, req)
}

func (g *memoryGate) Delete(ctx context.Context, req *exocortexv1.MemoryDeleteRequest) (*exocortexv1.MemoryDeleteResponse, error) {
	c, err := g.writeByID(ctx, "Delete", req.GetId())
	if err != nil {
		return nil, err
	}
	req.Source = g.source(req.GetSource())
	return c.Delete(ctx, req)
}

func (g *memoryGate) Merge(ctx context.Context, req *exocortexv1.MemoryMergeRequest) (*exocortexv1.MemoryMergeResponse, error) {
	c, err := g.writeByID(ctx, "Merge", append([]string{req.GetInto()}, req.GetFrom()...)...)
	if err != nil {
		return nil, err
	}
	req.Source = g.source(req.GetSource())
	return c.Merge(ctx, req)
}

// Forget deletes what a query matches, in whatever area: it needs "*".
func (g *memoryGate) Forget(ctx context.Context, req *exocortexv1.MemoryForgetRequest) (*exocortexv1.MemoryForgetResponse, error) {
	c, err := g.client(ctx, "Forget")
	if err != nil {
		return nil, err
	}
	if err := g.mayWrite("Forget", anyArea); err != nil {
		return nil, err
	}
	req.Source = g.source(req.GetSource())
	return c.Forget(ctx, req)
}

func (g *memoryGate) ToolSave(ctx context.Context, req *exocortexv1.MemoryToolSaveRequest) (*exocortexv1.MemoryToolResponse, error) {
	c, err := g.client(ctx, "ToolSave")
	if err != nil {
		return nil, err
	}
	if err := g.mayWrite("ToolSave", areaMain); err != nil {
		return nil, err
	}
	req.Source = g.source(req.GetSource())
	return c.ToolSave(ctx, req)
}

func (g *memoryGate) ToolDelete(ctx context.Context, req *exocortexv1.MemoryToolDeleteRequest) (*exocortexv1.MemoryToolResponse, error) {
	c, err := g.client(ctx, "ToolDelete")
	if err != nil {
		return nil, err
	}
	if err := g.mayWrite("ToolDelete", areaMain); err != nil {
		return nil, err
	}
	req.Source = g.source(req.GetSource())
	return c.ToolDelete(ctx, req)
}

func (g *memoryGate) ToolForget(ctx context.Context, req *exocortexv1.MemoryToolForgetRequest) (*exocortexv1.MemoryToolResponse, error) {
	c, err := g.client(ctx, "ToolForget")
	if err != nil {
		return nil, err
	}
	if err := g.mayWrite("ToolForget", anyArea); err != nil {
		return nil, err
	}
	req.Source = g.source(req.GetSource())
	return c.ToolForget(ctx, req)
}

// Append writes journal entries as they are. From a plugin, an upsert is a
// write of the area its payload names, an access needs uses_memory only, an
// archive, restore or delete is a write of its record's area, and anything
// else (a merge, a batch process's checkpoint) needs "*".
func (g *memoryGate) Append(ctx context.Context, req *exocortexv1.MemoryAppendRequest) (*exocortexv1.MemoryAppendResponse, error) {
	c, err := g.client(ctx, "Append")
	if err != nil {
		return nil, err
	}
	for i, e := range req.GetEntries() {
		var p struct {
			ID   string `json:"id"`
			Area string `json:"area"`
		}
		if err := json.Unmarshal(e.GetPayload(), &p); err != nil {
			return nil, status.Errorf(codes.InvalidArgument, "plugin %s: memory Append entry %d (%s): the payload is not a JSON object: %v", g.plugin, i+1, e.GetKind(), err)
		}
		switch e.GetKind() {
		case kindUpsert:
			err = g.mayWrite("Append", p.Area)
		case kindAccess:
		case kindArchive, kindRestore, kindDelete:
			_, err = g.writeByID(ctx, "Append", p.ID)
		default:
			err = g.mayWrite("Append "+e.GetKind(), anyArea)
		}
		if err != nil {
			return nil, err
		}
	}
	return c.Append(ctx, req)
}

// Streams.

func (g *memoryGate) List(req *exocortexv1.MemoryListRequest, stream grpc.ServerStreamingServer[exocortexv1.MemoryListResponse]) error {
	c, err := g.client(stream.Context(), "List")
	if err != nil {
		return err
	}
	in, err := c.List(stream.Context(), req)
	if err != nil {
		return err
	}
	return forward(in, stream)
}

func (g *memoryGate) Watch(req *exocortexv1.MemoryWatchRequest, stream grpc.ServerStreamingServer[exocortexv1.MemoryWatchResponse]) error {
	c, err := g.client(stream.Context(), "Watch")
	if err != nil {
		return err
	}
	in, err := c.Watch(stream.Context(), req)
	if err != nil {
		return err
	}
	return forward(in, stream)
}

func (g *memoryGate) Export(req *exocortexv1.MemoryExportRequest, stream grpc.ServerStreamingServer[exocortexv1.MemoryExportResponse]) error {
	c, err := g.client(stream.Context(), "Export")
	if err != nil {
		return err
	}
	in, err := c.Export(stream.Context(), req)
	if err != nil {
		return err
	}
	return forward(in, stream)
}

// Import writes whatever the file holds: it needs "*".
func (g *memoryGate) Import(stream grpc.BidiStreamingServer[exocortexv1.MemoryImportRequest, exocortexv1.MemoryImportResponse]) error {
	ctx := stream.Context()
	c, err := g.client(ctx, "Import")
	if err != nil {
		return err
	}
	if err := g.mayWrite("Import", anyArea); err != nil {
		return err
	}
	out, err := c.Import(ctx)
	if err != nil {
		return err
	}
	sent := make(chan error, 1)
	go func() {
		for {
			m, err := stream.Recv()
			if errors.Is(err, io.EOF) {
				sent <- out.CloseSend()
				return
			}
			if err != nil {
				sent <- err
				return
			}
			if m.GetSource() != nil {
				m.Source = g.source(m.GetSource())
			}
			if err := out.Send(m); err != nil {
				sent <- err
				return
			}
		}
	}()
	if err := forward(out, stream); err != nil {
		return err
	}
	return <-sent
}

// forward copies a stream of the memory service to the plugin's.
func forward[T any](in interface{ Recv() (*T, error) }, out interface{ Send(*T) error }) error {
	for {
		m, err := in.Recv()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if err := out.Send(m); err != nil {
			return err
		}
	}
}

// UseMemory runs a memory tool for the plugin (Services.UseMemory) under the
// same rules as its direct memory calls: the plugin declares uses_memory, and
// the tool's writes stay in its memory_write_areas (memory_save and
// memory_delete write the area their arguments name, main by default;
// memory_forget may reach any area). The tool itself runs in the plugin that
// serves it, with that plugin's declarations.
func (ps *pluginServices) UseMemory(ctx context.Context, req *exocortexv1.UseMemoryRequest) (*exocortexv1.UseMemoryResponse, error) {
	g := &memoryGate{s: ps.Services, plugin: ps.p.Name(), manifest: ps.p.Manifest}
	if err := g.useMemory(req); err != nil {
		return nil, err
	}
	return ps.Services.UseMemory(ctx, req)
}

// useMemory checks a UseMemory request against the plugin's declarations.
func (g *memoryGate) useMemory(req *exocortexv1.UseMemoryRequest) error {
	rpc := "UseMemory " + req.GetTool()
	if err := g.declared(rpc); err != nil {
		return err
	}
	var args struct {
		Area string `json:"area"`
	}
	_ = json.Unmarshal([]byte(req.GetArgsJson()), &args) // the tool reports bad arguments itself
	switch req.GetTool() {
	case "memory_save", "memory_delete":
		return g.mayWrite(rpc, strings.TrimSpace(args.Area))
	case "memory_forget":
		return g.mayWrite(rpc, anyArea)
	}
	return nil
}
