package mcpserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"google.golang.org/grpc/status"

	exocortexv1 "github.com/exocortex/exocortex/proto/exocortex/v1"
)

// source is how the server's writes are attributed in the journal.
var source = &exocortexv1.MemorySource{Source: "mcp"}

// SearchIn is search_memory's input.
type SearchIn struct {
	Query string   `json:"query" jsonschema:"what to look for, in words"`
	K     int      `json:"k,omitempty" jsonschema:"most hits to return, 1 to 100 (default 10)"`
	Area  string   `json:"area,omitempty" jsonschema:"only this memory area (main, fragments, solutions, library, ...)"`
	Tags  []string `json:"tags,omitempty" jsonschema:"only records carrying every one of these tags"`
}

// Hit is one search hit.
type Hit struct {
	ID    string   `json:"id"`
	URI   string   `json:"uri"`
	Area  string   `json:"area"`
	Key   string   `json:"key,omitempty"`
	Text  string   `json:"text"`
	Tags  []string `json:"tags,omitempty"`
	Score float64  `json:"score"`
	Match float64  `json:"match" jsonschema:"the hit's match against the best hit, 0 to 1"`
	Why   string   `json:"why" jsonschema:"why the hit matched, in words"`
}

// SearchOut is search_memory's output.
type SearchOut struct {
	Query  string `json:"query"`
	Mode   string `json:"mode"`
	Notice string `json:"notice,omitempty"`
	Hits   []Hit  `json:"hits"`
}

// CompileIn is compile_memory's input.
type CompileIn struct {
	Query       string `json:"query" jsonschema:"the message the agent would be answering"`
	TokenBudget int    `json:"token_budget,omitempty" jsonschema:"most tokens the block may take (default 1000)"`
}

// CompileOut is compile_memory's output.
type CompileOut struct {
	Block   string `json:"block" jsonschema:"the memory block the agent would receive"`
	Tokens  int    `json:"tokens"`
	Hits    []Hit  `json:"hits"`
	Dropped int    `json:"dropped" jsonschema:"hits left out by the budget"`
	Notice  string `json:"notice,omitempty"`
}

// WhyIn is why's input.
type WhyIn struct {
	ID string `json:"id" jsonschema:"the record's id (from search_memory or a resource URI)"`
}

// Record is a memory record.
type Record struct {
	ID           string         `json:"id"`
	Area         string         `json:"area"`
	Key          string         `json:"key,omitempty"`
	Text         string         `json:"text"`
	Tags         []string       `json:"tags,omitempty"`
	Metadata     map[string]any `json:"metadata,omitempty"`
	Status       string         `json:"status"`
	SupersededBy string         `json:"superseded_by,omitempty"`
	Created      time.Time      `json:"created"`
	Updated      time.Time      `json:"updated"`
	AccessCount  int64          `json:"access_count"`
	Importance   float64        `json:"importance"`
}

// Provenance says who wrote a record and where it is in the journal.
type Provenance struct {
	Session    string `json:"session,omitempty"`
	Message    string `json:"message,omitempty"`
	Source     string `json:"source,omitempty"`
	Seq        uint64 `json:"seq"`
	UpdatedSeq uint64 `json:"updated_seq"`
}

// Event is one journal event of a record's history.
type Event struct {
	Seq     uint64    `json:"seq"`
	Time    time.Time `json:"time"`
	Kind    string    `json:"kind"`
	Session string    `json:"session,omitempty"`
	Summary string    `json:"summary"`
}

// WhyOut is why's output.
type WhyOut struct {
	ID         string      `json:"id"`
	Exists     bool        `json:"exists" jsonschema:"false once the record is deleted (its history stays)"`
	Record     *Record     `json:"record,omitempty"`
	Provenance *Provenance `json:"provenance,omitempty"`
	History    []Event     `json:"history"`
}

// SaveIn is ECHOMEN's memory_save input.
type SaveIn struct {
	Key   string   `json:"key" jsonschema:"a unique identifier for the memory item, e.g. user_project_goals"`
	Value string   `json:"value" jsonschema:"the content to store (text or a JSON string)"`
	Tags  []string `json:"tags,omitempty" jsonschema:"categories, e.g. [project, config, user_pref]"`
}

// RetrieveIn is ECHOMEN's memory_retrieve input: key or tags.
type RetrieveIn struct {
	Key  string   `json:"key,omitempty" jsonschema:"the unique identifier of the memory item to retrieve"`
	Tags []string `json:"tags,omitempty" jsonschema:"tags to search for; give key or tags"`
}

// DeleteIn is ECHOMEN's memory_delete input.
type DeleteIn struct {
	Key string `json:"key" jsonschema:"the unique identifier of the memory item to delete"`
}

// TextOut is the output of the tools that answer a string (ECHOMEN's).
type TextOut struct {
	Result string `json:"result" jsonschema:"the tool's answer, as ECHOMEN's tool returns it"`
}

func (s *Server) addTools(srv *mcp.Server, writes bool) {
	mcp.AddTool(srv, &mcp.Tool{Name: "search_memory", Title: "Search memory",
		Description: "Search Exocortex's long-term memory (BM25 and vectors); every hit says why it matched.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, s.searchMemory)
	mcp.AddTool(srv, &mcp.Tool{Name: "compile_memory", Title: "Compile memory",
		Description: "The memory block the agent would receive for a query, within a token budget.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, s.compileMemory)
	mcp.AddTool(srv, &mcp.Tool{Name: "why", Title: "Why this memory",
		Description: "A record's provenance (who wrote it, in which session) and its history in the journal.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, s.why)
	mcp.AddTool(srv, &mcp.Tool{Name: "memory_retrieve",
		Description: "Retrieves a memory item based on its key or a set of tags.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, s.memoryRetrieve)
	mcp.AddTool(srv, &mcp.Tool{Name: "wiring", Title: "Wiring",
		Description: "The current wiring: plugins, the extensions at each hook in firing order, the shared-state keys and who reads and writes them, the tools.",
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}}, s.wiringTool)
	if writes {
		mcp.AddTool(srv, &mcp.Tool{Name: "memory_save",
			Description: "Stores a piece of structured information or a key-value pair into the agent's long-term memory."}, s.memorySave)
		mcp.AddTool(srv, &mcp.Tool{Name: "memory_delete",
			Description: "Deletes a memory item based on its key.",
			Annotations: &mcp.ToolAnnotations{DestructiveHint: ptr(true)}}, s.memoryDelete)
	}
	if s.opts.Agent != nil {
		s.addAgentTools(srv)
	}
}

func ptr[T any](v T) *T { return &v }

// plain is a memory service error without gRPC's prefix, wrapped with the
// tool's name.
func plain(tool string, err error) error {
	if st, ok := status.FromError(err); ok {
		return fmt.Errorf("%s: %s", tool, st.Message())
	}
	return fmt.Errorf("%s: %w", tool, err)
}

// Invalid is a bad argument, naming the field.
type Invalid struct {
	Tool, Field, Problem string
}

func (e *Invalid) Error() string { return fmt.Sprintf("%s: %q %s", e.Tool, e.Field, e.Problem) }

func (s *Server) searchMemory(ctx context.Context, _ *mcp.CallToolRequest, in SearchIn) (*mcp.CallToolResult, SearchOut, error) {
	q := strings.TrimSpace(in.Query)
	if q == "" {
		return nil, SearchOut{}, &Invalid{"search_memory", "query", "is empty: say what to look for"}
	}
	k := in.K
	if k == 0 {
		k = 10
	}
	if k < 1 || k > 100 {
		return nil, SearchOut{}, &Invalid{"search_memory", "k", fmt.Sprintf("is %d: give 1 to 100", in.K)}
	}
	f := &exocortexv1.MemoryFilter{Tags: in.Tags}
	if in.Area != "" {
		f.Areas = []string{in.Area}
	}
	res, err := s.opts.Memory.Search(ctx, &exocortexv1.MemorySearchRequest{Query: q,
		Options: &exocortexv1.MemorySearchOptions{Limit: int32(k), Filter: f, Source: source}})
	if err != nil {
		return nil, SearchOut{}, plain("search_memory", err)
	}
	out := SearchOut{Query: q, Mode: res.GetMode(), Notice: res.GetNotice(), Hits: hits(res.GetHits())}
	var b strings.Builder
	fmt.Fprintf(&b, "%d hit(s) for %q (%s)", len(out.Hits), q, out.Mode)
	if out.Notice != "" {
		fmt.Fprintf(&b, "; %s", out.Notice)
	}
	for i, h := range out.Hits {
		fmt.Fprintf(&b, "\n\n%d. [%s] %s (area %s, score %.3f)\n   why: %s", i+1, h.ID, oneLine(h.Text, 300), h.Area, h.Score, h.Why)
	}
	r, err := s.result("search_memory", b.String(), out)
	return r, out, err
}

func (s *Server) compileMemory(ctx context.Context, _ *mcp.CallToolRequest, in CompileIn) (*mcp.CallToolResult, CompileOut, error) {
	q := strings.TrimSpace(in.Query)
	if q == "" {
		return nil, CompileOut{}, &Invalid{"compile_memory", "query", "is empty: give the message the agent would answer"}
	}
	budget := in.TokenBudget
	if budget == 0 {
		budget = 1000
	}
	if budget < 1 {
		return nil, CompileOut{}, &Invalid{"compile_memory", "token_budget", fmt.Sprintf("is %d: give a number of tokens above 0", in.TokenBudget)}
	}
	res, err := s.opts.Memory.Compile(ctx, &exocortexv1.MemoryCompileRequest{Query: q, TokenBudget: int32(budget),
		Options: &exocortexv1.MemorySearchOptions{Source: source}})
	if err != nil {
		return nil, CompileOut{}, plain("compile_memory", err)
	}
	out := CompileOut{Block: res.GetBlock(), Tokens: int(res.GetTokens()), Hits: hits(res.GetHits()), Dropped: int(res.GetDropped()), Notice: res.GetNotice()}
	text := out.Block
	if text == "" {
		text = fmt.Sprintf("No memory for %q: the agent would receive no memory block.", q)
	}
	r, err := s.result("compile_memory", text, out)
	return r, out, err
}

func (s *Server) why(ctx context.Context, _ *mcp.CallToolRequest, in WhyIn) (*mcp.CallToolResult, WhyOut, error) {
	id := strings.TrimPrefix(strings.TrimSpace(in.ID), MemoryURIPrefix)
	if id == "" {
		return nil, WhyOut{}, &Invalid{"why", "id", "is empty: give a record id from search_memory"}
	}
	res, err := s.opts.Memory.History(ctx, &exocortexv1.MemoryHistoryRequest{Id: id})
	if err != nil {
		return nil, WhyOut{}, plain("why", err)
	}
	if len(res.GetEntries()) == 0 && res.GetRecord() == nil {
		return nil, WhyOut{}, &Invalid{"why", "id", fmt.Sprintf("%s: no record has this id, and the journal has no event for it: search_memory lists ids", id)}
	}
	out := WhyOut{ID: id, History: []Event{}}
	if r := res.GetRecord(); r != nil {
		out.Exists, out.Record = true, record(r)
		p := r.GetProvenance()
		out.Provenance = &Provenance{Session: p.GetSession(), Message: p.GetMessage(), Source: p.GetSource(), Seq: p.GetSeq(), UpdatedSeq: p.GetUpdatedSeq()}
	}
	var b strings.Builder
	if out.Exists {
		fmt.Fprintf(&b, "%s (area %s, %s): %s\nwritten by %s", id, out.Record.Area, out.Record.Status, oneLine(out.Record.Text, 300), orDash(out.Provenance.Source))
		if out.Provenance.Session != "" {
			fmt.Fprintf(&b, " in session %s", out.Provenance.Session)
		}
		fmt.Fprintf(&b, " (journal seq %d, last changed at %d)", out.Provenance.Seq, out.Provenance.UpdatedSeq)
	} else {
		fmt.Fprintf(&b, "%s no longer exists; its history:", id)
	}
	for _, e := range res.GetEntries() {
		ev := e.GetEvent()
		out.History = append(out.History, Event{Seq: ev.GetSeq(), Time: ev.GetTs().AsTime().UTC(), Kind: ev.GetKind(), Session: ev.GetSession(), Summary: e.GetSummary()})
		fmt.Fprintf(&b, "\n  #%d %s %s", ev.GetSeq(), ev.GetTs().AsTime().UTC().Format(time.RFC3339), e.GetSummary())
	}
	r, err := s.result("why", b.String(), out)
	return r, out, err
}

func (s *Server) memorySave(ctx context.Context, _ *mcp.CallToolRequest, in SaveIn) (*mcp.CallToolResult, TextOut, error) {
	r, err := s.opts.Memory.ToolSave(ctx, &exocortexv1.MemoryToolSaveRequest{Key: in.Key, Value: in.Value, Tags: in.Tags, Source: source})
	return s.text("memory_save", r, err)
}

func (s *Server) memoryRetrieve(ctx context.Context, _ *mcp.CallToolRequest, in RetrieveIn) (*mcp.CallToolResult, TextOut, error) {
	r, err := s.opts.Memory.ToolRetrieve(ctx, &exocortexv1.MemoryToolRetrieveRequest{Key: in.Key, Tags: in.Tags})
	return s.text("memory_retrieve", r, err)
}

func (s *Server) memoryDelete(ctx context.Context, _ *mcp.CallToolRequest, in DeleteIn) (*mcp.CallToolResult, TextOut, error) {
	r, err := s.opts.Memory.ToolDelete(ctx, &exocortexv1.MemoryToolDeleteRequest{Key: in.Key, Source: source})
	return s.text("memory_delete", r, err)
}

// text answers an ECHOMEN tool: the memory service's string, exactly.
func (s *Server) text(tool string, r *exocortexv1.MemoryToolResponse, err error) (*mcp.CallToolResult, TextOut, error) {
	if err != nil {
		var inv *Invalid
		if errors.As(err, &inv) {
			return nil, TextOut{}, err
		}
		return nil, TextOut{}, plain(tool, err)
	}
	out := TextOut{Result: r.GetText()}
	res, err := s.result(tool, out.Result, out)
	return res, out, err
}

func hits(hs []*exocortexv1.MemoryHit) []Hit {
	out := make([]Hit, 0, len(hs))
	for _, h := range hs {
		r := h.GetRecord()
		out = append(out, Hit{ID: r.GetId(), URI: MemoryURIPrefix + r.GetId(), Area: r.GetArea(), Key: r.GetKey(), Text: r.GetText(),
			Tags: r.GetTags(), Score: h.GetScore(), Match: h.GetMatch(), Why: h.GetWhy()})
	}
	return out
}

func record(r *exocortexv1.MemoryRecord) *Record {
	return &Record{ID: r.GetId(), Area: r.GetArea(), Key: r.GetKey(), Text: r.GetText(), Tags: r.GetTags(),
		Metadata: r.GetMetadata().AsMap(), Status: r.GetStatus(), SupersededBy: r.GetSupersededBy(),
		Created: r.GetCreated().AsTime().UTC(), Updated: r.GetUpdated().AsTime().UTC(), AccessCount: r.GetAccessCount(), Importance: r.GetImportance()}
}

// oneLine is s on one line, cut to about n bytes for the text summary (the
// structured output has it whole).
func oneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		cut := n
		for cut > 0 && s[cut]&0xC0 == 0x80 {
			cut--
		}
		s = s[:cut] + "…"
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
